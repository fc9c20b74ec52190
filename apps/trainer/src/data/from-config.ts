import { ConfigError } from "../config/load.js";
import type { TrainConfig } from "../config/schema.js";
import { builtinDomain } from "../setup/domain.js";
import { cm2Domain } from "./cm2.js";
import { checklistJudgeFromConfig } from "./judge.js";
import type { DataDomain } from "./records.js";
import { verlDomain } from "./verl.js";

/**
 * The domain `config.data.source` names: the built-in shop, CM2 records (`.json`/`.jsonl`) or
 * verl Parquet, the latter two from `data.path` (and `data.test_path`), scored by the checklist
 * judge of `reward.judge` whose verdicts and call log live in `runDir`. CM2 data has no real
 * environment, so `environment: real` and a verifiable reward are refused here, before any file
 * is read. Call `close()` on the result when the run ends.
 */
export async function domainFromConfig(config: TrainConfig, runDir: string): Promise<DataDomain> {
  const { source } = config.data;
  if (source === "builtin") return { ...builtinDomain(config), close: () => Promise.resolve() };
  if (config.environment === "real") {
    throw new ConfigError(
      `environment: real: data source ${source} has no real environment (its records hold reference dialogues, not tools that run); use mode envace, or grpo with environment: simulator`,
    );
  }
  if (config.reward.type !== "checklist" || config.reward.judge === undefined) {
    throw new ConfigError(`reward.type: data source ${source} has no verifiable outcome; use reward.type: checklist with a reward.judge`);
  }
  if (config.data.path === undefined) throw new ConfigError(`data.path: data source ${source} needs a path`);
  const judge = checklistJudgeFromConfig(config.reward.judge, runDir);
  const files = { path: config.data.path, ...(config.data.test_path === undefined ? {} : { testPath: config.data.test_path }) };
  try {
    return source === "cm2" ? await cm2Domain({ ...files, judge }) : await verlDomain({ ...files, judge });
  } catch (error) {
    await judge.close();
    throw error;
  }
}
