import { randomUUID } from "node:crypto";
import {
  canGenerateN,
  trustedRequest,
  type GenerateRequest,
  type Generation,
  type Message,
  type Policy,
  type SamplingParams,
  type Tokenizer,
} from "@envace/protocol";
import { formatRehearsalSetting, parseRehearsalSetting, rehearseConversation, type RehearsalMemory, type RehearsalSetting } from "@envace/rehearsal";
import { rehearsePromptOf, type ServerConfig } from "./config.js";
import { badField } from "./errors.js";
import { memoryScope, prefixKeys, type LruStore } from "./memory-store.js";
import type { ServerMetrics } from "./metrics.js";
import type { ChatTurnRequest } from "./request.js";
import { toChoice, usageOf, type Choice, type ChoiceOptions, type Usage } from "./response.js";

/** What rehearsal did for one request: the `envace` extension field of the response. */
export interface EnvaceResponseFields {
  rehearsal: string;
  /** Private attempts run for this request (0 when an earlier turn's memory was reused). */
  attempts: number;
  predicted_failures: number;
  memory_tokens: number;
  rehearsal_ms: number;
  /** `new`: rehearsed for this request; `reused`: the conversation's memory from an earlier turn. */
  memory: "new" | "reused";
}

export interface Completion {
  id: string;
  created: number;
  choices: Choice[];
  usage: Usage;
  envace?: EnvaceResponseFields;
}

/** What a completion needs from the running server. */
export interface CompletionContext {
  policy: Policy;
  tokenizer: Tokenizer | undefined;
  config: ServerConfig;
  memories: LruStore<RehearsalMemory>;
  metrics: ServerMetrics;
}

/** The rehearsal a request gets: its own `envace.rehearsal`, else the server's default; only with tools. */
export function rehearsalFor(request: ChatTurnRequest, config: ServerConfig): { setting: RehearsalSetting; budget: number | null } {
  const asked = request.envace?.rehearsal;
  let setting: RehearsalSetting;
  try {
    setting = parseRehearsalSetting(asked ?? config.rehearsal.setting);
  } catch {
    throw badField("envace.rehearsal", "expected none, parallel:N or sequential:N");
  }
  if (setting.mode !== "none" && setting.attempts > config.rehearsal.max_attempts) {
    throw badField("envace.rehearsal", `at most ${config.rehearsal.max_attempts} attempts per request`, "unsupported_value");
  }
  if (setting.mode !== "none" && !request.parseToolCalls) {
    // Rehearsal imagines the results of the model's own tool calls: without tools there is nothing to rehearse.
    if (asked !== undefined) throw badField("envace.rehearsal", 'rehearsal needs tools (and tool_choice "auto")', "unsupported_value");
    setting = { mode: "none" };
  }
  const budget = request.envace?.memory_budget === undefined ? config.rehearsal.memory_budget : request.envace.memory_budget;
  return { setting, budget };
}

/**
 * `n` committed samples: one request where the policy can sample several (an upstream's `n`),
 * else one each; `oneRequest` says which, for the usage.
 */
async function generateChoices(
  policy: Policy,
  request: GenerateRequest,
  n: number,
  signal: AbortSignal,
): Promise<{ generations: Generation[]; oneRequest: boolean }> {
  if (n > 1 && canGenerateN(policy)) return { generations: await policy.generateN(request, n, signal), oneRequest: true };
  const seeded = (i: number): SamplingParams =>
    request.sampling.seed === undefined ? request.sampling : { ...request.sampling, seed: request.sampling.seed + i };
  const generations = await Promise.all(Array.from({ length: n }, (_, i) => policy.generate(trustedRequest({ ...request, sampling: seeded(i) }), signal)));
  return { generations, oneRequest: n === 1 };
}

/**
 * The request of the committed turn. Its parts passed the server's own checks of the body (and
 * rehearsal's typed memory), so the policy takes it without a second check: on the hot path
 * that check cost as much as reading the body.
 */
export function committedRequest(request: ChatTurnRequest, messages: Message[]): GenerateRequest {
  return trustedRequest({ role: "act", messages, tools: request.tools, sampling: request.sampling });
}

/**
 * Answer one chat completion: private rehearsal when the request has tools and rehearsal is on
 * (or the conversation's memory from an earlier turn), then the committed turn, parsed into
 * OpenAI choices. `owner` is the bearer token that asked: memories are private to it.
 */
export async function complete(context: CompletionContext, request: ChatTurnRequest, owner: string, signal: AbortSignal): Promise<Completion> {
  const { messages, envace } = await prepareTurn(context, request, owner, signal);
  const { generations, oneRequest } = await generateChoices(context.policy, committedRequest(request, messages), request.n, signal);
  const usage = usageOf(generations, oneRequest);
  context.metrics.completionTokens.inc(usage.completion_tokens);
  const id = newCompletionId();
  const choices = generations.map((generation, index) => toChoice(generation, index, choiceOptions(context, request, id, index)));
  return { id, created: Math.floor(Date.now() / 1000), choices, usage, ...(envace === undefined ? {} : { envace }) };
}

/** `chatcmpl-<random>`: 32 hex digits of a v4 UUID (its entropy is pooled, so this costs no call into the kernel per request). */
export function newCompletionId(): string {
  return `chatcmpl-${randomUUID().replaceAll("-", "")}`;
}

/** How choice `index` of completion `id` is read from its generation. */
export function choiceOptions(context: CompletionContext, request: ChatTurnRequest, id: string, index: number): ChoiceOptions {
  return {
    tools: request.tools,
    parseToolCalls: request.parseToolCalls,
    logprobs: request.logprobs ? context.tokenizer : undefined,
    callIdPrefix: `${id.slice(9, 21)}_${index}`,
  };
}

/**
 * The messages the committed turn is generated from: the request's, with the rehearsal memory in
 * the system message when the request is rehearsed (a new rehearsal, or the conversation's
 * memory from an earlier turn), and what rehearsal did for the response's `envace` field.
 */
export async function prepareTurn(
  context: CompletionContext,
  request: ChatTurnRequest,
  owner: string,
  signal: AbortSignal,
): Promise<{ messages: Message[]; envace?: EnvaceResponseFields }> {
  const { setting, budget } = rehearsalFor(request, context.config);
  let messages: Message[] = request.messages;
  let envace: EnvaceResponseFields | undefined;
  if (setting.mode !== "none") {
    const started = performance.now();
    const rehearsal = formatRehearsalSetting(setting);
    // The memory of the longest prefix of this conversation that has one (a later turn of a
    // conversation rehearsed before), else a new one, built once however many ask at once.
    const keys = prefixKeys(memoryScope(owner, request.tools, rehearsal, budget), request.messages);
    let attempts = 0;
    const { value: memory, built } = await context.memories.obtain(
      keys,
      async () => {
        const prepared = await rehearseConversation({
          ...conversation(context, request, signal),
          setting,
          rehearsal: rehearsalOptions(context.config, budget, request.sampling.seed),
        });
        attempts = prepared.rehearsal?.attempts.length ?? 0;
        return prepared.memory!;
      },
      (value) => Buffer.byteLength(JSON.stringify(value)),
      signal,
    );
    // With a memory given, rehearseConversation only places it in the system message.
    messages = (await rehearseConversation({ ...conversation(context, request, signal), setting, memory })).messages;
    if (built) context.metrics.rehearsalAttempts.inc(attempts);
    else context.metrics.memoryHits.inc();
    envace = {
      rehearsal,
      attempts,
      predicted_failures: memory.predictedFailures.length,
      memory_tokens: memory.tokens,
      rehearsal_ms: Math.round(performance.now() - started),
      memory: built ? "new" : "reused",
    };
  }
  return { messages, ...(envace === undefined ? {} : { envace }) };
}

/** What every rehearsal of a request starts from: its conversation, tools and policy. */
function conversation(context: CompletionContext, request: ChatTurnRequest, signal: AbortSignal) {
  return { messages: request.messages, tools: request.tools, policy: context.policy, tokenizer: context.tokenizer, signal };
}

/** The options of a request's rehearsal: its budget and seed, and the rest from the server's config. */
function rehearsalOptions(config: ServerConfig, budget: number | null, seed: number | undefined) {
  const { max_turns: maxTurns, max_response_tokens: maxResponseTokens, max_prompt_tokens: maxPromptTokens, write_tools: writeTools } = config.rehearsal;
  const prompt = rehearsePromptOf(config);
  return {
    memoryBudget: budget,
    limits: { maxTurns, maxResponseTokens, ...(maxPromptTokens === null ? {} : { maxPromptTokens }) },
    ...(writeTools === null ? {} : { writeTools }),
    ...(prompt === undefined ? {} : { rehearse: { prompt } }),
    ...(seed === undefined ? {} : { sampling: seededRoles(seed) }),
  };
}

/** A request's seed seeds every role of its rehearsal too, so the same request rehearses the same way. */
function seededRoles(seed: number): { act: { seed: number }; rehearse: { seed: number }; reflect: { seed: number }; summarize: { seed: number } } {
  return { act: { seed }, rehearse: { seed }, reflect: { seed }, summarize: { seed } };
}
