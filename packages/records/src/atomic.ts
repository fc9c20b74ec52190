import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { crashPoint } from "./crash-points.js";

/**
 * Whole files and folders replaced so that a crash at any instant leaves the old version or the
 * new one, never a mix: new contents go to a temporary name in the same folder, are fsynced, and
 * only then renamed over the name; the folder is fsynced so the rename itself is on disk.
 */

/** Flush a folder's entries (names created, renamed or removed) to disk. */
export function fsyncDirectory(dir: string): void {
  // Windows cannot open a folder for fsync; its renames are flushed with the file system's journal.
  if (process.platform === "win32") return;
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write `data` to `file` atomically, creating its folder: a temporary file beside it is written
 * and fsynced, renamed over `file`, and the folder fsynced. A crash leaves the old contents or the
 * new (and at worst a stray `.<name>.*.tmp` beside it), never a half-written file.
 */
export function writeFileAtomically(file: string, data: string | Uint8Array): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  // A unique name: two writers of the same file never write into one temporary file.
  const temporary = join(dir, `.${basename(file)}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  try {
    const fd = openSync(temporary, "w");
    try {
      writeFileSync(fd, data);
      crashPoint("file:written");
      // The rename must not reach the disk before the contents it names.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    crashPoint("file:synced");
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  crashPoint("file:renamed");
  fsyncDirectory(dir);
  crashPoint("file:done");
}

/** Where `replaceDirectory` builds the new folder, and where it keeps the old one during the swap. */
function swapNames(dir: string): { partial: string; old: string } {
  const parent = dirname(dir);
  return { partial: join(parent, `.${basename(dir)}.partial`), old: join(parent, `.${basename(dir)}.old`) };
}

/**
 * The folder to read for `dir`: `dir` itself, or, when a replacement was cut off between moving
 * the old folder aside and renaming the new one in, the old one. Changes nothing on disk.
 */
export function readableDirectory(dir: string): string {
  if (existsSync(dir)) return dir;
  const { old } = swapNames(dir);
  return existsSync(old) ? old : dir;
}

/**
 * Finish a replacement of `dir` that a crash cut off: the old folder moved aside is put back when
 * the new one never arrived, and dropped when it did; a half-built new folder is removed.
 */
export function recoverDirectory(dir: string): void {
  const { partial, old } = swapNames(dir);
  if (existsSync(old)) {
    if (existsSync(dir)) rmSync(old, { recursive: true, force: true });
    else renameSync(old, dir);
    fsyncDirectory(dirname(dir));
  }
  rmSync(partial, { recursive: true, force: true });
}

/** fsync every file and folder under `dir`, folders after their contents. */
function fsyncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) fsyncTree(path);
    else if (entry.isFile()) {
      const fd = openSync(path, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  }
  fsyncDirectory(dir);
}

/**
 * Replace the folder `dir` with one that `fill` writes, so that at every instant a complete folder
 * exists under `dir` or, during the swap, beside it as `.<name>.old` (see `readableDirectory` and
 * `recoverDirectory`). `fill` writes into a temporary folder; its files are fsynced; then the old
 * folder is moved aside, the new one renamed in, and the old one deleted. One writer per `dir`.
 */
export async function replaceDirectory(dir: string, fill: (temporary: string) => Promise<void>): Promise<void> {
  const parent = dirname(dir);
  const { partial, old } = swapNames(dir);
  mkdirSync(parent, { recursive: true });
  recoverDirectory(dir);
  mkdirSync(partial);
  try {
    await fill(partial);
    fsyncTree(partial);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  crashPoint("dir:synced");
  if (existsSync(dir)) {
    renameSync(dir, old);
    fsyncDirectory(parent);
    crashPoint("dir:old-moved");
  }
  renameSync(partial, dir);
  fsyncDirectory(parent);
  crashPoint("dir:renamed");
  rmSync(old, { recursive: true, force: true });
  crashPoint("dir:done");
}
