/**
 * The rule file's checks, one by one (protocol.md 规则): every refusal names its field with the exact text, line and
 * column, and a valid file comes back with every default filled in. Pure: parseRules alone, no hub.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { printParseErrorCode, type ParseErrorCode } from "jsonc-parser";
import { globMatch, anyGlob, isName, isOldKeyName, secretsEnvName, approvalsOf, approvalWaitSecondsOf, ruleTools, anySource, intentSource, type Rules } from "../src/kernel/rules.js";
import { parseRules, jsonSyntaxText } from "../src/protocol/rules-file.js";

const S = { s: {} };
const A = { a: { worker: "w", use: "x" } };
/** A file with source s, agent a and one rule r (s → a) with `r` merged in. */
const R = (r: object) => ({ sources: S, agents: A, rules: [{ name: "r", when: { source: "s" }, to: "a", ...r }] });
/** A file with source s, agent a and one elsewhere task t with `e` merged in. */
const E = (e: object) => ({ sources: S, agents: A, elsewhere: [{ name: "t", ...e }] });

/** [file (text, or a value written as one line of JSON), error, line, column] */
const refusals: [unknown, string, number, number][] = [
  ["[]", ": the file must hold one JSON object", 1, 1],
  ["\"\"", ": the file must hold one JSON object", 1, 1],
  ["", "JSON: a value expected", 1, 1],
  [{ bogus: 1 }, "bogus: unknown field (known: $schema, timezone, askFirst, sources, agents, channels, rules, elsewhere, approvals, approvalWaitSeconds)", 1, 10],
  [{ timezone: 5 }, "timezone: must be a string", 1, 13],
  [{ askFirst: "x" }, "askFirst: must be an array of strings", 1, 13],
  [{ askFirst: [""] }, "askFirst[0]: must not be empty", 1, 14],
  [{ askFirst: [5] }, "askFirst[0]: must be a string", 1, 14],
  [{ sources: [] }, "sources: must be an object", 1, 12],
  [{ sources: { "bad name": {} } }, "sources.bad name: names use letters, digits, _ . - (at most 100)", 1, 24],
  [{ sources: { elsewhere: {} } }, "sources.elsewhere: \"elsewhere\" is the source of elsewhere tasks and cannot be declared", 1, 25],
  [{ sources: { s: 1 } }, "sources.s: must be an object", 1, 17],
  [{ sources: { s: { x: 1 } } }, "sources.s.x: unknown field (known: name, adapter)", 1, 22],
  [{ sources: { s: { adapter: "Bad" } } }, "sources.s.adapter: plugin names use a-z, 0-9 and -", 1, 28],
  [{ sources: { s: { name: "n".repeat(101) } } }, "sources.s.name: at most 100 characters", 1, 25],
  [{ agents: [] }, "agents: must be an object", 1, 11],
  [{ agents: { "-a": {} } }, "agents.-a: names use letters, digits, _ . - (at most 100)", 1, 17],
  [{ agents: { a: [] } }, "agents.a: must be an object", 1, 16],
  [{ agents: { a: { x: 1 } } }, "agents.a.x: unknown field (known: name, worker, use, model, effort, access, command, program, sandbox, env, writable, readable, devices, network, loopbackPorts)", 1, 21],
  [{ agents: { a: { worker: "w", use: "x", sandbox: "yes" } } }, "agents.a.sandbox: must be true or false", 1, 50],
  [{ agents: { a: { worker: "w", use: "x", sandbox: 1 } } }, "agents.a.sandbox: must be true or false", 1, 50],
  [{ agents: { a: { worker: "w", use: "x", env: "GH_TOKEN" } } }, "agents.a.env: must be an array of strings", 1, 46],
  [{ agents: { a: { worker: "w", use: "x", env: Array.from({ length: 101 }, (_, i) => `V${i}`) } } }, "agents.a.env: at most 100 names", 1, 46],
  ...["GH-TOKEN", "1A", "*", "GH*", "_*", "1_*", "GH_**", "A B", "É", "A".repeat(101), "C".repeat(100) + "_*", "GH_TOKEN\n"].map((n): [unknown, string, number, number] =>
    [{ agents: { a: { worker: "w", use: "x", env: ["OK", n] } } }, "agents.a.env[1]: a variable name (letters, digits and _, not starting with a digit, at most 100) or a prefix such as GH_*", 1, 52]),
  [{ agents: { a: { worker: "w", use: "x", env: ["AGENT_AUTOLOOP_KEY"] } } }, "agents.a.env[0]: AGENT_AUTOLOOP_ variables never reach agents", 1, 47],
  [{ agents: { a: { worker: "w", use: "x", env: ["AGENT_AUTOLOOP_*"] } } }, "agents.a.env[0]: AGENT_AUTOLOOP_ variables never reach agents", 1, 47],
  // What the sandbox leaves writable and which devices it passes through (issue 26).
  [{ agents: { a: { worker: "w", use: "x", writable: "~/x" } } }, "agents.a.writable: must be an array of strings", 1, 51],
  [{ agents: { a: { worker: "w", use: "x", writable: Array.from({ length: 33 }, (_, i) => `/w${i}`) } } }, "agents.a.writable: at most 32 paths", 1, 51],
  ...["~", "~/", "/", "//", "x", "./x", "~x", "~/../x", "/a/../b", "/a/./b", "/a//b", "~//a", "/a\u0007"].map((w): [unknown, string, number, number] =>
    [{ agents: { a: { worker: "w", use: "x", writable: ["/ok", w] } } }, "agents.a.writable[1]: an absolute path or one starting with ~/ (no . or .. parts, no doubled /), not / or ~ itself", 1, 58]),
  // What more of the home the sandbox shows (issue 26 round 11): the same form.
  ...["~", "/", "x", "~/../x"].map((w): [unknown, string, number, number] =>
    [{ agents: { a: { worker: "w", use: "x", readable: ["/ok", w] } } }, "agents.a.readable[1]: an absolute path or one starting with ~/ (no . or .. parts, no doubled /), not / or ~ itself", 1, 58]),
  [{ agents: { a: { worker: "w", use: "x", devices: "/dev/kvm" } } }, "agents.a.devices: must be an array of strings", 1, 50],
  [{ agents: { a: { worker: "w", use: "x", devices: Array.from({ length: 33 }, () => "/dev/kvm") } } }, "agents.a.devices: at most 32 paths", 1, 50],
  ...["/dev/", "dev/kvm", "/dev/../etc/shadow", "/dev/./kvm", "/dev//kvm", "/dev/dri/", "/sys/kvm"].map((d): [unknown, string, number, number] =>
    [{ agents: { a: { worker: "w", use: "x", devices: ["/dev/kvm", d] } } }, "agents.a.devices[1]: a device path under /dev/ (no . or .. parts, no doubled or trailing /)", 1, 62]),
  ...["/dev", "/dev/sda", "/dev/nvme0n1", "/dev/nvme0", "/dev/mem", "/dev/tty1", "/dev/pts/0", "/dev/console", "/dev/input/event0", "/dev/loop0", "/dev/shm", "/dev/disk/by-id/x", "/dev/dri/by-path/x"].map((d): [unknown, string, number, number] =>
    [{ agents: { a: { worker: "w", use: "x", devices: ["/dev/kvm", d] } } }, "agents.a.devices[1]: not a device a sandbox passes through: only GPUs and accelerators (/dev/nvidia*, /dev/dri, /dev/kfd, /dev/accel), /dev/kvm, /dev/fuse, /dev/net/tun, sound, cameras and USB serial adapters (docs/guide/sandbox.md)", 1, 62]),
  [{ agents: { a: { worker: "w" } } }, "agents.a.use: required", 1, 16],
  [{ agents: { a: { worker: "w", use: "Bad" } } }, "agents.a.use: plugin names use a-z, 0-9 and -", 1, 36],
  [{ agents: { a: { worker: "w", use: "x", command: "ls" } } }, "agents.a.command: must be an array of strings", 1, 50],
  [{ agents: { a: { worker: "w", use: "x", command: [] } } }, "agents.a.command: must not be empty", 1, 50],
  [{ agents: { a: { worker: "w", use: "acp" } } }, "agents.a.command: required for use \"acp\"", 1, 16],
  [{ agents: { a: { use: "x" } } }, "agents.a.worker: required", 1, 16],
  [{ agents: { a: { use: "x", worker: "a b" } } }, "agents.a.worker: names use letters, digits, _ . - (at most 100)", 1, 36],
  [{ agents: { a: { use: "x", worker: "w", model: "m".repeat(201) } } }, "agents.a.model: at most 200 characters", 1, 48],
  [{ agents: { a: { use: "x", worker: "w", effort: "e".repeat(51) } } }, "agents.a.effort: at most 50 characters", 1, 49],
  [{ agents: { a: { use: "x", worker: "w", name: "n".repeat(101) } } }, "agents.a.name: at most 100 characters", 1, 47],
  [{ channels: 1 }, "channels: must be an object", 1, 13],
  [{ channels: { "": {} } }, "channels.: names use letters, digits, _ . - (at most 100)", 1, 17],
  [{ channels: { c: "x" } }, "channels.c: must be an object", 1, 18],
  [{ channels: { c: { y: 1 } } }, "channels.c.y: unknown field (known: name, answerers, links)", 1, 23],
  [{ channels: { c: { links: "yes" } } }, "channels.c.links: must be true or false", 1, 27],
  [{ channels: { c: { answerers: [""] } } }, "channels.c.answerers[0]: must not be empty", 1, 32],
  [{ rules: {} }, "rules: must be an array", 1, 10],
  [{ rules: [1] }, "rules[0]: must be an object", 1, 11],
  [R({ z: 1 }), "rules[0].z: unknown field (known: name, when, to, cwd, skill, prompt, group, parallel, resume, startsPerMinute, tell, emits, channels, budget, tools, use, workflow, promptRef)", 1, 117],
  [{ rules: [{}] }, "rules[0].name: required", 1, 11],
  [R({ name: "" }), "rules[0].name: must not be empty", 1, 78],
  [R({ name: "n".repeat(101) }), "rules[0].name: at most 100 characters", 1, 78],
  [R({ name: "a\nb" }), "rules[0].name: no control characters", 1, 78],
  [R({ when: undefined }), "rules[0].when: required: {\"source\", \"types\"}, {\"intent\"} or {\"cron\"}", 1, 70],
  [R({ when: { x: 1 } }), "rules[0].when.x: unknown field (known: source, types, cron, intent)", 1, 94],
  [R({ when: { source: "s", intent: "no-slash" } }), "rules[0].when.intent: must be <plugin>/<name> (such as example/triage), both parts letters, digits, _ and -", 1, 112],
  [R({ when: { cron: "@daily", intent: "p/i" } }), "rules[0].when.intent: a cron rule has no intent", 1, 115],
  [R({ use: "agent", workflow: "p/w" }), "rules[0].use: a rule's use can only be \"workflow\"", 1, 119],
  [R({ use: "workflow" }), "rules[0].workflow: required", 1, 70],
  [R({ workflow: "p/w" }), "rules[0].use: a rule with workflow needs \"use\": \"workflow\" too", 1, 70],
  [R({ promptRef: "p/../x" }), "rules[0].promptRef: must be <plugin>/<name> (such as example/triage), both parts letters, digits, _ and -", 1, 125],
  [R({ when: { cron: "0 * * * *", types: ["a"] } }), "rules[0].when: a cron rule has no source or types", 1, 89],
  [R({ when: { cron: null } }), "rules[0].when.cron: required", 1, 97],
  [R({ when: {} }), "rules[0].when.source: required (or when.intent: <plugin>/<id>, for events of any source)", 1, 89],
  [R({ when: { types: ["a.*"] } }), "rules[0].when.source: required (or when.intent: <plugin>/<id>, for events of any source)", 1, 89],
  [R({ when: { intent: null } }), "rules[0].when.source: required (or when.intent: <plugin>/<id>, for events of any source)", 1, 89],
  // A rule without `source` is known by the source of its own events, `intent:<plugin>/<id>`: a file cannot name it.
  [R({ when: { source: 5, intent: "p/i" } }), "rules[0].when.source: must be a string", 1, 99],
  [R({ when: { source: "", intent: "p/i" } }), "rules[0].when.source: no source \"\" in sources", 1, 99],
  [R({ when: { source: "intent:p/i", intent: "p/i" } }), "rules[0].when.source: no source \"intent:p/i\" in sources", 1, 99],
  [R({ when: { intent: "p/i/j" } }), "rules[0].when.intent: must be <plugin>/<name> (such as example/triage), both parts letters, digits, _ and -", 1, 99],
  [R({ when: { intent: 7 } }), "rules[0].when.intent: must be a string", 1, 99],
  [R({ when: { intent: "p/i", types: "a" } }), "rules[0].when.types: must be an array of strings", 1, 113],
  [R({ when: { intent: "p/i", types: [""] } }), "rules[0].when.types[0]: must not be empty", 1, 114],
  [R({ when: { source: "s", types: "a" } }), "rules[0].when.types: must be an array of strings", 1, 111],
  [R({ to: undefined }), "rules[0].to: required", 1, 70],
  [R({ to: "zz" }), "rules[0].to: no agent \"zz\" in agents", 1, 109],
  [R({ parallel: 1.5 }), "rules[0].parallel: must be a whole number ≥ 1", 1, 124],
  [R({ parallel: "2" }), "rules[0].parallel: must be a whole number ≥ 1", 1, 124],
  [R({ resume: 1 }), "rules[0].resume: must be true or false", 1, 122],
  [R({ tell: "sometimes" }), "rules[0].tell: must be always, needed or never", 1, 120],
  [R({ emits: [] }), "rules[0].emits: must be {\"source\", \"types\"}", 1, 121],
  [R({ emits: { q: 1 } }), "rules[0].emits.q: unknown field (known: source, types)", 1, 126],
  [R({ emits: {} }), "rules[0].emits.source: required", 1, 121],
  [R({ emits: { source: "zz" } }), "rules[0].emits.source: no source \"zz\" in sources", 1, 131],
  [{ ...R({ channels: ["c", "zz"] }), channels: { c: {} } }, "rules[0].channels[1]: no channel \"zz\" in channels", 1, 129],
  [R({ skill: "s".repeat(201) }), "rules[0].skill: at most 200 characters", 1, 121],
  [R({ group: "g".repeat(101) }), "rules[0].group: at most 100 characters", 1, 121],
  [R({ prompt: "p".repeat(4001) }), "rules[0].prompt: at most 4000 characters", 1, 122],
  [R({ budget: 1 }), "rules[0].budget: must be {\"cost\", \"tokens\", \"per\"}", 1, 122],
  [R({ budget: { cost: 1, x: 1 } }), "rules[0].budget.x: unknown field (known: cost, tokens, per)", 1, 136],
  [R({ budget: { cost: 0 } }), "rules[0].budget.cost: must be a number > 0", 1, 130],
  [R({ budget: { tokens: "5" } }), "rules[0].budget.tokens: must be a number > 0", 1, 132],
  [R({ budget: {} }), "rules[0].budget: needs cost or tokens", 1, 122],
  [R({ budget: { cost: 1, per: "month" } }), "rules[0].budget.per: must be day or week", 1, 138],
  [{ elsewhere: {} }, "elsewhere: must be an array", 1, 14],
  [{ elsewhere: ["x"] }, "elsewhere[0]: must be an object", 1, 15],
  [E({ q: 1 }), "elsewhere[0].q: unknown field (known: name, source, to, cron, where, cwd, skill, prompt)", 1, 90],
  [{ elsewhere: [{}] }, "elsewhere[0].name: required", 1, 15],
  [{ ...R({}), elsewhere: [{ name: "r" }] }, "elsewhere[0].name: a rule or task is already named \"r\"", 1, 136],
  [E({ source: "zz" }), "elsewhere[0].source: no source \"zz\" in sources", 1, 95],
  [E({ to: "zz" }), "elsewhere[0].to: no agent \"zz\" in agents", 1, 91],
  [E({ cwd: "/x" }), "elsewhere[0].to: a task with cwd needs to", 1, 74],
  [E({ cwd: "/x", to: "a" }), "elsewhere[0].cwd: a task with cwd needs skill or prompt", 1, 92],
  [E({ cron: "bad" }), "elsewhere[0].cron: not a cron expression: bad", 1, 93],
  [{ sources: { s: null } }, "sources.s: must be an object", 1, 17],
  [{ sources: { ["s".repeat(101)]: {} } }, `sources.${"s".repeat(101)}: names use letters, digits, _ . - (at most 100)`, 1, 117],
  [{ sources: { "a/b": {} } }, "sources.a/b: names use letters, digits, _ . - (at most 100)", 1, 19],
  [{ sources: { s: { adapter: "ok!" } } }, "sources.s.adapter: plugin names use a-z, 0-9 and -", 1, 28],
  [{ agents: { a: { worker: "w", use: "x y" } } }, "agents.a.use: plugin names use a-z, 0-9 and -", 1, 36],
  [R({ when: { cron: "0 * * * *", source: "s" } }), "rules[0].when: a cron rule has no source or types", 1, 89],
  ['{"sources":{"s":{}},"agents":{"a":{"worker":"w","use":"x"}},"rules":[{"name":"r","when":{"source":"s"},"to":"a","budget":{"cost":1e999}}]}', "rules[0].budget.cost: must be a number > 0", 1, 130],
  [R({ budget: { tokens: -1 } }), "rules[0].budget.tokens: must be a number > 0", 1, 132],
  // Names that are properties of every JavaScript object are names like any other: no such source, agent or channel.
  [R({ when: { source: "constructor" } }), "rules[0].when.source: no source \"constructor\" in sources", 1, 99],
  [R({ to: "toString" }), "rules[0].to: no agent \"toString\" in agents", 1, 109],
  [R({ emits: { source: "valueOf" } }), "rules[0].emits.source: no source \"valueOf\" in sources", 1, 131],
  [R({ channels: ["hasOwnProperty"] }), "rules[0].channels[0]: no channel \"hasOwnProperty\" in channels", 1, 125],
  [E({ source: "isPrototypeOf" }), "elsewhere[0].source: no source \"isPrototypeOf\" in sources", 1, 95],
  [E({ to: "constructor" }), "elsewhere[0].to: no agent \"constructor\" in agents", 1, 91],
  // Every optional text field refuses a value that is not a string, naming itself.
  [{ sources: { s: { adapter: 5 } } }, "sources.s.adapter: must be a string", 1, 28],
  [{ agents: { a: { worker: "w", use: "x", program: 5 } } }, "agents.a.program: must be a string", 1, 50],
  [{ channels: { c: { answerers: "u" } } }, "channels.c.answerers: must be an array of strings", 1, 31],
  [{ channels: { c: { name: "n".repeat(101) } } }, "channels.c.name: at most 100 characters", 1, 26],
  [R({ emits: { source: "s", types: "x" } }), "rules[0].emits.types: must be an array of strings", 1, 143],
  [R({ channels: "c" }), "rules[0].channels: must be an array of strings", 1, 124],
  [R({ cwd: 5 }), "rules[0].cwd: must be a string", 1, 119],
  [E({ source: 5 }), "elsewhere[0].source: must be a string", 1, 95],
  [E({ to: 5 }), "elsewhere[0].to: must be a string", 1, 91],
  [E({ cwd: 5 }), "elsewhere[0].cwd: must be a string", 1, 92],
  [E({ skill: 5 }), "elsewhere[0].skill: must be a string", 1, 94],
  [E({ skill: "s".repeat(201) }), "elsewhere[0].skill: at most 200 characters", 1, 94],
  [E({ prompt: 5 }), "elsewhere[0].prompt: must be a string", 1, 95],
  [E({ cron: 5 }), "elsewhere[0].cron: must be a string", 1, 93],
  [E({ where: 5 }), "elsewhere[0].where: must be a string", 1, 94],
  // Lines and columns of files written over several lines; a text with no value at all.
  ['{\n  "sources": {\n    "s": 1\n  }\n}', "sources.s: must be an object", 3, 10],
  ['{\n  "a": }', "JSON: a value expected", 2, 8],
  ["   ", "JSON: a value expected", 1, 4],
  ["// only a comment\n", "JSON: a value expected", 2, 1],
  ["\n\n  /* c */ ", "JSON: a value expected", 3, 11],
  // A key given twice in one object: the later one would silently win.
  ['{"sources": {"s": {}, "s": {"name": "dup"}}}', "sources.s: given twice", 1, 28],
  ['{"channels": {"c": {}}, "channels": {}}', "channels: given twice", 1, 37],
  ['{"rules": [{"name": "a", "name": "b"}]}', "rules[0].name: given twice", 1, 34],
  ['{"rules": [{"name": "a"}, {"name": "b", "name": "c"}]}', "rules[1].name: given twice", 1, 49],
  // Names used in URLs, on the terminal and in card texts.
  [R({ name: "." }), "rules[0].name: \".\" and \"..\" cannot be names (they cannot stand in a URL)", 1, 78],
  [R({ name: ".." }), "rules[0].name: \".\" and \"..\" cannot be names (they cannot stand in a URL)", 1, 78],
  // Issue 26 round 53, F53b-4: rule ops with lane prod:evil had the session key of rule ops:prod's lanes, and the
  // owner's allow_session_keys ["ops:prod:*"] let it through.
  [R({ name: "owner" }), "rules[0].name: a rule cannot be named \"owner\" (the session key of the owner's own tool calls is owner:<key name>, which this rule's could not be told from)", 1, 78],
  [R({ name: "ops:prod" }), "rules[0].name: a rule's name cannot hold \":\" (a tool call's session key is <rule>:<lane>: rule ops with lane prod:x and rule ops:prod with lane x could not be told apart)", 1, 78],
  [E({ name: ".." }), "elsewhere[0].name: \".\" and \"..\" cannot be names (they cannot stand in a URL)", 1, 82],
  [R({ name: " " }), "rules[0].name: must not be empty", 1, 78],
  [R({ group: "" }), "rules[0].group: must not be empty", 1, 121],
  [R({ name: "a\u007fb" }), "rules[0].name: no control characters", 1, 78],
  [R({ group: "g\u001b[2J" }), "rules[0].group: no control characters", 1, 121],
  [E({ name: "e\u001b[31m" }), "elsewhere[0].name: no control characters", 1, 82],
  [E({ where: "the\napp" }), "elsewhere[0].where: no control characters", 1, 94],
  [{ sources: { s: { name: "S\u001b[31m" } } }, "sources.s.name: no control characters", 1, 25],
  [{ agents: { a: { worker: "w", use: "x", name: "A\u0000" } } }, "agents.a.name: no control characters", 1, 47],
  [{ channels: { c: { name: "\u001b]0;pwned\u0007" } } }, "channels.c.name: no control characters", 1, 26],
  // Sources and channels whose names give the same secrets.env variable would share one secret.
  [{ sources: { "gh-a": {}, gh_a: {} } }, "sources.gh_a: same secrets.env name (GH_A) as source \"gh-a\"; rename one", 1, 30],
  [{ sources: { "gh-a": {}, "GH-A": {} } }, "sources.GH-A: same secrets.env name (GH_A) as source \"gh-a\"; rename one", 1, 30],
  [{ channels: { "a.b": {}, a_b: {} } }, "channels.a_b: same secrets.env name (A_B) as channel \"a.b\"; rename one", 1, 29],
  // "__proto__" is a key like any other: an unknown field, or a name that does not start with a letter or digit.
  ['{"__proto__": {"timezone": "Asia/Tokyo"}}', "__proto__: unknown field (known: $schema, timezone, askFirst, sources, agents, channels, rules, elsewhere, approvals, approvalWaitSeconds)", 1, 15],
  ['{"sources": {"__proto__": {}}}', "sources.__proto__: names use letters, digits, _ . - (at most 100)", 1, 27],
  ['{"sources": {"s": {"__proto__": {"name": "x"}}}}', "sources.s.__proto__: unknown field (known: name, adapter)", 1, 33],
  // Tool plugins (issue 16): a rule's tools, the approvals beside the rules, and the wait of a prompt.
  [R({ tools: "file-ops.*" }), "rules[0].tools: must be an array of strings", 1, 121],
  [R({ tools: [""] }), "rules[0].tools[0]: must not be empty", 1, 122],
  [R({ tools: [5] }), "rules[0].tools[0]: must be a string", 1, 122],
  ...["greet", "*", "*.greet", "file ops.x", "-a.x", "a.", ".x", "a.b c", "a.b?", "a.$x", `${"p".repeat(129)}.x`, `a.${"t".repeat(129)}`].map((tool): [unknown, string, number, number] =>
    [R({ tools: ["ok.*", tool] }), "rules[0].tools[1]: must be <plugin>.<tool>, with * for any run of characters in the tool's part (such as file-ops.*)", 1, 129]),
  [{ approvals: {} }, "approvals: must be an array", 1, 14],
  [{ approvals: ["file-ops"] }, "approvals[0]: must be an object", 1, 15],
  [{ approvals: [{ plugin: "p", mode: "auto", x: 1 }] }, "approvals[0].x: unknown field (known: plugin, tool, mode, allow_session_keys, credential_any_url, legacy_callbacks, legacy_callback_short_ids)", 1, 47],
  [{ approvals: [{ mode: "deny" }] }, "approvals[0].plugin: required", 1, 15],
  [{ approvals: [{ plugin: "", mode: "deny" }] }, "approvals[0].plugin: must not be empty", 1, 25],
  [{ approvals: [{ plugin: 7, mode: "deny" }] }, "approvals[0].plugin: must be a string", 1, 25],
  ...["file.ops", "-x", "a b", "p".repeat(129), "*"].map((plugin): [unknown, string, number, number] =>
    [{ approvals: [{ plugin, mode: "deny" }] }, "approvals[0].plugin: tool plugin names use letters, digits, _ and -, starting with a letter or digit (at most 128)", 1, 25]),
  ...["write", "file-ops.", "other.write", "file-ops.*", "file-ops.w rite", `file-ops.${"t".repeat(129)}`, "file-opsx.write"].map((tool): [unknown, string, number, number] =>
    [{ approvals: [{ plugin: "file-ops", tool, mode: "prompt" }] }, "approvals[0].tool: must be a tool of plugin \"file-ops\": file-ops.<tool> (no *)", 1, 43]),
  [{ approvals: [{ plugin: "p", tool: 1, mode: "deny" }] }, "approvals[0].tool: must be a string", 1, 36],
  // the key-less legacy callback path is opted into per plugin (hostile round 37, F37b-3)
  [{ approvals: [{ plugin: "p", tool: "p.x", mode: "auto", legacy_callbacks: true }] }, "approvals[0].legacy_callbacks: only on an entry that names the plugin alone (no tool)", 1, 75],
  [{ approvals: [{ plugin: "p", mode: "auto", legacy_callbacks: 1 }] }, "approvals[0].legacy_callbacks: must be true or false", 1, 62],
  [{ approvals: [{ plugin: "p" }] }, "approvals[0].mode: required", 1, 15],
  [{ approvals: [{ plugin: "p", mode: "ask" }] }, "approvals[0].mode: must be auto, prompt or deny", 1, 36],
  [{ approvals: [{ plugin: "p", mode: "AUTO" }] }, "approvals[0].mode: must be auto, prompt or deny", 1, 36],
  [{ approvals: [{ plugin: "p", mode: "prompt", allow_session_keys: "triage:*" }] }, "approvals[0].allow_session_keys: must be an array of strings", 1, 66],
  [{ approvals: [{ plugin: "p", mode: "prompt", allow_session_keys: ["a", ""] }] }, "approvals[0].allow_session_keys[1]: must not be empty", 1, 71],
  [{ approvals: [{ plugin: "p", mode: "prompt", allow_session_keys: ["a\nb"] }] }, "approvals[0].allow_session_keys[0]: no control characters", 1, 67],
  [{ approvals: [{ plugin: "p", mode: "prompt", allow_session_keys: ["k".repeat(301)] }] }, "approvals[0].allow_session_keys[0]: at most 300 characters", 1, 67],
  [{ approvals: [{ plugin: "p", mode: "deny" }, { plugin: "q", mode: "auto" }, { plugin: "p", mode: "auto" }] }, "approvals[2]: the same plugin and tool as approvals[0]", 1, 73],
  [{ approvals: [{ plugin: "p", tool: "p.x", mode: "deny" }, { plugin: "p", tool: "p.x", mode: "auto" }] }, "approvals[1].tool: the same plugin and tool as approvals[0]", 1, 78],
  ...[-1, 1.5, "60", 601, true].map((wait): [unknown, string, number, number] =>
    [{ approvalWaitSeconds: wait }, "approvalWaitSeconds: must be a whole number of seconds from 0 to 600", 1, 24]),
];

test("every refusal of a rule file names the field, with its line and column", () => {
  for (const [file, error, line, column] of refusals) {
    const text = typeof file === "string" ? file : JSON.stringify(file);
    assert.deepEqual(parseRules(text, { timezone: "UTC" }), { ok: false, error, line, column }, text);
  }
});

test("a valid file comes back with every default filled in, and with every field it gave", () => {
  for (const text of ["{}", '{"timezone": null, "askFirst": null, "sources": null, "agents": null, "channels": null, "rules": null, "elsewhere": null}']) {
    assert.deepEqual(parseRules(text, { timezone: "Asia/Shanghai" }), {
      ok: true, rules: { timezone: "Asia/Shanghai", askFirst: [], sources: {}, agents: {}, channels: {}, rules: [], elsewhere: [] },
    }, text);
  }
  const file = {
    timezone: "UTC", askFirst: ["x"],
    sources: { s: { name: "S", adapter: "git-hub2" }, "t_1.x-y": {} },
    agents: {
      a: { worker: "w", use: "x" },
      b: { worker: "w", use: "my-agent2", name: "B", model: "", effort: "e", access: "read", command: ["c"], program: "p", sandbox: false, env: ["GH_TOKEN", "GIT_*", "_x9", "A".repeat(100), "B".repeat(99) + "_*"] },
      c: { worker: "w", use: "x", access: "full", sandbox: null, env: null },
      d: { worker: "w", use: "x", sandbox: true, env: Array.from({ length: 100 }, (_, i) => `V${i}`) },
      e: {
        worker: "w", use: "x", network: "host", loopbackPorts: [5432, 5432, 80], writable: ["~/.cache/go-build", "/srv/data/", ...Array.from({ length: 30 }, (_, i) => `/w${i}`)],
        devices: ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-caps/nvidia-cap1", "/dev/dri", "/dev/dri/renderD128", "/dev/kfd", "/dev/accel/accel0", "/dev/kvm", "/dev/fuse", "/dev/net/tun", "/dev/snd", "/dev/video0", "/dev/ttyUSB0", "/dev/ttyACM1", "/dev/null"],
      },
      f: { worker: "w", use: "x", writable: null, devices: null },
    },
    channels: { c: { name: "C", answerers: ["u"], links: true }, d: {} },
    rules: [
      { name: "c", when: { cron: "0 9 * * *" }, to: "a", emits: { source: "t_1.x-y" }, budget: { tokens: 5 }, cwd: "/x", skill: "k", prompt: "p", group: "g", parallel: 2, resume: true, tell: "never", channels: ["c"] },
      { name: "e", when: { source: "s", types: ["a.*"] }, to: "b", emits: { source: "s", types: ["b.*"] }, budget: { cost: 2, per: "week" }, parallel: 1, tell: "always" },
      { name: "n", when: { source: "s" }, to: "c", emits: null, budget: null, tell: "needed" },
      { name: "b", when: { source: "s" }, to: "c", budget: { cost: null, tokens: 5, per: null } },
    ],
    elsewhere: [{ name: "x", source: "s", to: "a", cron: "0 1 * * *", where: "app", cwd: "/y", skill: "z" }, { name: "f", where: "" }],
  };
  assert.deepEqual(parseRules(JSON.stringify(file), { timezone: "Asia/Shanghai" }), {
    ok: true,
    rules: {
      timezone: "UTC", askFirst: ["x"],
      sources: { s: { id: "s", name: "S", adapter: "git-hub2" }, "t_1.x-y": { id: "t_1.x-y", name: "t_1.x-y", adapter: null } },
      agents: {
        a: { id: "a", name: "a", worker: "w", use: "x", model: null, effort: null, access: "edit", command: null, program: null, sandbox: true, env: [], writable: [], readable: [], devices: [], network: "own", loopbackPorts: [] },
        b: {
          id: "b", name: "B", worker: "w", use: "my-agent2", model: "", effort: "e", access: "read", command: ["c"], program: "p", sandbox: false,
          env: ["GH_TOKEN", "GIT_*", "_x9", "A".repeat(100), "B".repeat(99) + "_*"], writable: [], readable: [], devices: [], network: "own", loopbackPorts: [],
        },
        c: { id: "c", name: "c", worker: "w", use: "x", model: null, effort: null, access: "full", command: null, program: null, sandbox: true, env: [], writable: [], readable: [], devices: [], network: "own", loopbackPorts: [] },
        d: { id: "d", name: "d", worker: "w", use: "x", model: null, effort: null, access: "edit", command: null, program: null, sandbox: true, env: Array.from({ length: 100 }, (_, i) => `V${i}`), writable: [], readable: [], devices: [], network: "own", loopbackPorts: [] },
        e: {
          id: "e", name: "e", worker: "w", use: "x", model: null, effort: null, access: "edit", command: null, program: null, sandbox: true, env: [],
          writable: ["~/.cache/go-build", "/srv/data/", ...Array.from({ length: 30 }, (_, i) => `/w${i}`)], readable: [],
          devices: ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-caps/nvidia-cap1", "/dev/dri", "/dev/dri/renderD128", "/dev/kfd", "/dev/accel/accel0", "/dev/kvm", "/dev/fuse", "/dev/net/tun", "/dev/snd", "/dev/video0", "/dev/ttyUSB0", "/dev/ttyACM1", "/dev/null"],
          network: "host", loopbackPorts: [5432, 80],
        },
        f: { id: "f", name: "f", worker: "w", use: "x", model: null, effort: null, access: "edit", command: null, program: null, sandbox: true, env: [], writable: [], readable: [], devices: [], network: "own", loopbackPorts: [] },
      },
      channels: { c: { id: "c", name: "C", answerers: ["u"], links: true }, d: { id: "d", name: "d", answerers: null, links: false } },
      rules: [
        {
          name: "c", source: "schedule", types: ["*"], cron: "0 9 * * *", to: "a", cwd: "/x", skill: "k", prompt: "p", group: "g", parallel: 2,
          resume: true, tell: "never", emits: { source: "t_1.x-y", types: ["*"] }, channels: ["c"], budget: { cost: null, tokens: 5, per: "day" },
        },
        {
          name: "e", source: "s", types: ["a.*"], cron: null, to: "b", cwd: null, skill: null, prompt: null, group: "e", parallel: 1,
          resume: false, tell: "always", emits: { source: "s", types: ["b.*"] }, channels: null, budget: { cost: 2, tokens: null, per: "week" },
        },
        {
          name: "n", source: "s", types: ["*"], cron: null, to: "c", cwd: null, skill: null, prompt: null, group: "n", parallel: null,
          resume: false, tell: "needed", emits: null, channels: null, budget: null,
        },
        {
          name: "b", source: "s", types: ["*"], cron: null, to: "c", cwd: null, skill: null, prompt: null, group: "b", parallel: null,
          resume: false, tell: "needed", emits: null, channels: null, budget: { cost: null, tokens: 5, per: "day" },
        },
      ],
      elsewhere: [
        { name: "x", source: "s", to: "a", cron: "0 1 * * *", where: "app", cwd: "/y", skill: "z", prompt: null },
        { name: "f", source: null, to: null, cron: null, where: "", cwd: null, skill: null, prompt: null },
      ],
    },
  });
});

test("tools, approvals and the prompt's wait come back as given; a file without them normalizes as before", () => {
  const tools = ["hello-python.greet", "file-ops.*", "a_b-9.x.y*z", `${"p".repeat(128)}.${"t".repeat(128)}`];
  const file = {
    ...R({ tools }),
    approvals: [
      { plugin: "file-ops", tool: "file-ops.write", mode: "prompt" },
      { plugin: "dangerous", mode: "deny" },
      { plugin: "search", mode: "auto", allow_session_keys: ["triage:*"] },
      { plugin: "file-ops", mode: "auto", tool: null, allow_session_keys: null },
      { plugin: "x", tool: "x.a.b", mode: "prompt", allow_session_keys: ["owner:owner", "r:?*", "k".repeat(300)] },
      { plugin: "async-a", mode: "auto", legacy_callbacks: true },
      { plugin: "async-b", mode: "auto", legacy_callback_short_ids: true },
    ],
    approvalWaitSeconds: 0,
  };
  const r = parseRules(JSON.stringify(file), { timezone: "UTC" });
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.deepEqual(r.rules.rules[0]!.tools, tools);
  assert.deepEqual(r.rules.approvals, [
    { plugin: "file-ops", tool: "file-ops.write", mode: "prompt", allow_session_keys: [], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false },
    { plugin: "dangerous", tool: null, mode: "deny", allow_session_keys: [], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false },
    { plugin: "search", tool: null, mode: "auto", allow_session_keys: ["triage:*"], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false },
    { plugin: "file-ops", tool: null, mode: "auto", allow_session_keys: [], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false },
    { plugin: "x", tool: "x.a.b", mode: "prompt", allow_session_keys: ["owner:owner", "r:?*", "k".repeat(300)], credential_any_url: false, legacy_callbacks: false, legacy_callback_short_ids: false },
    { plugin: "async-a", tool: null, mode: "auto", allow_session_keys: [], credential_any_url: false, legacy_callbacks: true, legacy_callback_short_ids: false },
    { plugin: "async-b", tool: null, mode: "auto", allow_session_keys: [], credential_any_url: false, legacy_callbacks: true, legacy_callback_short_ids: true },
  ]);
  assert.equal(r.rules.approvalWaitSeconds, 0);
  assert.equal(approvalWaitSecondsOf(r.rules), 0);
  assert.equal((parseRules(JSON.stringify({ approvalWaitSeconds: 600 }), { timezone: "UTC" }) as { rules: Rules }).rules.approvalWaitSeconds, 600);
  // Without them: no such fields, read as none and 60 s; `null` is "not given" as for every other field.
  for (const text of [JSON.stringify(R({})), JSON.stringify({ ...R({ tools: null }), approvals: null, approvalWaitSeconds: null })]) {
    const plain = parseRules(text, { timezone: "UTC" });
    assert.ok(plain.ok);
    assert.deepEqual([Object.keys(plain.rules).includes("approvals"), Object.keys(plain.rules).includes("approvalWaitSeconds"), Object.keys(plain.rules.rules[0]!).includes("tools")], [false, false, false], text);
    assert.deepEqual([approvalsOf(plain.rules), approvalWaitSecondsOf(plain.rules), ruleTools(plain.rules.rules[0]!)], [[], 60, []]);
  }
  const empty = parseRules(JSON.stringify({ ...R({ tools: [] }), approvals: [] }), { timezone: "UTC" });
  assert.ok(empty.ok);
  assert.deepEqual([empty.rules.approvals, empty.rules.rules[0]!.tools], [[], []]);
});

test("a rule whose when names an intent and no source takes events of any source: its own events are of source intent:<plugin>/<id>; types narrow", () => {
  const parse = (when: object) => {
    const r = parseRules(JSON.stringify(R({ when, use: "workflow", workflow: "p/w" })), { timezone: "UTC" });
    assert.ok(r.ok, r.ok ? "" : r.error);
    return r.rules.rules[0]!;
  };
  assert.deepEqual(parse({ intent: "p/ask" }), {
    name: "r", source: "intent:p/ask", types: ["*"], cron: null, to: "a", cwd: null, skill: null, prompt: null, group: "r", parallel: null,
    resume: false, tell: "needed", emits: null, channels: null, budget: null, use: "workflow", workflow: "p/w", intent: "p/ask",
  });
  assert.deepEqual([parse({ intent: "p/ask", types: ["chat.*", "mail"] }).types, parse({ intent: "p/ask", source: null }).source], [["chat.*", "mail"], "intent:p/ask"]);
  const { source, types, intent } = parse({ source: "s", intent: "p/ask" });
  assert.deepEqual([source, types, intent], ["s", ["*"], "p/ask"], "with a source, as before");
  assert.deepEqual([anySource(parse({ intent: "p/ask" })), anySource(parse({ source: "s", intent: "p/ask" })), anySource(parse({ source: "s" }))], [true, false, false]);
  assert.equal(intentSource("p/ask"), "intent:p/ask");
});

test("limits are counted in code points: 4000 emoji make a valid prompt; names take 100 characters", () => {
  const r = parseRules(JSON.stringify(R({ prompt: "😀".repeat(4000), name: "n".repeat(100) })), { timezone: "UTC" });
  assert.equal(r.ok, true);
  const named = parseRules(JSON.stringify({ sources: { ["s".repeat(100)]: {} } }), { timezone: "UTC" });
  assert.equal(named.ok, true);
});

test("type globs: every character but * and ? is literal, and * spans lines", () => {
  assert.equal(globMatch("a+b(c)[d]{e}|^$\\.", "a+b(c)[d]{e}|^$\\."), true);
  assert.equal(globMatch("a+b", "aab"), false);
  assert.equal(globMatch("x*", "x\ny"), true);
  assert.equal(globMatch("?", ""), false);
  assert.equal(globMatch("b", "abc"), false, "a pattern matches the whole type, not a part of it");
  assert.equal(globMatch("a", "ab"), false);
  assert.equal(globMatch("b", "ab"), false, "anchored at the start too");
  assert.equal(anyGlob(["a.*", "b.*"], "b.x"), true);
  assert.equal(anyGlob(["a.*"], "b.x"), false);
  assert.equal(anyGlob([], "b.x"), false);
});

test("names: what a new name may be, what an old key's name may be, and the secrets.env variable of each", () => {
  const names: [string, boolean, boolean][] = [ // [name, isName, isOldKeyName]
    ["a", true, true], ["A.b_c-9", true, true], ["9", true, true], ["a".repeat(100), true, true], ["a".repeat(101), false, false],
    ["", false, false], ["_a", false, true], [".", false, true], ["..", false, true], ["a b", false, true], ["é", false, true],
    ["😀".repeat(100), false, true], ["😀".repeat(101), false, false], ["a/b", false, false], ["a\u007fb", false, false],
    ["a\u0000", false, false], ["a\n", false, false],
  ];
  assert.deepEqual(names.map(([n]) => [n, isName(n), isOldKeyName(n)]), names);
  assert.deepEqual(["gh-a", "GH_A", "a.b", "x9", "é"].map(secretsEnvName), ["GH_A", "GH_A", "A_B", "X9", "_"]);
});

/** 1-based line and column of the first `needle` in `text` (what parseRules reports for the node that starts there). */
function at(text: string, needle: string, from = 0): { line: number; column: number } {
  const i = text.indexOf(needle, from);
  assert.ok(i >= 0, needle);
  const lines = text.slice(0, i).split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const keyed = (n: number, v: unknown = {}) => Object.fromEntries(times(n, (i) => [`n${i}`, v]));

test("a file over a limit is refused before it is walked: depth, size and the length of every list, naming the limit", () => {
  const tz = { timezone: "UTC" };
  // [file, error, where the error points: after `prefix` (its first occurrence), `skip` more characters]
  const cases: [unknown, string, string, number][] = [
    ["[".repeat(2500) + "]".repeat(2500), "JSON: more than 16 objects and arrays inside one another", "", 16],
    ['{"$schema": ' + '{"a": '.repeat(16) + "1" + "}".repeat(16) + "}", "JSON: more than 16 objects and arrays inside one another", '{"$schema": ', 15 * 6],
    [{ rules: times(1001, () => ({})) }, "rules: at most 1000 rules", '"rules":[', 3 * 1000],
    [{ elsewhere: times(1001, () => ({})) }, "elsewhere: at most 1000 tasks", '"elsewhere":[', 3 * 1000],
    [{ sources: keyed(1001) }, "sources: at most 1000 sources", '"n999":{},', 0],
    [{ agents: keyed(1001) }, "agents: at most 1000 agents", '"n999":{},', 0],
    [{ channels: keyed(101) }, "channels: at most 100 channels", '"n99":{},', 0],
    [{ askFirst: times(101, () => "x") }, "askFirst: at most 100 items", '"askFirst":[', 4 * 100],
    [{ agents: { a: { command: times(101, () => "x") } } }, "agents.a.command: at most 100 items", '"command":[', 4 * 100],
    [{ channels: { c: { answerers: times(101, () => "x") } } }, "channels.c.answerers: at most 100 items", '"answerers":[', 4 * 100],
    [R({ when: { source: "s", types: times(101, () => "x") } }), "rules[0].when.types: at most 100 items", '"types":[', 4 * 100],
    [R({ emits: { source: "s", types: times(101, () => "x") } }), "rules[0].emits.types: at most 100 items", '"types":[', 4 * 100],
    [R({ channels: times(101, () => "x") }), "rules[0].channels: at most 100 items", '"channels":[', 4 * 100],
    [R({ tools: times(101, () => "p.x") }), "rules[0].tools: at most 100 items", '"tools":[', 6 * 100],
    [{ approvals: times(1001, () => ({})) }, "approvals: at most 1000 approval rules", '"approvals":[', 3 * 1000],
    [{ approvals: [{ plugin: "p", mode: "prompt", allow_session_keys: times(101, () => "k") }] }, "approvals[0].allow_session_keys: at most 100 items", '"allow_session_keys":[', 4 * 100],
    // The first list over its limit in the order of the file is named.
    [{ rules: [{}, { when: { types: times(101, () => "x") } }], askFirst: times(101, () => "x") }, "rules[1].when.types: at most 100 items", '"types":[', 4 * 100],
  ];
  for (const [file, error, prefix, skip] of cases) {
    const text = typeof file === "string" ? file : JSON.stringify(file);
    const offset = text.indexOf(prefix) + prefix.length + skip;
    assert.ok(text.indexOf(prefix) >= 0 && offset < text.length, error);
    assert.deepEqual(parseRules(text, tz), { ok: false, error, line: 1, column: offset + 1 }, error);
  }
  // At every limit is fine (the lists inside an entry full in one entry each).
  const full = parseRules(JSON.stringify({
    sources: keyed(1000), agents: { ...keyed(999, { worker: "w", use: "x" }), a: { worker: "w", use: "x", command: times(100, () => "x") } },
    channels: { ...keyed(99), c: { answerers: times(100, () => "u") } }, askFirst: times(100, () => "x"),
    rules: [
      { name: "full", when: { source: "n0", types: times(100, () => "x") }, to: "a", emits: { source: "n1", types: times(100, () => "y") }, channels: times(100, () => "c"), tools: times(100, () => "p.x") },
      ...times(999, (i) => ({ name: `r${i}`, when: { source: "n0" }, to: "a" })),
    ],
    elsewhere: times(1000, (i) => ({ name: `e${i}` })),
    approvals: [{ plugin: "p0", mode: "prompt", allow_session_keys: times(100, () => "k") }, ...times(999, (i) => ({ plugin: `p${i + 1}`, mode: "auto" }))],
  }), tz);
  assert.equal(full.ok, true, full.ok ? "" : full.error);
  assert.deepEqual(parseRules("[".repeat(16) + "]".repeat(16), tz), { ok: false, error: ": the file must hold one JSON object", line: 1, column: 1 }, "16 levels are parsed");
  // Brackets inside strings and comments are not nesting.
  assert.equal(parseRules(`// ${"[".repeat(40)}\n{"askFirst": ["${"{".repeat(40)}"], /* ${"[".repeat(40)} */}`, tz).ok, true);
});

test("a file over 4 MiB is refused by its size in UTF-8 bytes; exactly 4 MiB is read", () => {
  const tz = { timezone: "UTC" };
  const limit = 4 * 1024 * 1024;
  // A file of `fill` inside the one string it holds (`{"$schema": "…"}`: 15 characters around it).
  const file = (fill: string) => `{"$schema": "${fill}"}`;
  assert.equal(parseRules(file("x".repeat(limit - 15)), tz).ok, true);
  const over = { ok: false, error: "the file is larger than 4 MiB (4194304 bytes)", line: 1, column: 1 };
  assert.deepEqual(parseRules(file("x".repeat(limit - 14)), tz), over);
  // 2-byte characters: half as many code units reach the limit; 4-byte ones take two code units each.
  const wide = file("é".repeat(limit / 2));
  assert.ok(wide.length < limit);
  assert.deepEqual(parseRules(wide, tz), over);
  assert.deepEqual(parseRules(file("😀".repeat(limit / 4)), tz), over);
  const fits = file("x".repeat(limit - 15 - 3 * 1000) + "€".repeat(1000));
  assert.equal(Buffer.byteLength(fits), limit);
  assert.equal(parseRules(fits, tz).ok, true);
  assert.deepEqual(parseRules(fits + " ", tz), over);
});

/** `globMatch` with the steps it took. */
function globMatchSteps(pattern: string, value: string): { match: boolean; steps: number } {
  const counter = { steps: 0 };
  const match = globMatch(pattern, value, counter);
  return { match, steps: counter.steps };
}

/** The matcher the hub used before (a regular expression per glob): the reference for what globs mean. */
function regexGlob(pattern: string): RegExp {
  let re = "^";
  for (const ch of pattern) re += ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  return new RegExp(re + "$", "s");
}

test("globs mean what they meant: every glob over a * ? . of up to 5 characters on every type over a b . of up to 5", () => {
  const words = (alphabet: string[], max: number): string[] => {
    const out = [""];
    for (let len = 1, prev = [""]; len <= max; len++) out.push(...(prev = prev.flatMap((w) => alphabet.map((a) => w + a))));
    return out;
  };
  const values = words(["a", "b", "."], 5);
  let matches = 0;
  for (const p of words(["a", "*", "?", "."], 5)) {
    const re = regexGlob(p);
    for (const v of values) {
      const want = re.test(v);
      assert.equal(globMatch(p, v), want, `${JSON.stringify(p)} on ${JSON.stringify(v)}`);
      if (want) matches++;
    }
  }
  assert.equal(matches, 82_818, "of 496,860 pairs");
});

test("a glob with 20 stars on a 10,000-character type is decided at once, in steps bounded by the lengths", () => {
  const value = "a".repeat(10_000);
  const pattern = "*a".repeat(20) + "*b";
  assert.equal(globMatch(pattern, value), false);
  assert.equal(globMatch(pattern, value + "b"), true);
  assert.equal(globMatch("*a*a*a*a*a*a*b", "a".repeat(64)), false);
  const { match, steps } = globMatchSteps(pattern, value);
  assert.equal(match, false);
  assert.equal(steps, 10_021, "one step per character of the type, and one per character of the pattern before its last star");
  // A step is one character of the type compared or skipped, or one star passed at its end.
  assert.deepEqual([globMatchSteps("*a*b", "aab"), globMatchSteps("a?c*", "abcde"), globMatchSteps("*x", "abc"), globMatchSteps("**", "")], [
    { match: true, steps: 5 }, { match: true, steps: 6 }, { match: false, steps: 4 }, { match: true, steps: 2 },
  ]);
  assert.deepEqual([globMatchSteps("abc", "abx"), globMatchSteps("x*", "yz")], [{ match: false, steps: 3 }, { match: false, steps: 1 }], "no star to go back to");
  // Any glob on any type: at most (glob length + 1) × (type length + 1) steps.
  const cases: [string, string, boolean][] = [
    ["*ab*ab*ab*abc", "ab".repeat(500), false], ["*ab*ab*ab*ab", "ab".repeat(500), true], ["?*?*?*?*?*?*?*?*?*?*x", "y".repeat(3000), false],
    ["*aaaaaaaaab", "a".repeat(2000), false], ["*aaaaaaaaab", "a".repeat(2000) + "b", true], ["", "a", false], ["*", "", true], ["", "", true],
  ];
  for (const [p, v, want] of cases) {
    const r = globMatchSteps(p, v);
    assert.equal(r.match, want, p);
    assert.ok(r.steps <= (p.length + 1) * (v.length + 1), `${p}: ${r.steps} steps`);
  }
});

test("every syntax error code of jsonc-parser has a text of its own in both languages, never the code's name (issue 15)", () => {
  const none = 0 as ParseErrorCode; // no code of the library
  const unknown = printParseErrorCode(none);
  let codes = 0;
  for (let code = 1; printParseErrorCode(code) !== unknown; code++) {
    codes++;
    const name = printParseErrorCode(code);
    const texts = (["zh", "en"] as const).map((lang) => jsonSyntaxText(code, lang));
    for (const text of texts) {
      assert.ok(text.length > 0 && !text.includes(name) && !/[A-Z][a-z]+[A-Z]/.test(text), `${name}: ${text}`);
      assert.notEqual(text, jsonSyntaxText(none, "en"));
      assert.notEqual(text, jsonSyntaxText(none, "zh"));
    }
    assert.match(texts[0]!, /[\u4e00-\u9fff]/, name);
  }
  assert.equal(codes, 16);
  assert.deepEqual(parseRules('{"a" 1}', { timezone: "UTC" }, "zh"), { ok: false, error: "JSON 写错了：这里要写冒号", line: 1, column: 6 });
  assert.deepEqual(parseRules('{"a": "b', { timezone: "UTC" }), { ok: false, error: "JSON: a string that is not closed (\" missing)", line: 1, column: 7 });
  assert.deepEqual(parseRules("{1: 2}", { timezone: "UTC" }), { ok: false, error: "JSON: a property name in double quotes expected", line: 1, column: 2 });
});
