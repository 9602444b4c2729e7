/**
 * Which host devices a sandbox may pass through (issue 26, finding 15): the agent sandbox's `devices` (rules.json) and
 * a tool plugin's device `binds` (tool-plugins.md §7). Both sandboxes start from a minimal `/dev` of their own (null,
 * zero, full, random, urandom, tty, a pty master and `/dev/shm`); a device is added only when it is named here, by
 * path. Pure: the file system checks (a block device, a link that leads elsewhere) are the launcher's
 * (src/tools/devices.ts).
 *
 * The list holds what gives access to hardware a program may legitimately drive and never to the hub's files or to
 * a person's terminal: GPUs and accelerators (the tool-plugins.md GPU recipe binds `/dev/nvidia0` and
 * `/dev/nvidiactl`), KVM, FUSE, TUN, sound, cameras, USB serial adapters. Left out on purpose: disks and partitions
 * (raw reads get around every file permission, the master key included), `/dev/mem`, `/dev/port`, SCSI generic and
 * NVMe character devices, loop and device-mapper control, terminals and consoles (TIOCSTI types into the owner's
 * shell), input devices (key logging and injection), and `/dev` itself.
 */

/** The device paths a sandbox may pass through: `*` stands for any run of characters other than `/`. */
export const passableDevices: readonly string[] = [
  "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
  "/dev/nvidia*", "/dev/nvidia-caps", "/dev/nvidia-caps/*", "/dev/dri", "/dev/dri/*", "/dev/kfd", "/dev/accel", "/dev/accel/*",
  "/dev/kvm", "/dev/fuse", "/dev/net", "/dev/net/tun", "/dev/snd", "/dev/snd/*", "/dev/video*", "/dev/ttyUSB*", "/dev/ttyACM*",
];

/** Whether `path` matches `pattern`, where `*` is any run of characters other than `/` (linear: no backtracking blow-up). */
function segmentMatch(pattern: string, path: string): boolean {
  const ps = pattern.split("/");
  const vs = path.split("/");
  if (ps.length !== vs.length) return false;
  return ps.every((p, i) => {
    const v = vs[i]!;
    const star = p.indexOf("*");
    if (star < 0) return p === v;
    const [head, tail] = [p.slice(0, star), p.slice(star + 1)];
    return v.length >= head.length + tail.length && v.startsWith(head) && v.endsWith(tail);
  });
}

/**
 * What is wrong with a device path, or null when a sandbox may pass it through: `form` (not an absolute path under
 * `/dev/` written plainly: no `.` or `..` part, no doubled or trailing `/`), `notPassable` (not in `passableDevices`;
 * `/dev` itself, the host's whole device folder, is not).
 */
export function devicePathProblem(path: string): "form" | "notPassable" | null {
  if (path === "/dev") return "notPassable";
  if (!path.startsWith("/dev/") || path.endsWith("/") || path.includes("//")) return "form";
  if (path.split("/").some((part) => part === "." || part === "..")) return "form";
  if (/[\u0000-\u001f\u007f]/.test(path)) return "form";
  return passableDevices.some((p) => segmentMatch(p, path)) ? null : "notPassable";
}
