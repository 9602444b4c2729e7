/**
 * Checking a host device before a sandbox passes it through (issue 26, finding 15): the path's policy is
 * src/kernel/devices.ts; here the file system is asked what the path really is. A device goes in with `--dev-bind`
 * (a plain bind mounts it `nodev`, and opening it then fails with "Permission denied").
 */
import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { devicePathProblem } from "../kernel/devices.js";
import { t, type Lang, type MessageId } from "../i18n/messages.js";

/** How many entries of a device folder (`/dev/dri`) are looked at, at most, before it is refused as too large. */
export const deviceFolderEntriesMax = 1000;

/** Why a device cannot be passed through, as a `tools.device.*` / `sandbox.device.*` reason code. */
export type DeviceRefusal = "missing" | "form" | "notPassable" | "block" | "notDevice" | "tooMany";

/**
 * Whether `path` names a device a sandbox may pass through: its real path (links followed) must pass the policy, and
 * be a character device, or a folder under `/dev` whose devices are all character devices (no block device: a disk
 * read raw gets around every file permission).
 * @returns the real path to bind, or why not.
 */
export function checkDevice(path: string): { ok: true; real: string } | { ok: false; why: DeviceRefusal } {
  const named = devicePathProblem(path);
  if (named) return { ok: false, why: named };
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch {
    return { ok: false, why: "missing" };
  }
  const realProblem = devicePathProblem(real);
  if (realProblem) return { ok: false, why: realProblem };
  const st = statSync(real);
  if (st.isBlockDevice()) return { ok: false, why: "block" };
  if (st.isCharacterDevice()) return { ok: true, real };
  if (!st.isDirectory()) return { ok: false, why: "notDevice" };
  let seen = 0;
  const walk = (dir: string): DeviceRefusal | null => {
    for (const name of readdirSync(dir)) {
      if (++seen > deviceFolderEntriesMax) return "tooMany";
      const p = join(dir, name);
      const e = lstatSync(p);
      if (e.isBlockDevice()) return "block";
      if (e.isDirectory()) {
        const inner = walk(p);
        if (inner) return inner;
      }
    }
    return null;
  };
  const inside = walk(real);
  return inside ? { ok: false, why: inside } : { ok: true, real };
}

/** Whether a bind's host path is a device matter (under `/dev`, or a device node anywhere) rather than a plain bind. */
export function isDevicePath(hostPath: string): boolean {
  let real = hostPath;
  try {
    real = realpathSync.native(hostPath);
  } catch {
    // missing: the bind's own check says so
  }
  if (real === "/dev" || real.startsWith("/dev/") || hostPath === "/dev" || hostPath.startsWith("/dev/")) return true;
  try {
    const st = statSync(real);
    return st.isCharacterDevice() || st.isBlockDevice();
  } catch {
    return false;
  }
}

const refusalText = {
  missing: "sandbox.device.missing", form: "sandbox.device.form", notPassable: "sandbox.device.notPassable",
  block: "sandbox.device.block", notDevice: "sandbox.device.notDevice", tooMany: "sandbox.device.tooMany",
} as const satisfies Record<DeviceRefusal, MessageId>;

/** The reason of a refusal, worded for `lang`: what the device is and why a sandbox does not pass it through. */
export function deviceRefusalText(lang: Lang, why: DeviceRefusal): string {
  return t(lang, refusalText[why]);
}
