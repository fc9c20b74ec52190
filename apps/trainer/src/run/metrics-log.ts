import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { RecordError } from "@envace/protocol";

/** One line of `metrics.jsonl`: a phase, a step and any nested numeric metrics. */
export interface MetricsRecord {
  /** `sft`, `train` or `eval`. */
  kind: string;
  step: number;
  [key: string]: unknown;
}

/**
 * An append-only JSON Lines log. Each record is written and flushed to disk before `append`
 * returns, so a crash loses at most the record being written; a torn last line is dropped when
 * the log is reopened.
 */
export class MetricsLog {
  private constructor(
    readonly path: string,
    private records: MetricsRecord[],
  ) {}

  /** Open (or create) the log; records `keep` rejects (work that will be redone) are dropped. */
  static open(path: string, options: { keep?: (record: MetricsRecord) => boolean } = {}): MetricsLog {
    const { records, torn } = readMetrics(path);
    const keep = options.keep;
    const kept = keep === undefined ? records : records.filter(keep);
    if (torn || kept.length !== records.length) rewrite(path, kept);
    return new MetricsLog(path, kept);
  }

  append(record: MetricsRecord): void {
    const fd = openSync(this.path, "a");
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.records.push(record);
  }

  all(): readonly MetricsRecord[] {
    return this.records;
  }
}

/** Read a metrics log, tolerating a last line cut short by a crash. */
export function readMetrics(path: string): { records: MetricsRecord[]; torn: boolean } {
  if (!existsSync(path)) return { records: [], torn: false };
  const lines = readFileSync(path, "utf8").split("\n");
  const records: MetricsRecord[] = [];
  let torn = false;
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      const isLast = lines.slice(index + 1).every((rest) => rest.trim() === "");
      if (!isLast) throw new RecordError({ file: path, line: index + 1 }, [{ path: "", message: "not a JSON record" }]);
      torn = true;
      return;
    }
    if (!isRecord(value)) throw new RecordError({ file: path, line: index + 1 }, [{ path: "", message: 'a metrics record needs "kind" (string) and "step" (number)' }]);
    records.push(value);
  });
  return { records, torn };
}

function isRecord(value: unknown): value is MetricsRecord {
  if (typeof value !== "object" || value === null) return false;
  const { kind, step } = value as { kind?: unknown; step?: unknown };
  return typeof kind === "string" && typeof step === "number";
}

function rewrite(path: string, records: readonly MetricsRecord[]): void {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, "w");
  try {
    writeSync(fd, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}
