import type { Generation, Message, Policy, SamplingParams, Task, Tokenizer, ToolSpec } from "@envace/protocol";
import { withNote, type NotePlacement, type RehearsalMemory } from "./memory.js";
import { rehearse, type RehearsalRun, type RehearseOptions } from "./rehearse.js";
import { parseRehearsalSetting, type RehearsalSettingInput } from "./setting.js";

/** What both entry points (a whole episode, one turn of a conversation) pass to the private rehearsal. */
export interface PrivateRehearsalOptions {
  task: Task;
  policy: Policy;
  /** `none`, `parallel:N` or `sequential:N`. */
  setting: RehearsalSettingInput;
  /** Options of the rehearsal itself (memory budget, sampling, limits, users, prompts). */
  rehearsal?: Omit<RehearseOptions, "task" | "policy" | "setting" | "tokenizer" | "placement" | "signal" | "environment">;
  tokenizer?: Tokenizer | undefined;
  placement?: NotePlacement | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * The shared core: rehearse the task privately unless the setting is `none` (then `undefined`).
 * It receives the task and the policy only: whatever runs after it holds the real world.
 */
export async function privateRehearsal(options: PrivateRehearsalOptions): Promise<RehearsalRun | undefined> {
  const setting = parseRehearsalSetting(options.setting);
  if (setting.mode === "none") return undefined;
  return rehearse({
    ...options.rehearsal,
    task: options.task,
    policy: options.policy,
    setting,
    ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
    ...(options.placement === undefined ? {} : { placement: options.placement }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

export interface ConversationRehearsalOptions extends Omit<PrivateRehearsalOptions, "task"> {
  /** The conversation so far, as a client sent it (it may end with tool results). */
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  /** A memory an earlier turn of the same conversation made: used as it is, nothing is rehearsed. */
  memory?: RehearsalMemory | undefined;
  /** Names the rehearsal's trajectories. Default `conversation`. */
  id?: string;
}

/** A conversation prepared for its committed turn. */
export interface RehearsedConversation {
  /** The rehearsal run now, if one ran (no memory was given and the setting is not `none`). */
  rehearsal?: RehearsalRun;
  /** The memory the committed turn is conditioned on: the given one, or the new run's. */
  memory?: RehearsalMemory;
  /** The conversation with the memory in its starting context: what the committed turn is prompted with. */
  messages: Message[];
}

/**
 * Rehearse from a conversation prefix: the prefix is the task's starting context, the policy
 * rehearses it privately (acting and predicting every tool result itself), and the memory is
 * placed into the prefix. No tool is called; the committed turn is generated from `messages`.
 */
export async function rehearseConversation(options: ConversationRehearsalOptions): Promise<RehearsedConversation> {
  const task: Task = { id: options.id ?? "conversation", messages: [...options.messages], tools: [...options.tools], metadata: {} };
  const run = options.memory === undefined ? await privateRehearsal({ ...options, task }) : undefined;
  const memory = options.memory ?? run?.memory;
  const conditioned = memory === undefined ? task : withNote(task, memory.text, options.placement);
  return { ...(run === undefined ? {} : { rehearsal: run }), ...(memory === undefined ? {} : { memory }), messages: conditioned.messages };
}

export interface TurnOptions extends ConversationRehearsalOptions {
  /** Sampling of the committed Act turn. */
  sampling: SamplingParams;
  /** Committed samples of the turn (each from the same memory). Default 1; sample i gets seed + i. */
  n?: number;
}

/** A rehearsed conversation and its committed Act turn(s). */
export interface Turn extends RehearsedConversation {
  generations: Generation[];
}

/**
 * Rehearse from a conversation prefix, then generate one committed Act turn conditioned on the
 * memory: what an inference server does for a request that carries tools. The turn's tool calls
 * are for the caller to execute; nothing here touches a real tool.
 */
export async function rehearseThenAct(options: TurnOptions): Promise<Turn> {
  const prepared = await rehearseConversation(options);
  const n = options.n ?? 1;
  const generations = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      options.policy.generate(
        {
          role: "act",
          messages: prepared.messages,
          tools: [...options.tools],
          sampling: options.sampling.seed === undefined ? options.sampling : { ...options.sampling, seed: options.sampling.seed + i },
        },
        options.signal,
      ),
    ),
  );
  return { ...prepared, generations };
}
