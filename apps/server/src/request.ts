import { formatPath, type Message, type SamplingParams, type ToolSpec } from "@envace/protocol";
import { MAX_SCHEMA_DEPTH, pathBeyondDepth } from "@envace/trajectory";
import { z } from "zod";
import { RehearsalSettingText } from "@envace/rehearsal";
import { ApiError, badField } from "./errors.js";

const TextPart = z.object({ type: z.literal("text", { error: 'only text content parts are supported (type "text")' }), text: z.string() });

/** `content` as harnesses send it: a string, or an array of content parts of which the server reads text. */
const Content = z.union([z.string(), z.array(TextPart)], { error: "expected a string or an array of text content parts" });

const WireToolCall = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

const ChatMessage = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("system"), content: Content, name: z.string().optional() }),
    z.object({ role: z.literal("developer"), content: Content, name: z.string().optional() }),
    z.object({ role: z.literal("user"), content: Content, name: z.string().optional() }),
    z.object({
      role: z.literal("assistant"),
      content: Content.nullish(),
      name: z.string().optional(),
      reasoning_content: z.string().nullish(),
      tool_calls: z.array(WireToolCall).nullish(),
      refusal: z.string().nullish(),
    }),
    z.object({ role: z.literal("tool"), tool_call_id: z.string().min(1), content: Content, name: z.string().optional() }),
  ],
  { error: "role must be one of system, developer, user, assistant, tool" },
);
type ChatMessage = z.infer<typeof ChatMessage>;

const Tool = z.object({
  type: z.literal("function", { error: 'only function tools are supported (type "function")' }),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

const ToolChoice = z.union([z.enum(["auto", "none", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) })]);

/** The server's extension fields (`envace` in the request body). */
export const EnvaceRequestFields = z.object({
  /** `none`, `parallel:N` or `sequential:N`: private rehearsal before this turn (tools required). */
  rehearsal: RehearsalSettingText.optional(),
  /** Token budget of the rehearsal memory; `null` for none. */
  memory_budget: z.number().int().positive().nullable().optional(),
});
export type EnvaceRequestFields = z.infer<typeof EnvaceRequestFields>;

const nullableNumber = (schema: z.ZodNumber) => schema.nullish();

/**
 * `POST /v1/chat/completions` as OpenAI-compatible harnesses send it. Unknown fields are refused,
 * so nothing a client asked for is silently ignored; `user`, `metadata`, `store` and
 * `service_tier` are accepted because they do not change the answer.
 */
export const ChatCompletionRequest = z.strictObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(Tool).nullish(),
  tool_choice: ToolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  n: z.number().int().positive().nullish(),
  temperature: nullableNumber(z.number().min(0).max(2)),
  top_p: nullableNumber(z.number().gt(0).max(1)),
  max_tokens: nullableNumber(z.number().int().positive()),
  max_completion_tokens: nullableNumber(z.number().int().positive()),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: nullableNumber(z.number().int()),
  logprobs: z.boolean().nullish(),
  top_logprobs: nullableNumber(z.number().int().min(0).max(20)),
  presence_penalty: nullableNumber(z.number().min(-2).max(2)),
  frequency_penalty: nullableNumber(z.number().min(-2).max(2)),
  response_format: z.looseObject({ type: z.string() }).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  user: z.string().optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
  store: z.boolean().nullish(),
  service_tier: z.string().nullish(),
  envace: EnvaceRequestFields.optional(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** What the server allows; requests beyond it get a 400 naming the field. */
export interface RequestLimits {
  /** Largest `max_tokens` / `max_completion_tokens`, and the default when neither is given. */
  maxCompletionTokens: number;
  defaultMaxTokens: number;
  /** Largest `n`. */
  maxN: number;
  /** Whether the policy returns per-token logprobs (and a tokenizer to name the tokens). */
  logprobs: boolean;
}

/** A request validated against the OpenAI shapes and the server's limits, in protocol terms. */
export interface ChatTurnRequest {
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  /** `tool_choice: "none"`: the output is returned as text, never read as tool calls. */
  parseToolCalls: boolean;
  sampling: SamplingParams;
  n: number;
  stream: boolean;
  includeUsage: boolean;
  logprobs: boolean;
  envace: EnvaceRequestFields | undefined;
}

/**
 * How deeply a request body may nest, objects and arrays one level each (the body is level 1).
 * What reads the request afterwards (validation, hashing, the call validator, the upstream's
 * client) recurses, so a body nested 10^5 deep would overflow the stack there; the deepest
 * legitimate part is a tool schema, which has a limit of its own (`MAX_SCHEMA_DEPTH`).
 */
export const MAX_BODY_DEPTH = 128;

/** The field a too-deep path is reported as: its first four keys (`tools[0].function.parameters`). */
const depthParam = (path: readonly (string | number)[]): string => formatPath(path.slice(0, 4)) || "(body)";

/** Parse a request body: the first invalid field becomes a 400 that names it. */
export function parseChatRequest(body: unknown, limits: RequestLimits): ChatTurnRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new ApiError(400, "the request body must be a JSON object", "invalid_request_error", null, "invalid_body");
  const deep = pathBeyondDepth(body, MAX_BODY_DEPTH);
  if (deep !== undefined)
    throw badField(depthParam(deep), `nested deeper than ${MAX_BODY_DEPTH} levels (the server's limit for a request body)`, "nesting_too_deep");
  const parsed = ChatCompletionRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.filter((key): key is string | number => typeof key !== "symbol");
    if (issue.code === "unrecognized_keys") {
      const field = formatPath([...path, issue.keys[0]!]);
      throw badField(field, "the server does not support this field", "unsupported_parameter");
    }
    throw badField(formatPath(path) || "(body)", issue.message);
  }
  const request = parsed.data;
  const choice = request.tool_choice ?? "auto";
  if (choice === "required" || typeof choice === "object") throw badField("tool_choice", 'only "auto" and "none" are supported', "unsupported_value");
  if (request.parallel_tool_calls === false)
    throw badField("parallel_tool_calls", "the model may call several tools in one turn; false cannot be honoured", "unsupported_value");
  if ((request.presence_penalty ?? 0) !== 0) throw badField("presence_penalty", "penalties are not supported; send 0 or leave it out", "unsupported_value");
  if ((request.frequency_penalty ?? 0) !== 0) throw badField("frequency_penalty", "penalties are not supported; send 0 or leave it out", "unsupported_value");
  if (request.response_format && request.response_format.type !== "text")
    throw badField("response_format.type", 'only "text" is supported', "unsupported_value");
  if ((request.top_logprobs ?? 0) > 0) throw badField("top_logprobs", "alternatives are not returned; send 0 or leave it out", "unsupported_value");
  if (request.logprobs === true && !limits.logprobs) throw badField("logprobs", "this model returns no per-token logprobs", "unsupported_value");
  const n = request.n ?? 1;
  if (n > limits.maxN) throw badField("n", `at most ${limits.maxN} choices per request`, "unsupported_value");
  const tokenField = request.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? Math.min(limits.defaultMaxTokens, limits.maxCompletionTokens);
  if (maxTokens > limits.maxCompletionTokens) throw badField(tokenField, `at most ${limits.maxCompletionTokens} tokens per completion`, "unsupported_value");
  const stop = request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : request.stop;
  const sampling: SamplingParams = {
    temperature: request.temperature ?? 1,
    topP: request.top_p ?? 1,
    topK: 0,
    maxTokens,
    stop,
    ...(request.seed != null ? { seed: request.seed } : {}),
  };
  for (const [i, tool] of (request.tools ?? []).entries()) {
    if (tool.function.parameters !== undefined && pathBeyondDepth(tool.function.parameters, MAX_SCHEMA_DEPTH) !== undefined) {
      throw badField(
        `tools[${i}].function.parameters`,
        `nested deeper than ${MAX_SCHEMA_DEPTH} levels (the server's limit for a tool schema)`,
        "nesting_too_deep",
      );
    }
  }
  const tools: ToolSpec[] = (request.tools ?? []).map((tool) => ({
    type: "function",
    function: {
      name: tool.function.name,
      ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
      ...(tool.function.parameters !== undefined ? { parameters: tool.function.parameters as ToolSpec["function"]["parameters"] & object } : {}),
    },
  }));
  return {
    model: request.model,
    messages: request.messages.map(toProtocolMessage),
    tools,
    parseToolCalls: tools.length > 0 && choice === "auto",
    sampling,
    n,
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
    logprobs: request.logprobs === true,
    envace: request.envace,
  };
}

function text(content: z.infer<typeof Content>): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("");
}

/** One OpenAI message as a protocol message (`developer` is a system message). */
function toProtocolMessage(message: ChatMessage): Message {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: text(message.content) };
    case "user":
      return { role: "user", content: text(message.content) };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: text(message.content) };
    case "assistant": {
      const out: Message = { role: "assistant", content: message.content == null ? null : text(message.content) };
      if (message.reasoning_content != null) out.reasoning_content = message.reasoning_content;
      if (message.tool_calls != null && message.tool_calls.length > 0) out.tool_calls = message.tool_calls;
      return out;
    }
  }
}
