import { ChecklistJudge } from "@envace/rewards";
import OpenAI from "openai";
import { ConfigError } from "@envace/config";
import type { TrainConfig } from "../config/schema.js";

/** The config's `reward.judge` section. */
export type JudgeSection = NonNullable<TrainConfig["reward"]["judge"]>;

/**
 * The checklist judge a config asks for: any OpenAI-compatible server at `base_url` serving
 * `model`, the API key read from the environment variable `api_key_env` (none: `EMPTY`, which
 * self-hosted servers accept), `concurrency` calls in flight, each retried up to `max_retries`
 * times before the rollout is masked. Verdicts are cached and every call is logged under
 * `runDir/judge/`, so a resumed run asks nothing twice.
 */
export function checklistJudgeFromConfig(judge: JudgeSection, runDir: string, env: NodeJS.ProcessEnv = process.env): ChecklistJudge {
  let apiKey = "EMPTY";
  if (judge.api_key_env !== undefined) {
    const value = env[judge.api_key_env];
    if (value === undefined || value === "") {
      throw new ConfigError(`reward.judge.api_key_env: the environment variable ${judge.api_key_env} is not set`);
    }
    apiKey = value;
  }
  return new ChecklistJudge({
    client: new OpenAI({ baseURL: judge.base_url, apiKey }),
    model: judge.model,
    concurrency: judge.concurrency,
    retry: { maxRetries: judge.max_retries },
    runDir,
  });
}
