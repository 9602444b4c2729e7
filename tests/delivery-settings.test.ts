/**
 * The delivery plugin's settings (issue 31; protocol.md 交付插件, 读取设置): `ops/delivery.json` read with real git
 * from the main commit a round reviews against, never from the pull request, read again at a main that moved; every
 * wrong field is an error naming it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseSettings, settingsAt, settingsBytesMax, SettingsError } from "../plugins/delivery/settings.js";
import { healthUrlAllowed } from "../plugins/delivery/project.js";
import { commit, initBare, setBranch } from "./github-fake-git.js";
import { tempDir } from "./helpers.js";

const root = tempDir("aa-delivery-settings-");
after(() => rmSync(root, { recursive: true, force: true }));
const en = { lang: "en" as const };

test("only checks is required; the defaults are agent-review, Ship, no health, 30 minutes and Markdown as internal docs", () => {
  assert.deepEqual(parseSettings(JSON.stringify({ checks: { workflow: "CI", jobs: ["check"] } }), en), {
    checks: { workflow: "CI", jobs: ["check"] },
    review: { status: "agent-review", command: null, guide: null },
    ship: { workflow: "Ship" },
    health: null,
    trackMinutes: 30,
    internalDocs: ["**/*.md", "docs/**"],
  });
  const full = {
    checks: { workflow: "CI", jobs: ["check", "lint"] },
    review: { status: "review/agent", command: ["my-reviewer", "--strict"], guide: "docs/review.md" },
    ship: { workflow: "Release" }, health: { url: "https://app.example.com/health", field: "commit" }, trackMinutes: 45,
    internalDocs: ["handbook/**"],
  };
  assert.deepEqual(parseSettings(JSON.stringify(full), en), full);
});

test("a wrong field is an error naming it, in the reader's language", () => {
  const wrong = (v: unknown, lang: "en" | "zh" = "en") => {
    try {
      parseSettings(typeof v === "string" ? v : JSON.stringify(v), { lang });
    } catch (e) {
      assert.ok(e instanceof SettingsError, String(e));
      return e.message;
    }
    return "accepted";
  };
  const checks = { workflow: "CI", jobs: ["check"] };
  assert.equal(wrong({}), "ops/delivery.json: checks: required");
  assert.equal(wrong({ checks, extra: 1 }), "ops/delivery.json: extra: unknown field");
  assert.equal(wrong({ checks: { ...checks, job: ["x"] } }), "ops/delivery.json: checks.job: unknown field");
  assert.equal(wrong({ checks: { workflow: "CI", jobs: [] } }), "ops/delivery.json: checks.jobs: at least 1 items");
  assert.equal(wrong({ checks: { workflow: "CI", jobs: ["ok", 3] } }), "ops/delivery.json: checks.jobs[1]: must be string");
  assert.equal(wrong({ checks, review: { status: 7 } }), "ops/delivery.json: review.status: must be string");
  assert.equal(wrong({ checks, review: { status: "" } }), "ops/delivery.json: review.status: must not be empty");
  assert.equal(wrong({ checks, review: { status: "a\u202eb" } }), "ops/delivery.json: review.status: wrong format, expected no control characters");
  assert.equal(wrong({ checks, review: { guide: "../secrets" } }), "ops/delivery.json: review.guide: invalid");
  assert.equal(wrong({ checks, trackMinutes: 0 }), "ops/delivery.json: trackMinutes: out of range");
  assert.equal(wrong({ checks, trackMinutes: 1.5 }), "ops/delivery.json: trackMinutes: must be integer");
  assert.equal(wrong({ checks, internalDocs: "docs/**" }), "ops/delivery.json: internalDocs: must be array");
  assert.equal(wrong({ checks, internalDocs: ["docs/**", ""] }), "ops/delivery.json: internalDocs[1]: must not be empty");
  assert.equal(wrong({ checks, health: { url: "http://app.example.com/health" } }), "ops/delivery.json: health.url: wrong format, expected an HTTPS address (http://127.0.0.1 only with --test-local-health)");
  assert.equal(wrong("{ not json"), "ops/delivery.json: not JSON (not valid JSON at line 1, column 3)");
  assert.equal(wrong("x".repeat(settingsBytesMax + 1)), `ops/delivery.json: larger than ${settingsBytesMax} bytes`);
  assert.equal(wrong({ checks, review: { status: 7 } }, "zh"), "ops/delivery.json: review.status：应为 string");
});

test("health URLs are HTTPS only; --test-local-health allows exactly http://127.0.0.1", () => {
  assert.equal(healthUrlAllowed("https://app.example.com/health", false), true);
  assert.equal(healthUrlAllowed("http://127.0.0.1:8080/health", false), false);
  assert.equal(healthUrlAllowed("http://127.0.0.1:8080/health", true), true);
  assert.equal(healthUrlAllowed("http://localhost:8080/health", true), false);
  assert.equal(healthUrlAllowed("http://127.0.0.2/health", true), false);
  assert.equal(healthUrlAllowed("http://app.example.com/health", true), false);
  assert.equal(healthUrlAllowed("https://user:pw@app.example.com/health", false), false);
  const s = parseSettings(JSON.stringify({ checks: { workflow: "CI", jobs: ["c"] }, health: { url: "http://127.0.0.1:9/h" } }), { lang: "en", testLocalHealth: true });
  assert.deepEqual(s.health, { url: "http://127.0.0.1:9/h", field: "version" });
});

test("the settings are read from the reviewed main commit with real git, never from the pull request; a moved main is read anew", () => {
  const dir = join(root, "app.git");
  initBare(dir);
  const settings = (workflow: string) => JSON.stringify({ checks: { workflow, jobs: ["check"] } });
  const main1 = commit(dir, [], { "ops/delivery.json": settings("CI"), "README.md": "hi\n" }, "first");
  setBranch(dir, "main", main1);
  // the pull request changes the settings to pass its own checks: the round must not see that
  const head = commit(dir, [main1], { "ops/delivery.json": settings("Anything"), "src/a.ts": "1\n" }, "feature");
  setBranch(dir, "feature", head);
  assert.equal(settingsAt(dir, main1, en).checks.workflow, "CI");
  const main2 = commit(dir, [main1], { "ops/delivery.json": settings("CI-2") }, "main moves");
  setBranch(dir, "main", main2);
  assert.equal(settingsAt(dir, main2, en).checks.workflow, "CI-2");
  assert.equal(settingsAt(dir, main1, en).checks.workflow, "CI");
  const bare = commit(dir, [], { "README.md": "none\n" }, "no settings");
  assert.throws(() => settingsAt(dir, bare, en), (e: Error) => e instanceof SettingsError && e.message === `ops/delivery.json: not in main's commit ${bare}`);
  assert.throws(() => settingsAt(dir, "main", en), /^Error: not a commit SHA: "main"$/);
});
