/**
 * Release tags (protocol.md 版本与兼容): `vX.Y.Z`, or `vX.Y.Z-rc.N` for a trial release that install and update never
 * take. Other tags are not releases.
 */

/** A release tag's parts; `rc` is null for a release, N for `-rc.N`. */
export interface VersionTag { major: number; minor: number; patch: number; rc: number | null }

const tagPattern = /^v(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-rc\.([1-9]\d{0,8}))?$/;

/** The parts of a release tag, or null for any other text. */
export function parseVersionTag(tag: string): VersionTag | null {
  const m = tagPattern.exec(tag);
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), rc: m[4] === undefined ? null : Number(m[4]) };
}

/** Orders two release tags (an `-rc` before its release); a text that is no release tag sorts first. */
export function compareVersions(a: string, b: string): number {
  const x = parseVersionTag(a);
  const y = parseVersionTag(b);
  if (!x || !y) return (x ? 1 : 0) - (y ? 1 : 0);
  const rc = (v: VersionTag) => (v.rc === null ? Number.MAX_SAFE_INTEGER : v.rc);
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch || rc(x) - rc(y);
}

/** The newest release among `tags` — never an `-rc` and never a tag of another form — or null when there is none. */
export function newestRelease(tags: readonly string[]): string | null {
  const releases = tags.filter((tag) => parseVersionTag(tag)?.rc === null).sort(compareVersions);
  return releases.at(-1) ?? null;
}
