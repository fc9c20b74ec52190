import { join } from "node:path";
import { z } from "zod";
import { JsonlAppender, readJsonlRecords, type SkippedLine } from "../jsonl-file.js";
import { JudgeVerdict } from "./verdict.js";

/** Where judge verdicts are kept, by content address. Implement it to share a cache across machines. */
export interface VerdictStore {
  get(key: string): Promise<JudgeVerdict | undefined>;
  set(key: string, verdict: JudgeVerdict): Promise<void>;
}

const CacheLine = z.object({ key: z.string().min(1), verdict: JudgeVerdict });

/** The file a run directory keeps its verdict cache in. */
export function verdictCachePath(runDir: string): string {
  return join(runDir, "judge", "verdicts.jsonl");
}

/**
 * Judge verdicts by content address, kept in memory and, given a file, appended to it as JSON
 * Lines, so re-scoring a run (in this process or a later one) asks the judge nothing. Only
 * successful verdicts are stored: a failed call is asked again next time.
 */
export class VerdictCache implements VerdictStore {
  private readonly entries = new Map<string, JudgeVerdict>();
  private readonly file: JsonlAppender | undefined;
  private loading: Promise<void> | undefined;
  private skippedLines: SkippedLine[] = [];

  constructor(readonly path?: string) {
    this.file = path === undefined ? undefined : new JsonlAppender(path);
  }

  /** A cache in the run directory's `judge/verdicts.jsonl`. */
  static inRunDir(runDir: string): VerdictCache {
    return new VerdictCache(verdictCachePath(runDir));
  }

  async get(key: string): Promise<JudgeVerdict | undefined> {
    await this.load();
    return this.entries.get(key);
  }

  async set(key: string, verdict: JudgeVerdict): Promise<void> {
    await this.load();
    if (this.entries.has(key)) return;
    this.entries.set(key, verdict);
    await this.file?.append({ key, verdict });
  }

  /** Verdicts held. */
  async size(): Promise<number> {
    await this.load();
    return this.entries.size;
  }

  /** Lines of the file that could not be read (a line torn by a crash, say); they are re-judged. */
  async skipped(): Promise<readonly SkippedLine[]> {
    await this.load();
    return this.skippedLines;
  }

  private load(): Promise<void> {
    this.loading ??= (async () => {
      if (this.path === undefined) return;
      const { records, skipped } = await readJsonlRecords(this.path, CacheLine);
      for (const { key, verdict } of records) this.entries.set(key, verdict);
      this.skippedLines = skipped;
    })();
    return this.loading;
  }
}
