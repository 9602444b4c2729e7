/**
 * Maps the keys of a TOML document to the lines that define them, so that a manifest error can name its line
 * (issue 16: "refused naming the key and line"). The TOML library parses; this only scans lines for table headers
 * (`[a.b]`, `[[a.b]]`) and `key =` lines, skipping the inside of multi-line strings and arrays.
 *
 * Keys are written like `capabilities.tools[0].parameters` (array-of-tables entries get their index).
 */

/** Key path → 1-based line. */
export type LineIndex = Map<string, number>;

const bareKey = /^[A-Za-z0-9_-]+/;

/** Reads one dotted key at the start of `s`; returns its parts and the rest, or null when `s` does not start with one. */
function readKey(s: string): { parts: string[]; rest: string } | null {
  const parts: string[] = [];
  let rest = s.trimStart();
  for (;;) {
    let m: RegExpExecArray | null;
    if (rest.startsWith('"')) {
      m = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
      if (!m) return null;
      parts.push(JSON.parse(`"${m[1]}"`) as string);
    } else if (rest.startsWith("'")) {
      m = /^'([^']*)'/.exec(rest);
      if (!m) return null;
      parts.push(m[1]!);
    } else {
      m = bareKey.exec(rest);
      if (!m) return null;
      parts.push(m[0]);
    }
    rest = rest.slice(m[0].length).trimStart();
    if (!rest.startsWith(".")) return { parts, rest };
    rest = rest.slice(1).trimStart();
  }
}

/** Writes a key path like the validator names keys: `a.b[2].c`. */
export function keyPath(parts: (string | number)[]): string {
  let out = "";
  for (const p of parts) out += typeof p === "number" ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/**
 * Scans `text` for the lines of its keys. Bracket depth and multi-line strings are tracked so that the lines inside a
 * value are not read as keys; a line it cannot read is skipped (the TOML parser reports real syntax errors).
 */
export function indexLines(text: string): LineIndex {
  const index: LineIndex = new Map();
  const arrayCounts = new Map<string, number>();
  let table: (string | number)[] = [];
  let depth = 0; // open [ and { of a value spanning lines
  let inString: '"""' | "'''" | null = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (inString || depth > 0) {
      ({ depth, inString } = scanValue(line, depth, inString));
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const header = /^\[\[?/.exec(trimmed);
    if (header) {
      const isArray = header[0] === "[[";
      const key = readKey(trimmed.slice(header[0].length));
      if (!key) continue;
      const path = keyPath(key.parts);
      if (isArray) {
        const n = arrayCounts.get(path) ?? 0;
        arrayCounts.set(path, n + 1);
        table = [...key.parts, n];
        if (!index.has(path)) index.set(path, i + 1);
      } else {
        table = resolveTable(key.parts, arrayCounts);
      }
      index.set(keyPath(table), i + 1);
      continue;
    }
    const key = readKey(trimmed);
    if (!key || !key.rest.startsWith("=")) continue;
    const path = keyPath([...table, ...key.parts]);
    if (!index.has(path)) index.set(path, i + 1);
    ({ depth, inString } = scanValue(key.rest.slice(1), 0, null));
  }
  return index;
}

/**
 * A `[a.b]` header under an array of tables (`[[a]]` then `[a.b]`) names the sub-table of the array's last entry:
 * `a[<last>].b`.
 */
function resolveTable(parts: string[], arrayCounts: Map<string, number>): (string | number)[] {
  const out: (string | number)[] = [];
  const plain: string[] = [];
  for (const p of parts) {
    out.push(p);
    plain.push(p);
    const n = arrayCounts.get(keyPath(plain));
    if (n !== undefined) {
      out.push(n - 1);
      plain.push(String(n - 1));
    }
  }
  return out;
}

/** Follows a value across one line: bracket depth outside strings, and whether a multi-line string stays open. */
function scanValue(s: string, depth: number, inString: '"""' | "'''" | null): { depth: number; inString: '"""' | "'''" | null } {
  let i = 0;
  while (i < s.length) {
    if (inString) {
      const end = s.indexOf(inString, i);
      if (end < 0) return { depth, inString };
      i = end + 3;
      inString = null;
      continue;
    }
    const c = s[i]!;
    if (c === "#") break;
    if (s.startsWith('"""', i) || s.startsWith("'''", i)) {
      inString = s.slice(i, i + 3) as '"""' | "'''";
      i += 3;
      continue;
    }
    if (c === '"' || c === "'") {
      const close = c === '"' ? /^"(?:[^"\\]|\\.)*"/.exec(s.slice(i)) : /^'[^']*'/.exec(s.slice(i));
      i += close ? close[0].length : s.length;
      continue;
    }
    if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth = Math.max(0, depth - 1);
    i++;
  }
  return { depth, inString };
}

/**
 * The line of `key`, else of its nearest ancestor that has one (`a.b[0].c` → `a.b[0]` → `a.b` → `a`), else the first
 * line of a key below it (a table only defined through a longer header), else null.
 */
export function lineOf(index: LineIndex, key: string): number | null {
  let k = key;
  for (;;) {
    const line = index.get(k);
    if (line !== undefined) return line;
    const cut = Math.max(k.lastIndexOf("."), k.lastIndexOf("["));
    if (cut <= 0) break;
    k = k.slice(0, cut);
  }
  let first: number | null = null;
  for (const [k2, line] of index) {
    if ((k2.startsWith(`${key}.`) || k2.startsWith(`${key}[`)) && (first === null || line < first)) first = line;
  }
  return first;
}
