/**
 * Issue 32 (a start's cost): a hub start like the last one writes neither the home's record of code folders nor the
 * user's list of known homes — each write synced the disk, a tenth of a start — while a start with anything new still
 * records it first.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.js";
import { homePaths } from "../src/host/home.js";
import { readCodeFolders, recordCodeFolders } from "../src/host/code-folders.js";
import { knownHomesFile, recordKnownHome } from "../src/worker/known-homes.js";

const inode = (file: string) => statSync(file).ino;

test("a start like the last one leaves code-folders.json as it was (the same file: not rewritten); a new folder is written first", () => {
  const h = homePaths(tempDir("aa-start-writes-"));
  mkdirSync(h.dir, { recursive: true });
  recordCodeFolders(h, { folders: ["/a", "/b"], homes: ["/home/u"] });
  const first = inode(h.codeFolders);
  assert.deepEqual(recordCodeFolders(h, { folders: ["/a", "/b"], homes: ["/home/u"] }), { folders: ["/a", "/b"], homes: ["/home/u"] });
  assert.equal(inode(h.codeFolders), first, "written atomically again (a new file) though nothing changed");
  recordCodeFolders(h, { folders: ["/c"], homes: ["/home/u"] });
  assert.notEqual(inode(h.codeFolders), first);
  assert.deepEqual(readCodeFolders(h), { folders: ["/c", "/a", "/b"], homes: ["/home/u"] });
  // A record that is not this user's private regular file is written anew though its lines are the same.
  chmodSync(h.codeFolders, 0o644);
  const loose = inode(h.codeFolders);
  recordCodeFolders(h, { folders: ["/c", "/a", "/b"], homes: ["/home/u"] });
  assert.deepEqual([inode(h.codeFolders) !== loose, statSync(h.codeFolders).mode & 0o777], [true, 0o600]);
  // The same folders in another order (a start whose PATH changed order): written, newest first.
  const before = inode(h.codeFolders);
  recordCodeFolders(h, { folders: ["/b"], homes: ["/home/u"] });
  assert.notEqual(inode(h.codeFolders), before);
  assert.deepEqual(readCodeFolders(h), { folders: ["/b", "/c", "/a"], homes: ["/home/u"] });
});

test("a start like the last one leaves the known-homes list as it was; another home, or this one not first, is written", () => {
  const user = tempDir("aa-start-writes-user-");
  const [one, two] = [join(user, "one"), join(user, "two")];
  mkdirSync(one);
  mkdirSync(two);
  const file = join(user, knownHomesFile);
  recordKnownHome(one, [user]);
  const first = inode(file);
  recordKnownHome(one, [user]);
  assert.equal(inode(file), first);
  recordKnownHome(two, [user]);
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { homes: [two, one] });
  // A list that is a link is replaced by a file of its own.
  const elsewhere = join(user, "elsewhere.json");
  writeFileSync(elsewhere, readFileSync(file));
  rmSync(file);
  symlinkSync(elsewhere, file);
  recordKnownHome(two, [user]);
  assert.equal(lstatSync(file).isFile(), true);
  const second = inode(file);
  recordKnownHome(one, [user]);
  assert.notEqual(inode(file), second);
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { homes: [one, two] });
});
