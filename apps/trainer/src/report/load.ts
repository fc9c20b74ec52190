import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { InputError, RecordError } from "@envace/protocol";
import { readKept } from "../keep/log.js";
import { readMetrics } from "../run/metrics-log.js";
import type { RunData } from "./model.js";

/** Read a run directory's resolved config and metrics, with errors that name the missing file. */
export function loadRun(dir: string): RunData {
  const root = resolve(dir);
  if (!existsSync(root)) throw new InputError(`${dir}: no such run directory`);
  const metricsPath = join(root, "metrics.jsonl");
  if (!existsSync(metricsPath)) throw new InputError(`${metricsPath}: missing (is ${dir} a run directory?)`);
  const configPath = join(root, "config.json");
  let config = Object.create(null) as Record<string, unknown>;
  if (existsSync(configPath)) {
    try {
      config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
    } catch (error) {
      throw new RecordError({ file: configPath }, [{ path: "", message: `not valid JSON (${(error as Error).message})` }]);
    }
  }
  return { name: basename(root), config, records: readMetrics(metricsPath).records, kept: readKept(root) };
}
