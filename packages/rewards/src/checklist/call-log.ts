import { join } from "node:path";
import { z } from "zod";
import { JsonlAppender, readJsonlRecords } from "../jsonl-file.js";
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
  private readonly file: JsonlAppender;

  constructor(readonly path: string) {
    this.file = new JsonlAppender(path);
  }

  static inRunDir(runDir: string): JudgeCallLog {
    return new JudgeCallLog(judgeCallLogPath(runDir));
  }

  append(record: JudgeCallRecord): Promise<void> {
    return this.file.append(record);
  }

  flush(): Promise<void> {
    return this.file.flush();
  }

  /** Read a call log back (for reports); unreadable lines are skipped and counted. */
  static async read(path: string): Promise<{ records: JudgeCallRecord[]; skipped: number }> {
    const { records, skipped } = await readJsonlRecords(path, JudgeCallRecord);
    return { records, skipped: skipped.length };
  }
}
