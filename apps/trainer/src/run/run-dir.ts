import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recoverDirectory, replaceDirectory, RunDirectoryError, writeFileAtomically } from "@envace/records";
import { MetricsLog } from "./metrics-log.js";

const STEP_DIR = /^step-(\d{6})$/;

/**
 * A run directory: `config.json` (the resolved config), `metrics.jsonl`, `checkpoints/` (`sft/`
 * and `step-NNNNNN/`), `eval/` and `report.html`. A run that is started again in the same directory
 * resumes from its last complete checkpoint; metrics of steps after it are dropped and redone.
 */
export class RunDirectory {
  readonly metrics: MetricsLog;

  private constructor(
    readonly path: string,
    /** Last step with a complete checkpoint (0: none yet). */
    readonly resumeStep: number,
  ) {
    // A checkpoint closes a phase: the warm start (its SFT records and the step-0 evaluation), or a
    // step (its train and eval records). Records of a phase without one are redone, so dropped.
    const warm = this.hasCheckpoint("sft");
    this.metrics = MetricsLog.open(join(path, "metrics.jsonl"), {
      keep: (r) => warm && (r.kind === "sft" || r.step <= resumeStep),
    });
  }

  /**
   * Open `path` for `config`. A directory holding a different config is refused, so a rerun can
   * never mix two experiments; its contents are left untouched.
   */
  static open(path: string, config: unknown): RunDirectory {
    mkdirSync(join(path, "checkpoints"), { recursive: true });
    const configPath = join(path, "config.json");
    const text = `${JSON.stringify(config, null, 2)}\n`;
    if (existsSync(configPath)) {
      const existing = readFileSync(configPath, "utf8");
      if (existing !== text) {
        throw new RunDirectoryError(`${path} holds a run with a different config (${configPath}); use a new --out directory or the same config to resume`);
      }
    } else {
      writeFileAtomically(configPath, text);
    }
    recoverCheckpoints(join(path, "checkpoints"));
    return new RunDirectory(path, latestStep(join(path, "checkpoints")));
  }

  get resuming(): boolean {
    return this.hasCheckpoint("sft");
  }

  checkpointPath(name: string): string {
    return join(this.path, "checkpoints", name);
  }

  hasCheckpoint(name: string): boolean {
    return existsSync(join(this.checkpointPath(name), "complete"));
  }

  /**
   * Write a checkpoint atomically: `write` fills a temporary folder, which gets a `complete`
   * marker, is fsynced and only then takes the name (see `replaceDirectory`), so a kill at any
   * moment leaves the previous checkpoint, or the new one, whole.
   */
  async saveCheckpoint(name: string, write: (dir: string) => Promise<void>): Promise<string> {
    const final = this.checkpointPath(name);
    await replaceDirectory(final, async (temporary) => {
      await write(temporary);
      writeFileSync(join(temporary, "complete"), `${new Date().toISOString()}\n`);
    });
    return final;
  }

  /** Keep the newest `keep` step checkpoints (the SFT checkpoint is always kept). */
  prune(keep: number): void {
    const steps = stepCheckpoints(join(this.path, "checkpoints"));
    for (const step of steps.slice(0, Math.max(0, steps.length - keep))) {
      rmSync(this.checkpointPath(stepName(step)), { recursive: true, force: true });
    }
  }
}

export function stepName(step: number): string {
  return `step-${String(step).padStart(6, "0")}`;
}

function stepCheckpoints(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => STEP_DIR.exec(name))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(join(dir, m[0], "complete")))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** Finish the checkpoint swaps a crash cut off (a `.<name>.old` beside or instead of its checkpoint). */
function recoverCheckpoints(dir: string): void {
  for (const name of readdirSync(dir)) {
    const swapped = /^\.(.+)\.(?:old|partial)$/.exec(name);
    if (swapped !== null) recoverDirectory(join(dir, swapped[1]!));
  }
}

function latestStep(dir: string): number {
  return stepCheckpoints(dir).at(-1) ?? 0;
}
