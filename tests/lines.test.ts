/**
 * The one bounded NDJSON framer (src/common/lines.ts, issue 27 #5), used by the MCP server on stdio and the tool
 * relay: lines whole whatever the chunks, a multibyte character split between chunks, a line over the limit reported
 * once as null without being held, and a stop that keeps the rest.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LineFramer } from "../src/common/lines.js";

const text = '{"a":1}\n\n{"b":"é€😀"}\r\nlast\n';

test("the same lines whatever the chunks: split at every byte, and byte by byte", () => {
  const bytes = Buffer.from(text, "utf8");
  const expected = ['{"a":1}', "", '{"b":"é€😀"}\r', "last"];
  for (let cut = 0; cut <= bytes.length; cut++) {
    const got: (string | null)[] = [];
    const f = new LineFramer(64, (l) => void got.push(l));
    f.push(bytes.subarray(0, cut));
    f.push(bytes.subarray(cut));
    assert.deepEqual(got, expected, `cut at ${cut}`);
  }
  const got: (string | null)[] = [];
  const f = new LineFramer(64, (l) => void got.push(l));
  for (const b of bytes) f.push(Buffer.from([b]));
  assert.deepEqual(got, expected, "byte by byte");
});

test("a line over the limit is null, once, and the next line is whole; a line of exactly the limit passes", () => {
  for (const chunk of [1, 3, 1000]) {
    const got: (string | null)[] = [];
    const f = new LineFramer(5, (l) => void got.push(l));
    const bytes = Buffer.from("12345\n123456789\nok\n");
    for (let i = 0; i < bytes.length; i += chunk) f.push(bytes.subarray(i, i + chunk));
    assert.deepEqual(got, ["12345", null, "ok"], `chunks of ${chunk}`);
  }
});

test("a handler's stop ends the framing and keeps the rest of that chunk", () => {
  const got: (string | null)[] = [];
  const f = new LineFramer(64, (l) => (got.push(l), l === "admitted" ? "stop" : undefined));
  f.push(Buffer.from("prove\nadmitted\n{\"first\":1}\npartial"));
  f.push(Buffer.from("\nnever\n"));
  assert.deepEqual(got, ["prove", "admitted"]);
  assert.equal(f.rest.toString(), '{"first":1}\npartial');
});
