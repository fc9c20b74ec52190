import { join } from "node:path";
import { JsonLinesFile, readJsonLines, type TornLine } from "@envace/records";
import { z } from "zod";
import { JudgeVerdict } from "./verdict.js";

/** One verdict lookup: a call to the judge, or a hit in the verdict cache. */
export const JudgeCallRecord = z.object({
  /** ISO time the lookup finished. */
  time: z.string(),
  /** The content address of the request (see `judgeRequestKey`). */
  key: z.string(),
  model: z.string(),
  source: z.enum(["judge", "cache"]),
  task: z.string(),
  /** The trajectory's id; absent when a plain message list was scored. */
  trajectory: z.string().optional(),
  checklist: z.number().int().nonnegative(),
  turn: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
  item: z.string(),
  /** HTTP attempts made; 0 for a cache hit. */
  attempts: z.number().int().nonnegative(),
  latencyMs: z.number().nonnegative(),
  verdict: JudgeVerdict.nullable(),
  error: z.string().nullable(),
});
export type JudgeCallRecord = z.infer<typeof JudgeCallRecord>;

/** The file a run directory keeps its judge-call record in. */
export function judgeCallLogPath(runDir: string): string {
  return join(runDir, "judge", "calls.jsonl");
}

/** An append-only JSON Lines record of every verdict lookup. */
export class JudgeCallLog {
  private file: JsonLinesFile<JudgeCallRecord> | undefined;

  constructor(readonly path: string) {}

  static inRunDir(runDir: string): JudgeCallLog {
    return new JudgeCallLog(judgeCallLogPath(runDir));
  }

  /** Resolves once the record is written (appends are synchronous; the promise keeps callers' `await`s meaningful). */
  append(record: JudgeCallRecord): Promise<void> {
    // Opened at the first append, so a run that never judges leaves no file behind.
    this.file ??= JsonLinesFile.open(this.path, JudgeCallRecord);
    this.file.append(record);
    return Promise.resolve();
  }

  /** Every append has been written by the time it resolves; kept for callers that flush before reading. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  /** Read a call log back (for reports); `skipped` counts a last line cut short by a crash (0 or 1). */
  static read(path: string): Promise<{ records: JudgeCallRecord[]; skipped: number }> {
    const torn: TornLine[] = [];
    const records = readJsonLines(path, JudgeCallRecord, { source: "own", onTornLine: (line) => torn.push(line) });
    return Promise.resolve({ records, skipped: torn.length });
  }
}
