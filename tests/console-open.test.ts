/**
 * Issue 26 round 11, F2: `agent-autoloop console` opened the sign-in link with `xdg-open <link>`, so the one-time
 * token in its fragment was on xdg-open's (and then the browser's) command line, which every local user reads in
 * /proc/<pid>/cmdline — another user redeemed it first and took the owner's console session. The browser is now handed
 * a file:// address of a page only the owner can read (0600, in a 0700 folder of the home) that carries the link on;
 * the hub deletes the page when its token is used, and each opening deletes those whose token has expired. The real
 * CLI in a terminal (`script`), a recording `xdg-open` on PATH, a real hub and headless Chromium on the page.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { engine, makeHome, serveProcess, tempDir, until } from "./helpers.js";
import { browserMissing, launch } from "./console-kit.js";

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** A folder with an `xdg-open` that writes its arguments (NUL-separated) to `argv` and exits. */
function fakeOpener(): { bin: string; argv: string } {
  const bin = tempDir("aa-fake-open-");
  const argv = join(bin, "argv");
  writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\0' "$@" > '${argv}.part'\nmv '${argv}.part' '${argv}'\n`);
  chmodSync(join(bin, "xdg-open"), 0o755);
  return { bin, argv };
}

/** Runs `agent-autoloop console` in a terminal (`script`: stdout a TTY) with a display set; its output, \r dropped. */
function consoleInTerminal(home: string, bin: string): Promise<{ code: number; out: string }> {
  const command = `'${process.execPath}' '${join(engine, "bin", "agent-autoloop.js")}' console`;
  // No CI: the CLI opens nothing there.
  const { CI: _ci, ...rest } = process.env;
  const env = { ...rest, AGENT_AUTOLOOP_HOME: home, AGENT_AUTOLOOP_LANG: "en", DISPLAY: ":99", WAYLAND_DISPLAY: "", PATH: `${bin}${delimiter}${process.env.PATH}` };
  return new Promise((resolve) => {
    execFile("script", ["-qec", command, "/dev/null"], { env }, (e, stdout, stderr) =>
      resolve({ code: e ? (e as { code?: number }).code ?? 1 : 0, out: (stdout + stderr).replace(/\r/g, "") }));
  });
}

test("issue 26 r11 F2 (reported case): `console` hands the browser a file only the owner reads, never the sign-in token; the page signs in, and is gone once used", { skip: browserMissing() ?? false }, async () => {
  const made = makeHome();
  const serve = await serveProcess(made.dir);
  const opener = fakeOpener();
  cleanup.push(async () => {
    await serve.stop();
    rmSync(made.dir, { recursive: true, force: true });
    rmSync(opener.bin, { recursive: true, force: true });
  });
  // A page left from an earlier opening whose token has expired (5 minutes) goes with this opening.
  const pages = join(made.dir, "console-links");
  mkdirSync(pages, { mode: 0o700 });
  const stale = join(pages, `sign-in-${"0".repeat(32)}.html`);
  writeFileSync(stale, "old", { mode: 0o600 });
  utimesSync(stale, new Date(Date.now() - 6 * 60_000), new Date(Date.now() - 6 * 60_000));

  const printed = await consoleInTerminal(made.dir, opener.bin);
  assert.equal(printed.code, 0, printed.out);
  const m = /(http:\/\/127\.0\.0\.1:\d+\/console\/#sign-in=([A-Za-z0-9_-]{43}))/.exec(printed.out);
  assert.ok(m, printed.out);
  const [link, token] = [m[1]!, m[2]!];
  await until(() => existsSync(opener.argv), 10_000);
  const argv = readFileSync(opener.argv, "utf8").split("\0").filter(Boolean);
  assert.deepEqual(argv.filter((a) => a.includes(token)), [], "the token is on no command line");
  assert.equal(argv.length, 1);
  assert.match(argv[0]!, /^file:\/\/\/.*\/console-links\/sign-in-[0-9a-f]{32}\.html$/);
  const page = fileURLToPath(argv[0]!);
  assert.deepEqual([statSync(pages).mode & 0o777, statSync(page).mode & 0o777], [0o700, 0o600]);
  assert.ok(readFileSync(page, "utf8").includes(link), "the page carries the link on");
  assert.deepEqual(readdirSync(pages), [page.slice(pages.length + 1)], "the expired page is gone");

  // A browser given that address ends signed in to the console, and the page is deleted once its token is used.
  const browser = await launch();
  cleanup.push(() => browser.close());
  const context = await browser.newContext({ locale: "en-US", timezoneId: "UTC" });
  const tab = await context.newPage();
  await tab.goto(argv[0]!);
  await tab.waitForSelector("nav a[aria-current=page]");
  assert.equal(tab.url().startsWith(`${serve.url}/console/`), true, tab.url());
  assert.equal(tab.url().includes(token), false, "the token left the address bar");
  await until(() => !existsSync(page), 5_000);
  assert.deepEqual(readdirSync(pages), []);
});
