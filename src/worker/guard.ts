/**
 * The worker's side of the guard thread (guard-thread.ts): the guard before a sandboxed launch and the check after
 * its run, asked of a thread so that the hub of a local worker keeps answering while they walk folders and run git.
 * Started on first use; a thread that fails, exits or does not answer within `guardThreadTimeoutMs` is ended and the
 * request done here, on this thread, instead — slower for the hub, never a launch unguarded or a run unchecked.
 */
import { join } from "node:path";
import { engineDir } from "../common/paths.js";
import { executableParts, GuardLimitError, guardLimits, type GuardLimits, type Guarded, type Seen } from "./steering.js";
import { plantedSteering, type Planted } from "./planted.js";
import { t, type Lang } from "../i18n/messages.js";
import { RequestThread } from "./request-thread.js";

/** How long one request may take in the thread before it is done here instead, in ms (the walk's limit takes ~1 s). */
export const guardThreadTimeoutMs = 120_000;

/** A request to the guard thread. */
export type GuardRequest =
  | { kind: "parts"; id: number; folders: { folder: string; project: boolean }[]; limits: GuardLimits }
  | { kind: "planted"; id: number; folders: string[]; guarded: string[]; seen: Seen; run: number };

/** The thread's answer: the guarded parts, what was planted, a limit reached (the launch is refused) or an error. */
export type GuardReply =
  | { id: number; parts: Guarded[] }
  | { id: number; planted: Planted[] }
  | { id: number; limit: { kind: GuardLimitError["kind"]; folder: string; limit: number } }
  | { id: number; error: string };

/** The compiled thread script (the worker runs the compiled one, also under tsx, as for the output thread). */
export const guardThreadScript = join(engineDir, "dist", "src", "worker", "guard-thread.js");

/** One worker's guard thread. */
export class GuardThread {
  private readonly thread: RequestThread<GuardRequest, GuardReply>;
  private next = 1;

  /** @param log says why the thread was not used (a line of the worker's log; `name` the worker's, in `lang`). */
  constructor(name: string, lang: Lang, log: (line: string) => void = () => {}) {
    this.thread = new RequestThread({
      script: guardThreadScript, timeoutMs: guardThreadTimeoutMs,
      slow: () => log(t(lang, "worker.guardSlow", { name, seconds: guardThreadTimeoutMs / 1000 })),
      failed: (error) => log(t(lang, "worker.guardThread", { name, error })),
    });
  }

  /**
   * `executableParts` of each folder (`project`: the agent's cwd) within `limits`, in the thread.
   * @throws GuardLimitError when a folder is beyond the guard's limits (the launch is refused), or what the guard threw.
   */
  async parts(folders: { folder: string; project: boolean }[], limits: GuardLimits = guardLimits): Promise<Guarded[]> {
    const r = await this.thread.ask({ kind: "parts", id: this.next++, folders, limits });
    if (r === undefined) return folders.map((f) => executableParts(f.folder, f.project, true, limits));
    if ("limit" in r) throw new GuardLimitError(r.limit.kind, r.limit.folder, r.limit.limit);
    if ("error" in r) throw new Error(r.error);
    return (r as { parts: Guarded[] }).parts;
  }

  /** `plantedSteering` in the thread (never throws: what it cannot move it names). */
  async planted(folders: string[], guarded: ReadonlySet<string>, seen: Seen, run: number): Promise<Planted[]> {
    const r = await this.thread.ask({ kind: "planted", id: this.next++, folders, guarded: [...guarded], seen, run });
    return r !== undefined && "planted" in r ? r.planted : plantedSteering(folders, guarded, seen, run);
  }

  /** Ends the thread; later requests start a new one. */
  close(): void {
    this.thread.close();
  }
}
