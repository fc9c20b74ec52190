import { JsonLinesFile, readJsonLines, type TornLine } from "@envace/records";
import { z } from "zod";

/** One line of `metrics.jsonl`: a phase (`sft`, `train` or `eval`), a step and any nested numeric metrics. */
export const MetricsRecord = z.looseObject({ kind: z.string(), step: z.number() });
export type MetricsRecord = z.infer<typeof MetricsRecord>;

/**
 * An append-only JSON Lines log. Each record is flushed to disk before `append` returns, so a
 * crash loses at most the record being written; that torn last line is dropped (with a warning)
 * when the log is reopened.
 */
export class MetricsLog {
  private constructor(
    private readonly file: JsonLinesFile<MetricsRecord>,
    private readonly records: MetricsRecord[],
  ) {}

  /** Open (or create) the log; records `keep` rejects (work that will be redone) are dropped from it. */
  static open(path: string, options: { keep?: (record: MetricsRecord) => boolean; onTornLine?: (torn: TornLine) => void } = {}): MetricsLog {
    const file = JsonLinesFile.open(path, MetricsRecord, { durable: true, onTornLine: options.onTornLine });
    const kept = options.keep === undefined ? file.records : file.records.filter(options.keep);
    if (kept.length !== file.records.length) file.rewrite(kept);
    return new MetricsLog(file, [...kept]);
  }

  get path(): string {
    return this.file.path;
  }

  append(record: MetricsRecord): void {
    this.file.append(record);
    this.records.push(record);
  }

  all(): readonly MetricsRecord[] {
    return this.records;
  }
}

/** Read a metrics log (for reports and tests), leaving it as it is; `torn`: its last line was cut short by a crash and dropped. */
export function readMetrics(path: string): { records: MetricsRecord[]; torn: boolean } {
  let torn = false;
  const records = readJsonLines(path, MetricsRecord, {
    source: "own",
    onTornLine: () => {
      torn = true;
    },
  });
  return { records, torn };
}
