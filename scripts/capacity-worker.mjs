/**
 * One remote worker of the capacity run (scripts/capacity.ts, issue 32), as a process of its own on the loopback: it
 * long-polls `GET /v1/work` with `capacity` slots (one poll held at a time, asking again as soon as it has a free
 * slot), runs each job's command agent (`job.agent.command`, a real child process), and reports `started` and the
 * `result` with the run's token, as the protocol's worker does. Plain JavaScript on node:http (no tsx, no hub code)
 * so that hundreds of them fit beside the hub. On SIGTERM it prints one JSON line `{ runs, failed, failedBy, resultMs }`
 * (`failedBy`: the failed requests by `<request> <status>`, 0 and the error's code for no answer; the result requests'
 * times in ms) and exits.
 *
 * Usage: node capacity-worker.mjs <hub url> <worker key> <name> <capacity>
 */
import http from "node:http";
import { spawn } from "node:child_process";

const [url, key, name, capacityArg] = process.argv.slice(2);
const capacity = Number(capacityArg);
const hub = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: capacity + 2 });
const running = new Set();
const resultMs = [];
let runs = 0;
let failed = 0;
const failedBy = {};
/** Counts a failed request by what it was and its status (0 and the error's code when there was no answer). */
const fail = (what, status, code) => {
  const k = `${what} ${status}${status === 0 && code ? ` ${code}` : ""}`;
  failed += 1;
  failedBy[k] = (failedBy[k] ?? 0) + 1;
};
let polling = false;
let claims = 0;
let stopping = false;

/**
 * One JSON request; resolves with [status, parsed body, error code] (status 0: no answer, with the error's code). A request on a kept-alive socket the
 * hub closed at its keep-alive timeout just as it was sent (ECONNRESET on a reused socket) is sent again once, as
 * Node's documentation advises and as fetch does: that race is the client's, not a refusal of the hub's.
 */
function request(method, path, token, body, again = true) {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request({
      host: hub.hostname, port: hub.port, method, path, agent,
      headers: { authorization: `Bearer ${token}`, ...(data === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(data) }) },
    }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        try {
          resolve([res.statusCode, JSON.parse(Buffer.concat(chunks).toString("utf8"))]);
        } catch {
          resolve([res.statusCode, null]);
        }
      });
      res.on("error", (e) => resolve([0, null, e.code ?? e.message]));
    });
    req.on("error", (e) => {
      if (again && req.reusedSocket && e.code === "ECONNRESET") resolve(request(method, path, token, body, false));
      else resolve([0, null, e.code ?? e.message]);
    });
    req.end(data);
  });
}

/** Runs one job: started, the agent's command, the result. */
async function run(job) {
  running.add(job.run);
  const [s, , sCode] = await request("POST", `/v1/runs/${job.run}/started`, job.token, {});
  if (s !== 200) fail("started", s, sCode);
  const [command, ...args] = job.agent.command ?? ["true"];
  const code = await new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "ignore" });
    child.on("error", () => resolve(127));
    child.on("exit", (c) => resolve(c ?? 1));
  });
  const t0 = performance.now();
  const [r, , rCode] = await request("POST", `/v1/runs/${job.run}/result`, job.token, { outcome: code === 0 ? "done" : "failed", summary: `exit ${code}` });
  resultMs.push(performance.now() - t0);
  if (r !== 200) fail("result", r, rCode);
  runs += 1;
  running.delete(job.run);
  poll();
}

/** Holds one long poll while a slot is free. */
async function poll() {
  if (polling || stopping || running.size >= capacity) return;
  polling = true;
  const free = capacity - running.size;
  const [status, body, code] = await request("GET", `/v1/work?claim=${name}-${++claims}&capacity=${free}&wait=25&running=${[...running].join(",")}`, key);
  polling = false;
  if (status !== 200) {
    fail("work", status, code);
    if (!stopping) setTimeout(poll, 200);
    return;
  }
  if (body.job) void run(body.job);
  poll();
}

process.on("SIGTERM", () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ runs, failed, failedBy, resultMs })}\n`, () => process.exit(0));
});
poll();
