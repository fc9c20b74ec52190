import { z } from "zod";
import { HttpError, requestJson, type HttpSettings } from "@envace/http";

/** The OpenAI-compatible servers this package knows the token-level extensions of. */
export const ServerKind = z.enum(["vllm", "sglang", "llama.cpp", "openai", "unknown"]);
export type ServerKind = z.infer<typeof ServerKind>;

/** The route that takes token ids in and gives token ids and logprobs out. */
export type TokenRoute = "completions" | "sglang-generate" | "llama.cpp-completion";

/** What a server can return, which decides what training can use. */
export interface ServerCapabilities {
  kind: ServerKind;
  /** Per-token logprobs on chat completions (`logprobs: true`). */
  chatLogprobs: boolean;
  /** Output token ids on chat completions (vLLM `return_token_ids`, or `return_tokens_as_token_ids`). */
  chatTokenIds: boolean;
  /** The templated prompt's token ids on chat completions (vLLM `return_token_ids`). */
  chatPromptTokenIds: boolean;
  /** Token-in, token-out route, or null when the server has none. */
  tokenRoute: TokenRoute | null;
  /** Extra sampling fields the server accepts (`top_k`, `min_p`, `repetition_penalty`). */
  extendedSampling: boolean;
  /** Caveats a user should know about this server's token data. */
  notes: string[];
}

const NOTES: Record<ServerKind, string[]> = {
  vllm: [
    "vLLM reports raw-model logprobs by default (--logprobs-mode raw_logprobs); they are the sampler's only at temperature 1 without top-p/top-k. Start vLLM with --logprobs-mode processed_logprobs to sample elsewhere.",
    "Token ids need vLLM >= 0.10.2 (return_token_ids); older versions give output ids through return_tokens_as_token_ids only.",
  ],
  sglang: ["Chat completions return no token ids: use the token route (/generate with input_ids and return_logprob)."],
  "llama.cpp": [
    "llama.cpp reports logprobs of the raw model distribution (before its sampler chain); they are the sampler's only at temperature 1 with top_k 0, top_p 1, min_p 0, which this package sends unless told otherwise.",
    "Chat completions return no token ids: use the token route (/completion with return_tokens and n_probs).",
  ],
  openai: ["The OpenAI API returns logprobs but never token ids: it can act, rehearse and judge, not provide training rows."],
  unknown: ["Unrecognised server: only standard OpenAI fields are sent; token data is used if the server returns it anyway."],
};

/** The capabilities of a server of a known kind. */
export function capabilitiesOf(kind: ServerKind): ServerCapabilities {
  const base = { kind, notes: NOTES[kind] };
  switch (kind) {
    case "vllm":
      return { ...base, chatLogprobs: true, chatTokenIds: true, chatPromptTokenIds: true, tokenRoute: "completions", extendedSampling: true };
    case "sglang":
      return { ...base, chatLogprobs: true, chatTokenIds: false, chatPromptTokenIds: false, tokenRoute: "sglang-generate", extendedSampling: true };
    case "llama.cpp":
      return { ...base, chatLogprobs: true, chatTokenIds: false, chatPromptTokenIds: false, tokenRoute: "llama.cpp-completion", extendedSampling: true };
    case "openai":
    case "unknown":
      return { ...base, chatLogprobs: true, chatTokenIds: false, chatPromptTokenIds: false, tokenRoute: null, extendedSampling: false };
  }
}

/**
 * What training (exact prompt and output token ids plus sampler logprobs per generation) would
 * miss on this server, on the chat route or on the token route. Empty when nothing is missing.
 */
export function trainingGaps(capabilities: ServerCapabilities, route: "chat" | "tokens"): string[] {
  const server = `${capabilities.kind} server`;
  if (route === "tokens") {
    return capabilities.tokenRoute
      ? []
      : [
          `the ${server} has no token-in/token-out route, so rollouts cannot keep exact token ids; use vLLM, SGLang, llama.cpp, ONNX or the built-in model for training`,
        ];
  }
  const gaps: string[] = [];
  if (!capabilities.chatTokenIds) gaps.push(`the ${server} returns no output token ids on chat completions`);
  if (!capabilities.chatPromptTokenIds) gaps.push(`the ${server} returns no prompt token ids on chat completions`);
  if (!capabilities.chatLogprobs) gaps.push(`the ${server} returns no logprobs on chat completions`);
  return gaps;
}

const ModelList = z.object({ data: z.array(z.looseObject({ id: z.string(), owned_by: z.string().optional() })) });

const OWNERS: Record<string, ServerKind> = {
  vllm: "vllm",
  sglang: "sglang",
  llamacpp: "llama.cpp",
  "llama.cpp": "llama.cpp",
  openai: "openai",
  system: "openai",
  "openai-internal": "openai",
};

export interface DetectedServer {
  capabilities: ServerCapabilities;
  /** Model ids from `GET /models`, empty if the route failed. */
  models: string[];
}

/**
 * Find out which server answers at `baseURL`: `GET <baseURL>/models` (`owned_by` names vLLM,
 * SGLang, llama.cpp or OpenAI), then the servers' own probes (`/version`, `/props`,
 * `/get_model_info`) on the origin. Connection failures propagate; a server that answers none
 * of the probes is `unknown`.
 */
export async function detectServer(baseURL: string, options: HttpSettings): Promise<DetectedServer> {
  // eslint-disable-next-line regexp/no-super-linear-move -- a configured URL, short and trusted
  const base = baseURL.replace(/\/+$/, "");
  const origin = base.replace(/\/v1$/, "");
  let models: string[] = [];
  try {
    const list = ModelList.safeParse(await requestJson({ url: `${base}/models`, ...options }));
    if (list.success) {
      models = list.data.data.map((m) => m.id);
      for (const model of list.data.data) {
        const kind = model.owned_by === undefined ? undefined : OWNERS[model.owned_by.toLowerCase()];
        if (kind) return { capabilities: capabilitiesOf(kind), models };
      }
    }
  } catch (error) {
    if (!(error instanceof HttpError) || error.code !== "status") throw error;
  }
  const probes: [string, ServerKind, (body: unknown) => boolean][] = [
    ["/props", "llama.cpp", (b) => isObject(b) && "default_generation_settings" in b],
    ["/get_model_info", "sglang", (b) => isObject(b) && "model_path" in b],
    ["/version", "vllm", (b) => isObject(b) && typeof b.version === "string"],
  ];
  for (const [path, kind, matches] of probes) {
    try {
      if (matches(await requestJson({ url: `${origin}${path}`, ...options }))) return { capabilities: capabilitiesOf(kind), models };
    } catch (error) {
      if (!(error instanceof HttpError) || error.code === "connection" || error.code === "timeout") throw error;
    }
  }
  return { capabilities: capabilitiesOf("unknown"), models };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
