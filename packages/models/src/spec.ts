import { InputError, type Policy, type Sampler, type Tokenizer } from "@envace/protocol";
import { loadHuggingFaceTokenizer, SamplerPolicy } from "@envace/trajectory";
import type { RetryEvent } from "@envace/http";
import { ServerKind } from "./openai/capabilities.js";
import { OpenAIChatPolicy } from "./openai/chat-policy.js";
import { ServerConnection } from "./openai/client.js";
import { ServerTokenSampler } from "./openai/token-sampler.js";
import { ModelCapabilityError, type TokenDataMode } from "./openai/wire.js";
import { loadOnnxModel } from "./onnx/policy.js";
import { loadTinyModel } from "./tiny/tiny.js";

/**
 * A model named on the command line:
 *
 * ```text
 * spec    = "openai:" base-url "#" model *("," option)
 *         | "onnx:" folder *("," option)
 *         | "tiny:" checkpoint-folder *("," option)
 * option  = key "=" value
 * ```
 *
 * `openai` options: `mode=chat|tokens` (default `chat`; `tokens` samples token ids in and out
 * through the server's token route and needs `tokenizer=<folder>`), `tokens=auto|require|off`
 * (chat mode: whether token data is requested, or required), `server=vllm|sglang|llama.cpp|openai`
 * (skip detection), `concurrency=<n>`, `timeout=<seconds>`, `retries=<n>`.
 * `onnx` options: `file=<model file inside the folder>`, `threads=<n>`.
 * `tiny` options: `engine=tfjs|onnx` (default `tfjs`), `threads=<n>` (onnx engine).
 * Every kind takes `thinking=on|off`, the `enable_thinking` chat-template variable (Qwen3).
 * Paths and URLs must not contain commas.
 */
export type ModelSpec =
  | { kind: "openai"; baseURL: string; model: string; options: Record<string, string> }
  | { kind: "onnx"; dir: string; options: Record<string, string> }
  | { kind: "tiny"; dir: string; options: Record<string, string> };

/** A spec that does not parse, or an option it does not allow; the message shows the grammar. */
export class ModelSpecError extends InputError {
  override readonly code: string = "model-spec";
  override readonly name = "ModelSpecError";
  constructor(spec: string, problem: string) {
    super(
      `model spec ${JSON.stringify(spec)}: ${problem}. Expected openai:<base-url>#<model>[,key=value…], onnx:<folder>[,key=value…] or tiny:<checkpoint folder>[,key=value…], ` +
        "e.g. openai:http://localhost:8000/v1#Qwen/Qwen3-8B,mode=tokens,tokenizer=./qwen3",
    );
  }
}

const ALLOWED: Record<ModelSpec["kind"], readonly string[]> = {
  openai: ["mode", "tokenizer", "tokens", "server", "concurrency", "timeout", "retries", "thinking"],
  onnx: ["file", "threads", "thinking"],
  tiny: ["engine", "threads", "thinking"],
};

export function parseModelSpec(spec: string): ModelSpec {
  const colon = spec.indexOf(":");
  const kind = colon < 0 ? "" : spec.slice(0, colon);
  if (kind !== "openai" && kind !== "onnx" && kind !== "tiny") throw new ModelSpecError(spec, `unknown kind ${JSON.stringify(kind || spec)}`);
  const [target = "", ...rawOptions] = spec.slice(colon + 1).split(",");
  // No prototype: only the options written are present (`options.toString` is not one).
  const options = Object.create(null) as Record<string, string>;
  for (const raw of rawOptions) {
    const eq = raw.indexOf("=");
    if (eq <= 0) throw new ModelSpecError(spec, `option ${JSON.stringify(raw)} is not key=value`);
    const key = raw.slice(0, eq);
    if (!ALLOWED[kind].includes(key)) throw new ModelSpecError(spec, `${kind} takes no option ${JSON.stringify(key)} (allowed: ${ALLOWED[kind].join(", ")})`);
    options[key] = raw.slice(eq + 1);
  }
  if (kind === "openai") {
    const hash = target.indexOf("#");
    const baseURL = hash < 0 ? target : target.slice(0, hash);
    const model = hash < 0 ? "" : target.slice(hash + 1);
    if (!/^https?:\/\/[^/]/.test(baseURL)) throw new ModelSpecError(spec, `${JSON.stringify(baseURL)} is not an http(s) base URL`);
    if (!model) throw new ModelSpecError(spec, 'the served model is missing after "#"');
    return { kind, baseURL, model, options };
  }
  if (!target) throw new ModelSpecError(spec, "the folder is missing");
  return { kind, dir: target, options };
}

export interface ResolvedModel {
  spec: ModelSpec;
  /** Generates turns in every role. */
  policy: Policy;
  /** Token-in, token-out sampling, when the model offers it (everything but `openai` chat mode). */
  sampler?: Sampler;
  tokenizer?: Tokenizer;
  /** The server connection of an `openai:` spec, e.g. to check that the server answers before a long run. */
  connection?: ServerConnection;
}

export interface ResolveOptions {
  /** API key for `openai:` specs. Default `EMPTY` (what self-hosted servers accept). */
  apiKey?: string;
  onRetry?: (event: RetryEvent) => void;
  fetch?: typeof fetch;
}

/**
 * Resolve a spec to a policy (and a token sampler where there is one). Every CLI command that
 * takes a model goes through here, so they all accept the same strings and fail the same way.
 */
export async function policyFromSpec(spec: string | ModelSpec, options: ResolveOptions = {}): Promise<ResolvedModel> {
  const source = typeof spec === "string" ? spec : JSON.stringify(spec);
  const parsed = typeof spec === "string" ? parseModelSpec(spec) : spec;
  const o = parsed.options;
  const number = (key: string): number | undefined => {
    if (o[key] === undefined) return undefined;
    const value = Number(o[key]);
    if (!Number.isFinite(value) || value <= 0) throw new ModelSpecError(source, `${key} must be a positive number, got ${JSON.stringify(o[key])}`);
    return value;
  };
  const choice = <T extends string>(key: string, allowed: readonly T[], fallback: T): T => {
    const value = o[key] ?? fallback;
    if (!(allowed as readonly string[]).includes(value))
      throw new ModelSpecError(source, `${key} must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
    return value as T;
  };
  const thinking = choice("thinking", ["on", "off", "default"], "default");
  const templateVariables = thinking === "default" ? undefined : { enable_thinking: thinking === "on" };
  const threads = number("threads");

  switch (parsed.kind) {
    case "openai": {
      const mode = choice("mode", ["chat", "tokens"], "chat");
      const server = o.server === undefined ? undefined : ServerKind.safeParse(o.server);
      if (server && !server.success)
        throw new ModelSpecError(source, `server must be one of ${ServerKind.options.join(", ")}, got ${JSON.stringify(o.server)}`);
      const timeout = number("timeout");
      const concurrency = number("concurrency");
      const retries = o.retries === undefined ? undefined : Number(o.retries);
      if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0))
        throw new ModelSpecError(source, `retries must be a whole number, got ${JSON.stringify(o.retries)}`);
      const connection = new ServerConnection({
        baseURL: parsed.baseURL,
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        ...(concurrency !== undefined ? { maxConcurrency: Math.floor(concurrency) } : {}),
        ...(retries !== undefined ? { retry: { maxRetries: retries } } : {}),
        ...(server?.success ? { server: server.data } : {}),
        ...(options.onRetry ? { onRetry: options.onRetry } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      if (mode === "chat") {
        if (o.tokenizer !== undefined) throw new ModelSpecError(source, "tokenizer is used only with mode=tokens");
        const policy = new OpenAIChatPolicy({
          baseURL: parsed.baseURL,
          model: parsed.model,
          connection,
          tokenData: choice<TokenDataMode>("tokens", ["auto", "require", "off"], "auto"),
          ...(templateVariables ? { extraBody: { chat_template_kwargs: templateVariables } } : {}),
        });
        return { spec: parsed, policy, connection };
      }
      if (o.tokens !== undefined) throw new ModelSpecError(source, "tokens applies to mode=chat; mode=tokens always returns token data");
      if (o.tokenizer === undefined) throw new ModelSpecError(source, "mode=tokens needs tokenizer=<folder with tokenizer.json and tokenizer_config.json>");
      const tokenizer = await loadHuggingFaceTokenizer(o.tokenizer);
      if (!tokenizer.chatTemplate)
        throw new ModelCapabilityError(`${o.tokenizer}: the tokenizer has no chat template (tokenizer_config.json chat_template or chat_template.jinja)`);
      const sampler = new ServerTokenSampler({ baseURL: parsed.baseURL, model: parsed.model, connection });
      const policy = new SamplerPolicy({
        id: `openai:${parsed.model}`,
        sampler,
        tokenizer,
        template: tokenizer.chatTemplate,
        ...(templateVariables ? { templateVariables } : {}),
      });
      return { spec: parsed, policy, sampler, tokenizer, connection };
    }
    case "onnx": {
      const loaded = await loadOnnxModel(parsed.dir, {
        ...(o.file !== undefined ? { file: o.file } : {}),
        ...(threads !== undefined ? { threads } : {}),
        ...(templateVariables ? { templateVariables } : {}),
      });
      return { spec: parsed, policy: loaded.policy, sampler: loaded.sampler, tokenizer: loaded.tokenizer };
    }
    case "tiny": {
      const loaded = await loadTinyModel(parsed.dir, {
        engine: choice<"tfjs" | "onnx">("engine", ["tfjs", "onnx"], "tfjs"),
        ...(threads !== undefined ? { threads } : {}),
        ...(templateVariables ? { templateVariables } : {}),
      });
      return { spec: parsed, policy: loaded.policy, sampler: loaded.sampler, tokenizer: loaded.tokenizer };
    }
  }
}
