import { loadYamlConfig, parseYamlConfig } from "@envace/config";
import { TrainConfig } from "./schema.js";

// The schema's last step fills in the defaults that depend on other sections; its type cannot say so.

/** Parse config text (YAML, of which JSON is a subset) and validate it. `file` names it in errors (`ConfigError` of `@envace/config`). */
export function parseConfig(text: string, file: string): TrainConfig {
  return parseYamlConfig(text, file, TrainConfig) as TrainConfig;
}

/** Read and validate a config file. */
export function loadConfig(path: string): TrainConfig {
  return loadYamlConfig(path, TrainConfig) as TrainConfig;
}
