// Rollout: G rollouts of each task of a step, rehearsed by the policy or grounded in a real environment.
import type { ConcurrencyLimit } from "@envace/concurrency";
import { InvariantError } from "@envace/errors";
import type { Environment, Policy, Task, Trajectory } from "@envace/protocol";
import { rememberAttempts, withNote } from "@envace/rehearsal";
import { deriveSeed, RehearsalEnvironment, unfoldGroup, userToolsOf, type UnfoldGroupOptions } from "@envace/trajectory";
import type { TrainConfig } from "./config/schema.js";
import { rolloutLimits, rolloutSampling } from "./config/to-options.js";
import { CountingEnvironment } from "./counting-environment.js";
import type { Domain } from "./setup/domain.js";

/** Counts calls made to real environments over a step, so a run can show how many it made (0 in `envace` mode). */
export class CallCounter {
  private count = 0;

  wrap(environment: Environment): Environment {
    return new CountingEnvironment(environment, () => {
      this.count += 1;
    });
  }

  /** Calls since the last `take`. */
  take(): number {
    const n = this.count;
    this.count = 0;
    return n;
  }
}

export interface RolloutOptions {
  config: Pick<TrainConfig, "environment" | "rollout" | "seed">;
  domain: Pick<Domain, "name" | "environment" | "rehearsePrompt" | "judgeInstructions" | "users" | "writeTools">;
  tasks: readonly Task[];
  /** The policy in the Act role. */
  actor: Policy;
  /** The policy in the Rehearse role: the actor (EnvACE), a frozen simulator, or a per-role policy. */
  rehearser: Policy;
  counter: CallCounter;
  limit: ConcurrencyLimit;
  /** The training step (seeds its rollouts). */
  step: number;
  /** Told the memory each rollout that started from one (`rollout.memory_attempts`) began with, by trajectory id. */
  onMemory?: (trajectoryId: string, memory: string) => void;
}

/** G rollouts of each task: rehearsed by `rehearser`, or grounded when the config's environment is real. */
export async function rollouts(options: RolloutOptions): Promise<Trajectory[]> {
  const { config, domain, actor, rehearser, counter, limit } = options;
  const limits = rolloutLimits(config.rollout);
  // Seeded per run, step and task (and, inside the group, per rollout and request), so a run
  // samples the same tokens however its rollouts interleave.
  const sampling = (index: number) => {
    const params = { ...rolloutSampling(config.rollout), seed: deriveSeed(config.seed, options.step, index) };
    return { act: params, rehearse: params };
  };
  const real = domain.environment;
  // The config refuses environment: real for a data source without one.
  if (config.environment === "real" && real === undefined)
    throw new InvariantError(`the ${domain.name} data has no real environment: use environment self or simulator`);
  // A task drawn more than once in a step (more tasks per step than tasks) is one larger group:
  // GRPO groups by task, so two groups of one task would be one anyway.
  const draws = new Map<Task, number>();
  for (const task of options.tasks) draws.set(task, (draws.get(task) ?? 0) + 1);
  const groups = [...draws].map(([task, times], index) => {
    const group = (part: Pick<UnfoldGroupOptions, "task" | "size" | "firstRollout">) =>
      unfoldGroup({
        ...part,
        actor,
        // A real environment holds episode state: one per rollout. A rehearsal environment per group.
        environment:
          config.environment === "real" ? () => counter.wrap(real!(task)) : new RehearsalEnvironment({ policy: rehearser, prompt: domain.rehearsePrompt }),
        // Dual control (τ² telecom): the user's own side, the real environment's (counted too) or imagined.
        userEnvironment:
          config.environment === "real"
            ? (_, environment) => (environment instanceof RehearsalEnvironment || environment.user === undefined ? undefined : counter.wrap(environment.user))
            : userToolsOf(task).length > 0
              ? new RehearsalEnvironment({ policy: rehearser, prompt: domain.rehearsePrompt })
              : undefined,
        ...(domain.users === undefined ? {} : { users: domain.users }),
        limit,
        limits,
        preset: "training",
        sampling: sampling(index),
      });
    const size = config.rollout.rollouts_per_task * times;
    const attempts = config.rollout.memory_attempts;
    if (attempts === 0) return group({ task, size });
    return (async () => {
      // The first rollouts are the private rehearsal of the rest, as at test time: their memory
      // (reflected on and summarised by the actor) starts every other rollout of the group.
      const rehearsed = await group({ task, size: attempts });
      const { memory } = await rememberAttempts({
        task,
        policy: actor,
        trajectories: rehearsed,
        limits,
        ...(domain.writeTools === undefined ? {} : { writeTools: domain.writeTools }),
        ...(domain.judgeInstructions === undefined ? {} : { instructions: domain.judgeInstructions }),
      });
      const informed = await group({ task: withNote(task, memory.text), size: size - attempts, firstRollout: attempts });
      for (const t of informed) options.onMemory?.(t.id, memory.text);
      return [...rehearsed, ...informed];
    })();
  });
  return (await Promise.all(groups)).flat();
}
