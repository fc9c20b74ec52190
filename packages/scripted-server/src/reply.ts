import { EnvaceError } from "@envace/errors";
/**
 * What the scripted server answers to one request. A `generate` reply is model output: the
 * server renders it as a chat completion, a text completion or a stream of either, depending
 * on the endpoint and the request's flags. The other replies are raw HTTP behaviour, including
 * the failures a client must survive.
 */

/** A script the server cannot answer from: a reply without choices, token log-probabilities that do not match the text. */
export class ScriptError extends EnvaceError {
  override readonly code = "script";
}

/** One sampled token, for servers that report token ids and logprobs. */
export interface ScriptedToken {
  id: number;
  /** The token's text; concatenated, the tokens spell the choice's text. */
  text: string;
  logprob: number;
  /** Alternatives at this position (most likely first), for `top_logprobs`. */
  top?: { id: number; text: string; logprob: number }[];
}

export interface ScriptedToolCall {
  /** Defaults to `call_<choice>_<position>`. */
  id?: string;
  name: string;
  /** A JSON string as on the wire, or an object the server encodes. A string is sent verbatim, malformed or not. */
  arguments: string | Record<string, unknown>;
}

/** One choice of a generation. */
export interface ScriptedChoice {
  /** Message content (chat) or completion text. Derived from `tokens` when absent. */
  text?: string;
  /** Chat only: separated reasoning, sent as `reasoning_content` and `reasoning`. */
  reasoning?: string;
  /** Chat only: native tool calls. */
  toolCalls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Token ids and logprobs, returned when the request asks for them and the dialect can. */
  tokens?: ScriptedToken[];
}

export interface GenerateReply {
  type: "generate";
  /** Fewer choices than the request's `n` are repeated in turn to fill it. */
  choices: ScriptedChoice[];
  /** Prompt token ids for `return_token_ids`; a token-array prompt is echoed when absent. */
  promptTokenIds?: number[];
  /** Fields merged into the top level of the response body (or of every streamed chunk). */
  extra?: Record<string, unknown>;
}

/** A JSON body with any status, for routes the server does not render itself (`/generate`, `/completion`). */
export interface JsonReply {
  type: "json";
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** An error status with an OpenAI-style `{"error": {…}}` body. */
export interface ErrorReply {
  type: "error";
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** A body that is not the JSON it claims to be. */
export interface MalformedReply {
  type: "malformed";
  status: number;
  body: string;
}

/** The connection is destroyed, optionally after headers and a partial body went out. */
export interface DropReply {
  type: "drop";
  partial?: string;
}

/** Wait, then answer (if the client is still listening). */
export interface DelayReply {
  type: "delay";
  ms: number;
  then: Reply;
}

export type Reply = GenerateReply | JsonReply | ErrorReply | MalformedReply | DropReply | DelayReply;

type ChoiceOptions = Omit<ScriptedChoice, "text">;

/** Builders for every kind of reply. */
export const reply = {
  /** A generation with one choice holding `text`. */
  text(text: string, options: ChoiceOptions & { promptTokenIds?: number[] } = {}): GenerateReply {
    const { promptTokenIds, ...choice } = options;
    return generate([{ ...choice, text }], promptTokenIds);
  },
  /** A generation with one choice spelled by `tokens`. */
  tokens(tokens: ScriptedToken[], options: Omit<ChoiceOptions, "tokens"> & { promptTokenIds?: number[] } = {}): GenerateReply {
    const { promptTokenIds, ...choice } = options;
    return generate([{ ...choice, tokens }], promptTokenIds);
  },
  /** A chat generation that calls tools. */
  toolCalls(calls: ScriptedToolCall[], options: ChoiceOptions = {}): GenerateReply {
    return generate([{ ...options, toolCalls: calls, text: options.tokens ? undefined : "" }]);
  },
  /** A generation with several choices (for `n`). */
  choices(choices: ScriptedChoice[], promptTokenIds?: number[]): GenerateReply {
    return generate(choices, promptTokenIds);
  },
  json(body: unknown, status = 200, headers?: Record<string, string>): JsonReply {
    return { type: "json", status, body, ...(headers ? { headers } : {}) };
  },
  error(status: number, message = `scripted error ${status}`, headers?: Record<string, string>): ErrorReply {
    return { type: "error", status, message, ...(headers ? { headers } : {}) };
  },
  /** HTTP 429 with `retry-after-ms`, which the `openai` client honours. */
  rateLimited(retryAfterMs = 1): ErrorReply {
    return { type: "error", status: 429, message: "rate limited", headers: { "retry-after-ms": String(retryAfterMs) } };
  },
  malformed(body = '{"id": "chatcmpl-truncated", "choices": [', status = 200): MalformedReply {
    return { type: "malformed", status, body };
  },
  drop(partial?: string): DropReply {
    return partial === undefined ? { type: "drop" } : { type: "drop", partial };
  },
  delay(ms: number, then: Reply): DelayReply {
    return { type: "delay", ms, then };
  },
} as const;

function generate(choices: ScriptedChoice[], promptTokenIds?: number[]): GenerateReply {
  return { type: "generate", choices, ...(promptTokenIds ? { promptTokenIds } : {}) };
}

/** Letters and their ids, for quick token scripts: `tokensOf("ab", [-0.1, -0.2])`. */
export function tokensOf(text: string, logprobs: readonly number[]): ScriptedToken[] {
  const chars = Array.from(text);
  if (chars.length !== logprobs.length) {
    throw new ScriptError(`tokensOf: ${chars.length} characters but ${logprobs.length} logprobs`);
  }
  return chars.map((char, i) => ({ id: char.codePointAt(0)!, text: char, logprob: logprobs[i]! }));
}
