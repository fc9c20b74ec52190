/**
 * The kept-rollouts files of a run directory: `rollouts/train.jsonl` and `rollouts/eval.jsonl`,
 * append-only JSON Lines under `@envace/records`' torn-line rule, bounded by a size cap.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { JsonLinesFile, readJsonLines, type TornLine } from "@envace/records";
import { z } from "zod";
import { KeptEvalRecord, KeptTrainRecord, type KeptRecord } from "./record.js";

export const KEPT_DIR = "rollouts";
const FILES = { train: "train.jsonl", eval: "eval.jsonl" } as const;

/** What reopening needs of a line: its kind and step (the trajectories are validated when read). */
const Header = z.looseObject({ kind: z.string(), step: z.number() });

export function keptPath(runDir: string, kind: KeptRecord["kind"]): string {
  return join(runDir, KEPT_DIR, FILES[kind]);
}

export interface KeptRolloutsOptions {
  /** The cap on both files together, in bytes. */
  maxBytes: number;
  /** Records to keep when reopening (work that will be redone is dropped). Default: all. */
  keep?: (record: { kind: string; step: number }) => boolean;
  /** Where the one line saying the cap was reached goes. */
  log: (line: string) => void;
  onTornLine?: (torn: TornLine) => void;
}

/** The writer of a run's kept rollouts. Appends stop, with one log line, once the cap is reached. */
export class KeptRollouts {
  private full = false;

  private constructor(
    private readonly files: Record<KeptRecord["kind"], JsonLinesFile<unknown, string>>,
    private bytes: number,
    private readonly options: KeptRolloutsOptions,
  ) {}

  static open(runDir: string, options: KeptRolloutsOptions): KeptRollouts {
    const open = (kind: KeptRecord["kind"]): JsonLinesFile<unknown, string> => {
      const path = keptPath(runDir, kind);
      const file = JsonLinesFile.open(path, Header, { serialize: (line: string) => line, onTornLine: options.onTornLine });
      const keep = options.keep;
      if (keep !== undefined && existsSync(path)) {
        const kept = file.records.filter((r) => keep(r));
        if (kept.length !== file.records.length) file.rewrite(kept.map((r) => JSON.stringify(r)));
      }
      return file;
    };
    const files = { train: open("train"), eval: open("eval") };
    const size = (kind: KeptRecord["kind"]) => (existsSync(keptPath(runDir, kind)) ? statSync(keptPath(runDir, kind)).size : 0);
    return new KeptRollouts(files, size("train") + size("eval"), options);
  }

  /** Bytes written to both files so far (those of earlier, resumed, runs included). */
  get size(): number {
    return this.bytes;
  }

  /** Append each record as one line, until the next would pass the cap. Returns how many were written. */
  append(records: readonly KeptRecord[]): number {
    let written = 0;
    for (const record of records) {
      if (this.full) break;
      const line = JSON.stringify(record);
      const bytes = Buffer.byteLength(line, "utf8") + 1;
      if (this.bytes + bytes > this.options.maxBytes) {
        this.full = true;
        this.options.log(
          `kept rollouts: the cap of ${formatMb(this.options.maxBytes)} (rollout.keep_max_mb) is reached at ${record.kind} step ${record.step}; no more rollouts are kept in this run`,
        );
        break;
      }
      this.files[record.kind].append(line);
      this.bytes += bytes;
      written += 1;
    }
    return written;
  }
}

function formatMb(bytes: number): string {
  return `${Number((bytes / 1_000_000).toFixed(3))} MB`;
}

/** A run's kept rollouts, every record validated against its schema (a torn last line is dropped with a warning). */
export function readKept(runDir: string, { onTornLine }: { onTornLine?: (torn: TornLine) => void } = {}): { train: KeptTrainRecord[]; eval: KeptEvalRecord[] } {
  // Files this project appended to itself: a torn last line is an interrupted append, not an error.
  const options = { source: "own" as const, onTornLine };
  return {
    train: readJsonLines(keptPath(runDir, "train"), KeptTrainRecord, options),
    eval: readJsonLines(keptPath(runDir, "eval"), KeptEvalRecord, options),
  };
}
