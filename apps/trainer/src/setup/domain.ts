import type { Environment, Task } from "@envace/protocol";
import {
  BUILTIN_REFLECT_INSTRUCTIONS,
  BUILTIN_REHEARSE_PROMPT,
  BuiltinEnvironment,
  SYSTEM_PROMPT_SHORT,
  WRITE_TOOLS,
  checklistReward,
  consistentReward,
  domainCorpus,
  generateTasks,
  goldTrajectory,
  outcomeReward,
} from "@envace/bench-builtin";
import type { RewardFunction } from "@envace/rewards";
import type { RehearsePromptOptions, UserTurnSource } from "@envace/trajectory";
import { supervisedRoles, type TrainConfig } from "../config/schema.js";
import { reflectExamples, type GoldExample } from "../sft.js";

/** Everything the trainer needs to know about the tasks it trains on. */
export interface Domain {
  name: string;
  train: readonly Task[];
  test: readonly Task[];
  /** A fresh real environment for one episode; absent when the data has none (CM2 records). */
  environment?: (task: Task) => Environment;
  /** Scores a finished training rollout without touching a real environment. */
  reward: RewardFunction;
  /** Scores a held-out episode played against the real environment (default: `reward`). */
  success?: RewardFunction;
  /** The reward the Rehearse rows inherit (default: `reward`). */
  rehearseReward?: RewardFunction;
  /** Gold SFT targets of a task (both roles), when the data has them. */
  gold?: (task: Task) => GoldExample[];
  /** Texts to train a tokenizer on. */
  corpus: () => Iterable<string>;
  /** How the Rehearse role is prompted, in training and at test time alike. */
  rehearsePrompt: RehearsePromptOptions;
  /** Reflect and summarize instructions over the default ones, wherever the policy rehearses privately. */
  judgeInstructions?: { reflect?: string; summarize?: string };
  /** Tools that change the world, for rehearsal memories and safe-write gating. */
  writeTools?: readonly string[];
  /** The system prompt already describes the tools, so the chat template need not list them. */
  toolsInSystemPrompt: boolean;
  /** Later user turns of a rollout (default: replay the task's reference dialogue). */
  users?: UserTurnSource;
  /** Releases what the domain holds (a judge's connections and files). */
  close?(): Promise<void>;
}

const BUILTIN_REWARDS: Record<TrainConfig["reward"]["type"], () => RewardFunction> = {
  verifiable: () => outcomeReward,
  checklist: () => checklistReward({ dependence: true }),
  consistent: () => consistentReward,
};

/** The built-in shop domain: generated, seeded, with disjoint train and held-out worlds. */
export function builtinDomain(config: TrainConfig): Domain {
  const options = { seed: config.seed, systemPrompt: SYSTEM_PROMPT_SHORT };
  const reflect = supervisedRoles(config.sft).includes("reflect");
  return {
    name: "builtin",
    train: generateTasks({ ...options, count: config.data.train_tasks, split: "train" }),
    test: generateTasks({ ...options, count: config.data.test_tasks, split: "test" }),
    environment: () => new BuiltinEnvironment(),
    reward: BUILTIN_REWARDS[config.reward.type](),
    ...(config.reward.rehearse_type === undefined ? {} : { rehearseReward: BUILTIN_REWARDS[config.reward.rehearse_type]() }),
    // Held-out success is always the outcome check of the real episode's state and reply.
    success: outcomeReward,
    gold: (task) => {
      const gold = goldTrajectory(task);
      const declined = gold.declined[0]?.role === "rehearse" ? gold.declined[0] : undefined;
      return [
        ...gold.examples,
        ...(config.sft.declined_writes ? gold.declined : []),
        ...(reflect ? reflectExamples(task, gold.trajectory, declined, BUILTIN_REFLECT_INSTRUCTIONS) : []),
      ];
    },
    corpus: () => domainCorpus({ seed: config.seed }),
    rehearsePrompt: BUILTIN_REHEARSE_PROMPT,
    ...(config.rollout.reflect_prompt === "compact" ? { judgeInstructions: { reflect: BUILTIN_REFLECT_INSTRUCTIONS } } : {}),
    writeTools: WRITE_TOOLS,
    toolsInSystemPrompt: true,
  };
}
