/**
 * Where a text stops being JSON (issue 26 round 10): V8's `JSON.parse` error quotes the text around the fault
 * (`Unexpected token 'g', ..."text": ghp_h2"... is not valid JSON`), and a message quoting an agent's (or a plugin's, a
 * repository's) text put ~10 characters of a run's secret on a card, never whole and so never redacted. Callers say
 * the line and column this finds instead, never the parser's message.
 */

/** A position in a text: line and column from 1, the column counted in code points. */
export interface TextPosition {
  line: number;
  column: number;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/**
 * The offset (UTF-16 index) of the first character at which `text` is not JSON (RFC 8259, as `JSON.parse` reads it:
 * whitespace around, one value), its length when it ends too early, or null when it is JSON. Linear, no recursion.
 */
export function jsonErrorOffset(text: string): number | null {
  const n = text.length;
  let i = 0;
  const stack: string[] = []; // "{" or "["
  const skip = () => {
    while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i += 1;
  };
  // One string from text[i] === '"': true when it closed, else i is the fault.
  const string = (): boolean => {
    i += 1;
    while (i < n) {
      const c = text[i]!;
      if (c === '"') {
        i += 1;
        return true;
      }
      if (c < " ") return false;
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          for (let k = 2; k < 6; k += 1) if (!isHex(text[i + k])) return ((i += k), false);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return ((i += 1), false);
      } else i += 1;
    }
    return false;
  };
  const digits = () => {
    while (isDigit(text[i])) i += 1;
  };
  // One value at text[i]: a scalar is read whole; a container is opened. False: i is the fault.
  const value = (): boolean => {
    const c = text[i];
    if (c === '"') return string();
    if (c === "{" || c === "[") {
      stack.push(c);
      i += 1;
      return true;
    }
    for (const word of ["true", "false", "null"]) {
      if (c !== word[0]) continue;
      for (let k = 0; k < word.length; k += 1) if (text[i + k] !== word[k]) return ((i += k), false);
      i += word.length;
      return true;
    }
    if (c === "-" || isDigit(c)) {
      if (c === "-") i += 1;
      if (text[i] === "0") i += 1;
      else if (isDigit(text[i])) digits();
      else return false;
      if (text[i] === ".") {
        i += 1;
        if (!isDigit(text[i])) return false;
        digits();
      }
      if (text[i] === "e" || text[i] === "E") {
        i += 1;
        if (text[i] === "+" || text[i] === "-") i += 1;
        if (!isDigit(text[i])) return false;
        digits();
      }
      return true;
    }
    return false;
  };
  // What comes next: a value, a key (after "{" or an object's ","), or what follows a value.
  let want: "value" | "key" | "firstKey" | "firstValue" | "after" = "value";
  for (;;) {
    skip();
    if (i >= n) return stack.length === 0 && want === "after" ? null : n;
    const c = text[i];
    if (want === "firstKey" && c === "}") {
      stack.pop();
      i += 1;
      want = "after";
    } else if (want === "firstValue" && c === "]") {
      stack.pop();
      i += 1;
      want = "after";
    } else if (want === "key" || want === "firstKey") {
      if (c !== '"' || !string()) return i;
      skip();
      if (text[i] !== ":") return i;
      i += 1;
      want = "value";
    } else if (want === "value" || want === "firstValue") {
      const opened = c === "{" ? "firstKey" : c === "[" ? "firstValue" : "after";
      if (!value()) return i;
      want = opened;
    } else {
      const top = stack[stack.length - 1];
      if (top === undefined) return i;
      if (c === ",") {
        i += 1;
        want = top === "{" ? "key" : "value";
      } else if (c === (top === "{" ? "}" : "]")) {
        stack.pop();
        i += 1;
      } else return i;
    }
  }
}

/** The line and column (from 1; columns in code points) of UTF-16 offset `offset` of `text`. */
export function positionOf(text: string, offset: number): TextPosition {
  const before = text.slice(0, offset);
  const lastBreak = before.lastIndexOf("\n");
  return { line: before.split("\n").length, column: [...before.slice(lastBreak + 1)].length + 1 };
}

/**
 * `JSON.parse(text)`, or where it is not JSON (`jsonErrorOffset`; the end when that scanner and V8 disagree), never
 * the parser's message, which quotes the text.
 */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; at: TextPosition } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, at: positionOf(text, jsonErrorOffset(text) ?? text.length) };
  }
}
