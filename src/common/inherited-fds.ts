/**
 * The descriptors a process inherited from whoever started it (issue 26 round 22, F22-1): one without the
 * close-on-exec flag passes on to every program the process starts — through the worker's supervisor and bubblewrap
 * into every sandboxed agent, every sandboxed tool plugin and the review sandbox. A hub started as
 * `( flock -n 200 || exit 1; exec agent-autoloop serve ) 200< ~/.agent-autoloop` gave each sandbox the home as
 * `/proc/self/fd/200/`: an agent read `master.key` and wrote into the home. Node cannot set the flag on a descriptor
 * it did not open, so those are closed before the hub starts anything; every descriptor Node and its libraries open
 * carries the flag (stdin, stdout and stderr are given to children one by one).
 */
import { closeSync, readdirSync, readFileSync } from "node:fs";

/** O_CLOEXEC in the `flags` of `/proc/<pid>/fdinfo/<fd>` (octal there, as in the kernel's headers). */
const closeOnExec = 0o2000000;

/**
 * Closes every descriptor above 2 of this process that has no close-on-exec flag (see the module); a lock held
 * through one (`flock`) is released — hold it in the process that starts the hub instead (SECURITY.md). Linux only
 * (`/proc/self/fdinfo`); elsewhere, or without /proc, nothing. Never throws.
 * @returns the descriptors closed, in order.
 */
export function closeInheritedDescriptors(): number[] {
  const closed: number[] = [];
  let fds: number[];
  try {
    fds = readdirSync("/proc/self/fd").map(Number).filter((fd) => fd > 2).sort((a, b) => a - b);
  } catch {
    return closed;
  }
  for (const fd of fds) {
    try {
      const m = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"));
      if (!m || (Number.parseInt(m[1]!, 8) & closeOnExec) !== 0) continue;
      closeSync(fd);
      closed.push(fd);
    } catch {
      // gone meanwhile (the descriptor readdir itself used), or not ours to read
    }
  }
  return closed;
}
