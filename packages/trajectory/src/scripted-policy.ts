import { InvariantError } from "@envace/errors";
import type { FinishReason, GenerateRequest, Generation, Policy, Tokenizer, WireToolCall } from "@envace/protocol";
import { flattenConversation } from "./messages.js";

/** One scripted answer: its text, and optionally native tool calls or a finish reason. */
export interface ScriptedReply {
  text: string;
  toolCalls?: WireToolCall[];
  finishReason?: FinishReason;
}

export type Script = (request: GenerateRequest) => string | ScriptedReply;

/**
 * A policy that answers from a script instead of a model: for tests, demos and benchmarks of the
 * machinery around a policy. With a `tokenizer`, generations carry token ids (the prompt as its
 * flattened text, the output text) and zero logprobs; without one they carry none, as servers that
 * cannot return tokens do.
 */
export class ScriptedPolicy implements Policy {
  readonly id: string;
  readonly #script: Script;
  readonly #tokenizer: Tokenizer | undefined;

  constructor(id: string, script: Script, options: { tokenizer?: Tokenizer } = {}) {
    this.id = id;
    this.#script = script;
    this.#tokenizer = options.tokenizer;
  }

  /** Answer each role from its own queue, in order; an exhausted queue throws `InvariantError` (the script is shorter than the conversation). */
  static queues(
    id: string,
    queues: Partial<Record<GenerateRequest["role"], (string | ScriptedReply)[]>>,
    options: { tokenizer?: Tokenizer } = {},
  ): ScriptedPolicy {
    const remaining = Object.fromEntries(Object.entries(queues).map(([role, replies]) => [role, [...replies]]));
    return new ScriptedPolicy(
      id,
      (request) => {
        const next = remaining[request.role]?.shift();
        if (next === undefined) throw new InvariantError(`${id}: no scripted reply left for role "${request.role}"`);
        return next;
      },
      options,
    );
  }

  generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
    // Settles asynchronously like a real policy; a throwing script becomes a rejection.
    return new Promise((resolve) => {
      signal?.throwIfAborted();
      resolve(this.#answer(request));
    });
  }

  #answer(request: GenerateRequest): Generation {
    const answer = this.#script(request);
    const reply = typeof answer === "string" ? { text: answer } : answer;
    const tokenizer = this.#tokenizer;
    const promptTokens = tokenizer === undefined ? [] : (request.promptTokens ?? tokenizer.encode(flattenConversation(request.messages)));
    const outputTokens = tokenizer === undefined ? [] : tokenizer.encode(reply.text);
    const generation: Generation = {
      role: request.role,
      text: reply.text,
      promptTokens: [...promptTokens],
      outputTokens,
      logprobs: tokenizer === undefined ? null : outputTokens.map(() => 0),
      finishReason: reply.finishReason ?? (reply.toolCalls === undefined ? "stop" : "tool_calls"),
    };
    if (reply.toolCalls !== undefined) generation.toolCalls = reply.toolCalls;
    return generation;
  }
}

/**
 * `policy`, keeping every request it is asked in `requests`: for tests and demos that check what
 * a policy was asked. `onRequest` sees each request as it comes.
 */
export function recordingPolicy(policy: Policy, onRequest?: (request: GenerateRequest) => void): Policy & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    id: policy.id,
    requests,
    generate(request, signal) {
      requests.push(request);
      onRequest?.(request);
      return policy.generate(request, signal);
    },
  };
}
