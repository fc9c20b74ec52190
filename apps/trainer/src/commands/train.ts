// `envace train [--config <file> | --preset <name>] --out <run dir>`: train, evaluate, report.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "@envace/config";
import { loadConfig } from "../config/load.js";
import type { Logger } from "../log.js";
import { headlineTable } from "../report/headline.js";
import { readMetrics } from "../run/metrics-log.js";
import { writeReport } from "./report.js";

/** The folder of shipped presets (next to src/ and dist/). */
export function presetsDirectory(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../presets");
}

export function presetPath(name: string): string {
  const path = join(presetsDirectory(), `${name}.yaml`);
  if (!existsSync(path)) throw new ConfigError(`no preset "${name}" (looked for ${path})`);
  return path;
}

/** The options of `envace train`, as cli.ts declares them. */
export interface TrainOptions {
  config?: string;
  /** Used when no `config` is given. */
  preset: string;
  out: string;
}

export async function run(options: TrainOptions, log: Logger): Promise<void> {
  const config = loadConfig(options.config ?? presetPath(options.preset));
  // Loaded only once the config is valid: it brings in the model runtimes.
  const { train } = await import("../train.js");
  const result = await train(config, options.out, { log: (line) => log.info(line) });
  const report = writeReport([result.runDir]);
  for (const line of headlineTable(readMetrics(join(result.runDir, "metrics.jsonl")).records, config.mode)) console.log(line);
  console.log(`report: ${report}`);
}
