// `envace pretrain [--config <file>] --out <run dir>`: the warm start alone, exported as a base checkpoint.
import { join } from "node:path";
import { ConfigError } from "@envace/config";
import { loadConfig } from "../config/load.js";
import type { Logger } from "../log.js";
import { exportBase } from "../setup/base-checkpoint.js";
import { presetPath } from "./train.js";

export interface PretrainOptions {
  config?: string;
  out: string;
}

export async function run(options: PretrainOptions, log: Logger): Promise<void> {
  const file = options.config ?? presetPath("base");
  const config = loadConfig(file);
  if (config.trainer.total_steps !== 0) {
    throw new ConfigError(`${file}: trainer.total_steps: a base checkpoint is the warm start alone; set it to 0 (it is ${config.trainer.total_steps})`);
  }
  const started = performance.now();
  // Loaded only once the config is valid: it brings in the model runtimes.
  const { train } = await import("../train.js");
  const result = await train(config, options.out, { log: (line) => log.info(line) });
  const out = join(result.runDir, "base");
  const manifest = exportBase(join(result.runDir, "checkpoints", "sft"), out, {
    command: options.config === undefined ? "envace pretrain --out <dir>" : `envace pretrain --config ${options.config} --out <dir>`,
    config,
    seconds: Math.round((performance.now() - started) / 1000),
  });
  console.log(`base checkpoint: ${out} (${manifest.seconds} s; model.safetensors ${manifest.files["model.safetensors"]})`);
}
