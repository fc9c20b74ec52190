import { join } from "node:path";
import { JsonLinesFile, type TornLine } from "@envace/records";
import { z } from "zod";
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
  private file: JsonLinesFile<z.output<typeof CacheLine>> | undefined;
  private loading: Promise<void> | undefined;
  private readonly tornLines: TornLine[] = [];

  constructor(readonly path?: string) {}

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
    this.file?.append({ key, verdict });
  }

  /** Verdicts held. */
  async size(): Promise<number> {
    await this.load();
    return this.entries.size;
  }

  /** The last line of the file when a crash cut it short: dropped from the file, and its item is re-judged. */
  async skipped(): Promise<readonly TornLine[]> {
    await this.load();
    return this.tornLines;
  }

  private load(): Promise<void> {
    // A bad file rejects every lookup with its error, as the executor's throw rejects the promise.
    this.loading ??= new Promise((resolve) => {
      if (this.path !== undefined) {
        this.file = JsonLinesFile.open(this.path, CacheLine, { onTornLine: (torn) => this.tornLines.push(torn) });
        for (const { key, verdict } of this.file.records) this.entries.set(key, verdict);
      }
      resolve();
    });
    return this.loading;
  }
}
