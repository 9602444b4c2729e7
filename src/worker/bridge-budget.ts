/**
 * What one run's tools socket may hold (issue 26 round 5, F4): a sandboxed agent can reach its run's socket directly
 * and prove each connection with a process of its own, so the bridge, which lives in the worker (inside `serve` for
 * the local worker), bounds per run the connections it holds and the bytes of unfinished lines all of them buffer
 * (`bridgeConnectionsPerRunMax`, `bridgeBufferedBytesPerRunMax`). Past either, the connection is refused or closed and
 * the log says so once per run and kind; the worker's memory no longer grows with what one agent sends.
 */
import { Transform, type TransformCallback } from "node:stream";
import { bridgeBufferedBytesPerRunMax } from "../kernel/limits.js";

/** The bytes of unfinished lines one run's connections hold now, shared by them. */
export class RunBytes {
  held = 0;
  constructor(readonly max: number = bridgeBufferedBytesPerRunMax) {}
}

/**
 * Passes a connection's bytes on to the MCP transport while counting the bytes after its last line break (what the
 * transport keeps until the line ends) against the run's `RunBytes`. A chunk that would take the run past its
 * budget is not passed on: `over` is called (the caller closes the connection). `release` gives the connection's
 * bytes back (its close).
 */
export class HeldLines extends Transform {
  private mine = 0;

  constructor(private readonly run: RunBytes, private readonly over: () => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const nl = chunk.lastIndexOf(10);
    const next = nl === -1 ? this.mine + chunk.length : chunk.length - nl - 1;
    if (next > this.mine && this.run.held + (next - this.mine) > this.run.max) {
      this.release();
      this.over();
      done();
      return;
    }
    this.run.held += next - this.mine;
    this.mine = next;
    done(null, chunk);
  }

  /** Gives this connection's held bytes back to the run (once; later calls give nothing). */
  release(): void {
    this.run.held -= this.mine;
    this.mine = 0;
  }
}
