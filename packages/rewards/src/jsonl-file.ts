import { appendFile, mkdir, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { z } from "zod";

/**
 * An append-only JSON Lines file that never loses what was written before: it only ever opens
 * the file for appending, writes each record as one line in one write, serialises its own
 * appends, and, if an earlier process died mid-line, starts on a fresh line instead of gluing a
 * record onto the torn one.
 */
export class JsonlAppender {
  private queue: Promise<void> = Promise.resolve();
  private checkedTail = false;

  /** `durable` flushes every line to disk (fdatasync) before the append resolves. */
  constructor(
    readonly path: string,
    private readonly options: { durable?: boolean } = {},
  ) {}

  append(record: unknown): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const next = this.queue.then(() => this.write(line));
    // A failed append must not poison the ones queued after it; the caller still sees its error.
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Resolves once every append issued so far has been written. */
  flush(): Promise<void> {
    return this.queue;
  }

  private async write(line: string): Promise<void> {
    if (!this.checkedTail) {
      await mkdir(dirname(this.path), { recursive: true });
      if (!(await endsWithNewline(this.path))) line = `\n${line}`;
      this.checkedTail = true;
    }
    if (!this.options.durable) {
      await appendFile(this.path, line, "utf8");
      return;
    }
    const handle = await open(this.path, "a");
    try {
      await handle.write(line);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }
}

/**
 * True for a missing or empty file, or one whose last byte is a newline: false means an earlier
 * writer died mid-line, and the next record must start on a fresh line.
 */
export async function endsWithNewline(path: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return true;
    const buffer = Buffer.alloc(1);
    await handle.read(buffer, 0, 1, size - 1);
    return buffer[0] === 0x0a;
  } finally {
    await handle.close();
  }
}

/** A line of a JSON Lines file that could not be used, and why. */
export interface SkippedLine {
  line: number;
  reason: string;
}

/**
 * Read the records of a JSON Lines file written by `JsonlAppender`. Lines that are not JSON (a
 * line torn by a crash) or that fail `schema` are skipped and reported, never fatal: what these
 * files hold can always be recomputed. A missing file reads as empty.
 */
export async function readJsonlRecords<S extends z.ZodType>(
  path: string,
  schema: S,
): Promise<{ records: z.output<S>[]; skipped: SkippedLine[] }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { records: [], skipped: [] };
    throw error;
  }
  const records: z.output<S>[] = [];
  const skipped: SkippedLine[] = [];
  text.split("\n").forEach((raw, index) => {
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      skipped.push({ line: index + 1, reason: "not JSON (torn or corrupt line)" });
      return;
    }
    const result = schema.safeParse(value);
    if (result.success) records.push(result.data);
    else skipped.push({ line: index + 1, reason: result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") });
  });
  return { records, skipped };
}
