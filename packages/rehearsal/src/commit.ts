import { InvariantError } from "@envace/errors";
import type { Environment, Policy, Step, Task, Tokenizer, Trajectory } from "@envace/protocol";
import { unfold, type ActParserOptions, type RoleSampling, type UnfoldLimitsInput, type UserTurnSource } from "@envace/trajectory";
import { SafeWriteGate, type GateEvent, type SafeWriteGateOptions } from "./gate.js";
import { withNote, type NotePlacement, type RehearsalMemory } from "./memory.js";
import type { RehearsalRun, RehearseOptions } from "./rehearse.js";
import { parseRehearsalSetting, type RehearsalSettingInput } from "./setting.js";
import { tokenCounter } from "./tokens.js";
import { privateRehearsal } from "./turn.js";
import { MeteredPolicy, type Usage } from "./usage.js";

export interface CommitOptions {
  task: Task;
  policy: Policy;
  /** The real environment: every outcome of the committed execution is `grounded`. */
  environment: Environment;
  /** The user's own real side in a dual-control task (e.g. their phone), for a simulated user's tool calls. */
  userEnvironment?: Environment;
  /** The rehearsal memory to condition on (added to the starting context). */
  memory?: RehearsalMemory;
  /** Where the memory goes. Default `system`. */
  placement?: NotePlacement;
  /** Safe-write gating on the memory's predicted failures. Default off. */
  safeWrites?: boolean | SafeWriteGateOptions;
  /** Sampling over the `evaluation` preset (Act at 0.6, top-p 0.95). */
  sampling?: Partial<RoleSampling>;
  limits?: UnfoldLimitsInput;
  parser?: Omit<ActParserOptions, "tools" | "callId">;
  users?: UserTurnSource;
  /** For counting tokens of policies that return no token ids. */
  tokenizer?: Tokenizer;
  signal?: AbortSignal;
  onStep?: (step: Step) => void;
}

/** The committed execution: the trajectory against the real environment and what the gate did. */
export interface CommittedRun {
  /** The task as executed: its starting context carries the memory. */
  task: Task;
  trajectory: Trajectory;
  gate: GateEvent[];
  /** Tokens per role of the committed execution, re-prompts of the gate included. */
  usage: Usage;
}

/** One committed execution against the real environment, conditioned on a rehearsal memory. */
export async function commit(options: CommitOptions): Promise<CommittedRun> {
  const task = options.memory === undefined ? options.task : withNote(options.task, options.memory.text, options.placement);
  const metered = MeteredPolicy.wrap(options.policy, tokenCounter(options.tokenizer));
  const gateOptions = options.safeWrites === true ? {} : options.safeWrites === false ? undefined : options.safeWrites;
  const parserOptions = options.parser === undefined ? {} : { parser: options.parser };
  const gate =
    gateOptions === undefined ? undefined : new SafeWriteGate(metered, options.memory?.predictedFailures ?? [], { ...parserOptions, ...gateOptions });
  const trajectory = await unfold({
    task,
    actor: gate ?? metered,
    environment: options.environment,
    ...(options.userEnvironment === undefined ? {} : { userEnvironment: options.userEnvironment }),
    preset: "evaluation",
    ...(options.sampling === undefined ? {} : { sampling: options.sampling }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...parserOptions,
    ...(options.users === undefined ? {} : { users: options.users }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  });
  return { task, trajectory, gate: gate?.events ?? [], usage: metered.usage };
}

export interface EpisodeOptions extends Omit<CommitOptions, "memory"> {
  /** `none`, `parallel:N` or `sequential:N`. */
  setting: RehearsalSettingInput;
  /** Options of the private rehearsal (the task, policy, tokenizer, limits and placement are shared). */
  rehearsal?: Omit<RehearseOptions, "task" | "policy" | "setting" | "tokenizer" | "placement" | "signal" | "environment">;
  /** Called once the rehearsal is over (at once for `none`), before the real environment is first used. */
  onRehearsed?: (run: RehearsalRun | undefined) => void;
}

/** A rehearsal (unless the setting is `none`) and the committed execution it conditions. */
export interface Episode {
  rehearsal?: RehearsalRun;
  committed: CommittedRun;
}

/**
 * Rehearse privately, then commit: the rehearsal receives the task and the policy only, and the
 * real environment is first touched by the committed execution, after the memory exists.
 */
export async function rehearseThenCommit(options: EpisodeOptions): Promise<Episode> {
  const setting = parseRehearsalSetting(options.setting);
  const { setting: _setting, rehearsal: rehearsalOptions, onRehearsed, ...commitOptions } = options;
  if (setting.mode === "none") {
    onRehearsed?.(undefined);
    return { committed: await commit(commitOptions) };
  }
  const run = await privateRehearsal({
    task: options.task,
    policy: options.policy,
    setting,
    rehearsal: { limits: options.limits ?? {}, ...rehearsalOptions, ...(options.parser === undefined ? {} : { parser: options.parser }) },
    tokenizer: options.tokenizer,
    placement: options.placement,
    signal: options.signal,
  });
  if (run === undefined) throw new InvariantError("unreachable: a setting other than none always rehearses");
  onRehearsed?.(run);
  return { rehearsal: run, committed: await commit({ ...commitOptions, memory: run.memory }) };
}
