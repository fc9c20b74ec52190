import { InvariantError } from "@envace/errors";
import type { TrainConfig } from "../config/schema.js";
import { builtinDomain } from "../setup/domain.js";
import { cm2Domain } from "./cm2.js";
import { checklistJudgeFromConfig } from "./judge.js";
import type { DataDomain } from "./records.js";
import { verlDomain } from "./verl.js";

/**
 * The domain `config.data.source` names: the built-in shop, CM2 records (`.json`/`.jsonl`) or
 * verl Parquet, the latter two from `data.path` (and `data.test_path`), scored by the checklist
 * judge of `reward.judge` whose verdicts and call log live in `runDir`. Which combinations can
 * work (no real environment and no outcome check for CM2 data) is checked when the config loads.
 * Call `close()` on the result when the run ends.
 */
export async function domainFromConfig(config: TrainConfig, runDir: string): Promise<DataDomain> {
  const { source, path, test_path } = config.data;
  if (source === "builtin") return { ...builtinDomain(config), close: () => Promise.resolve() };
  const { judge: judgeConfig } = config.reward;
  if (path === undefined || judgeConfig === undefined) throw new InvariantError(`data source ${source} without a path or a judge passed config load`);
  const judge = checklistJudgeFromConfig(judgeConfig, runDir);
  const files = { path, ...(test_path === undefined ? {} : { testPath: test_path }) };
  try {
    return source === "cm2" ? await cm2Domain({ ...files, judge }) : await verlDomain({ ...files, judge });
  } catch (error) {
    await judge.close();
    throw error;
  }
}
