import {
  ContextLengthError,
  type Generation,
  type Policy,
  type SamplingParams,
  type Task,
  type ToolCall,
  type ToolResult,
  type ToolSpec,
} from "@envace/protocol";
import { ToolCallValidator } from "./call-validator.js";
import { parseRehearseOutput, type RehearseParseErrorCode, type RehearseParserOptions } from "./rehearse-parser.js";
import { buildRehearsePrompt, type RehearsePromptOptions, type RehearseRequest, type ToolExample } from "./rehearse-prompt.js";

export interface RehearsalEnvironmentOptions {
  /** The policy in the Rehearse role: the acting policy itself in EnvACE, a frozen simulator in baselines. */
  policy: Policy;
  prompt?: Omit<RehearsePromptOptions, "examples">;
  /** Few-shot tool I/O examples, fixed or per task. */
  examples?: readonly ToolExample[] | ((task: Task) => readonly ToolExample[]);
  parser?: RehearseParserOptions;
}

/** How the rehearsal environment answered one call. */
export type RehearsalAnswer =
  /** Refused before the model was asked (format, whitelist or schema). */
  | { kind: "rejected"; result: ToolResult }
  /** The model's prediction: a result or a predicted tool error. */
  | { kind: "rehearsed"; result: ToolResult; generation: Generation }
  /** The model's output could not be read, or was cut off (`finishReason: "length"`). */
  | { kind: "failed"; generation: Generation; code: RehearseParseErrorCode | "TRUNCATED"; detail: string }
  /** The Rehearse prompt did not fit the model's context: nothing was generated. */
  | { kind: "too_long"; promptTokens: number };

/**
 * The environment of a self-unfolded rollout: it answers tool calls from a policy in the Rehearse
 * role instead of a real system. Calls are checked first (shape, whitelist, JSON Schema) and refused
 * with a structured error without asking the model, as a real API would refuse them.
 */
export class RehearsalEnvironment {
  readonly kind = "rehearsal";
  readonly policy: Policy;
  readonly #options: RehearsalEnvironmentOptions;
  #tools: readonly ToolSpec[] = [];
  #validator = new ToolCallValidator([]);
  #prompt: RehearsePromptOptions = {};

  constructor(options: RehearsalEnvironmentOptions) {
    this.policy = options.policy;
    this.#options = options;
  }

  /** Start an episode of `task`: its tools become the whitelist. Throws if a tool's schema is invalid. */
  reset(task: Task): void {
    this.#tools = task.tools;
    this.#validator = new ToolCallValidator(task.tools);
    const examples = this.#options.examples;
    this.#prompt = { ...this.#options.prompt, examples: typeof examples === "function" ? examples(task) : (examples ?? []) };
  }

  tools(): readonly ToolSpec[] {
    return this.#tools;
  }

  /** Check `call`, then (if it passes) ask the policy to predict its result. */
  async rehearse(call: ToolCall, context: Omit<RehearseRequest, "tools" | "call">, sampling: SamplingParams, signal?: AbortSignal): Promise<RehearsalAnswer> {
    const check = this.#validator.check(call);
    if (!check.ok) {
      return { kind: "rejected", result: { status: "error", callId: check.callId, name: check.name, error: check.error } };
    }
    const messages = buildRehearsePrompt({ tools: this.#tools, history: context.history, latestAct: context.latestAct, call }, this.#prompt);
    let generation: Generation;
    try {
      generation = await this.policy.generate({ role: "rehearse", messages, tools: [], sampling }, signal);
    } catch (error) {
      if (error instanceof ContextLengthError) return { kind: "too_long", promptTokens: error.promptTokens };
      throw error;
    }
    if (generation.finishReason === "length") {
      return { kind: "failed", generation, code: "TRUNCATED", detail: "the Rehearse output hit its token limit" };
    }
    const parsed = parseRehearseOutput(generation.text, this.#options.parser);
    switch (parsed.kind) {
      case "result":
        return { kind: "rehearsed", generation, result: { status: "ok", callId: call.id, name: call.name, content: parsed.content } };
      case "tool_error":
        return { kind: "rehearsed", generation, result: { status: "error", callId: call.id, name: call.name, error: parsed.error } };
      case "error":
        return { kind: "failed", generation, code: parsed.code, detail: parsed.detail };
    }
  }
}

/** A rehearsal environment answering from `policy` (the acting policy itself, in EnvACE). */
export function rehearsal(policy: Policy, options: Omit<RehearsalEnvironmentOptions, "policy"> = {}): RehearsalEnvironment {
  return new RehearsalEnvironment({ ...options, policy });
}
