/**
 * The rebuild's reading thread (see fact-chunks.ts): streams the log from its own read-only connection, parses and
 * collapses it into chunks, and posts each one when the store that writes them has taken the one before.
 */
import { workerData } from "node:worker_threads";
import { collapseFile, type FactChunksMessage, type FactChunksThreadData } from "./fact-chunks.js";

const { path, chunkFacts, lang, counters, port } = workerData as FactChunksThreadData;

/** Posts a message, then counts it: the store reads the count, then the message. */
function post(m: FactChunksMessage): void {
  port.postMessage(m);
  Atomics.add(counters, 0, 1);
  Atomics.notify(counters, 0);
}

try {
  let posted = 0;
  for (const chunk of collapseFile(path, chunkFacts, lang)) {
    // Posted only when the store has taken every chunk before (it writes the last one meanwhile): one chunk waits for
    // it at most, and this thread parses the next.
    for (let taken = Atomics.load(counters, 1); taken < posted && Atomics.load(counters, 2) === 0; taken = Atomics.load(counters, 1)) Atomics.wait(counters, 1, taken);
    if (Atomics.load(counters, 2) !== 0) break;
    post({ chunk });
    posted++;
  }
  if (Atomics.load(counters, 2) === 0) post({ done: true });
} catch (e) {
  post({ error: e instanceof Error ? e.message : String(e) });
} finally {
  port.close();
}
