/**
 * The guard thread (guard.ts): the guard of the folders a sandboxed launch writes (steering.ts `executableParts`) and
 * the check after its run (planted.ts `plantedSteering`), off the hub's event loop. Both walk folders and run git
 * synchronously — about 1 s per 100,000 folders and ~10 ms per git run — which, in a hub whose worker is local,
 * held every request for as long (issue 26 round 12 follow-up). It answers each request with plain data.
 */
import { parentPort } from "node:worker_threads";
import { executableParts, GuardLimitError } from "./steering.js";
import { plantedSteering } from "./planted.js";
import type { GuardReply, GuardRequest } from "./guard.js";

parentPort!.on("message", (req: GuardRequest) => {
  let reply: GuardReply;
  try {
    if (req.kind === "parts") reply = { id: req.id, parts: req.folders.map((f) => executableParts(f.folder, f.project, true, req.limits)) };
    else reply = { id: req.id, planted: plantedSteering(req.folders, new Set(req.guarded), req.seen, req.run) };
  } catch (e) {
    reply = e instanceof GuardLimitError
      ? { id: req.id, limit: { kind: e.kind, folder: e.folder, limit: e.limit } }
      : { id: req.id, error: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(reply);
});
