// `envace train [--config <file> | --preset <name>] --out <run dir>`: train, evaluate, report.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { ConfigError, loadConfig } from "../config/load.js";
import { writeReport } from "./report.js";

const USAGE = `usage: envace train [--config <file> | --preset <name>] --out <run dir>

  --config <file>   a YAML or JSON train config (see presets/ for documented examples)
  --preset <name>   a config shipped with envace (default: "default", the embedded default)
  --out <dir>       the run directory; running again with the same config resumes it`;

/** The folder of shipped presets (next to src/ and dist/). */
export function presetsDirectory(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../presets");
}

export function presetPath(name: string): string {
  const path = join(presetsDirectory(), `${name}.yaml`);
  if (!existsSync(path)) throw new ConfigError(`no preset "${name}" (looked for ${path})`);
  return path;
}

export async function run(argv: string[]): Promise<number> {
  let values: { config?: string; preset?: string; out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: "string" }, preset: { type: "string" }, out: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    console.error(`envace train: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  if (values.out === undefined || (values.config !== undefined && values.preset !== undefined)) {
    console.error(USAGE);
    return 2;
  }
  try {
    const config = loadConfig(values.config ?? presetPath(values.preset ?? "default"));
    // Loaded only once the config is valid: it brings in the model runtimes.
    const { train } = await import("../train.js");
    const result = await train(config, values.out);
    const report = writeReport([result.runDir]);
    for (const evaluation of result.evaluations) {
      console.log(`held-out success (rehearsal ${evaluation.setting}): ${(100 * evaluation.successRate).toFixed(1)}% of ${evaluation.tasks} tasks`);
    }
    console.log(`report: ${report}`);
    return 0;
  } catch (error) {
    // A bad config, bad data or an unreachable server is the user's to fix: the message says
    // what and where. The stack is for bugs, on request.
    const message = error instanceof Error ? (process.env.ENVACE_DEBUG ? (error.stack ?? error.message) : error.message) : String(error);
    console.error(`envace train: ${message}`);
    if (!(error instanceof ConfigError) && !process.env.ENVACE_DEBUG) console.error("(set ENVACE_DEBUG=1 to see where it was raised)");
    return 1;
  }
}
