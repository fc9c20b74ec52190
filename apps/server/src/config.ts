import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError, parseConfigValue, parseYamlConfig } from "@envace/config";
import { RehearsalSettingText } from "@envace/rehearsal";
import type { RehearsePromptOptions } from "@envace/trajectory";
import { z } from "zod";

/** The sections of the Rehearse-role prompt (`RehearseSections` of `@envace/trajectory`); each left out is shown. */
const RehearsePrompt = z.strictObject({
  /** `true`: the built-in simulator instructions; `false`: none; a string: these instead. */
  instructions: z.union([z.boolean(), z.string().min(1)]).optional(),
  tools: z.boolean().optional(),
  examples: z.boolean().optional(),
  history: z.boolean().optional(),
  latest_act: z.boolean().optional(),
});

/**
 * `server.yaml`: every setting of `envace serve`, each with its default. Command-line flags
 * (`--host`, `--port`) win over the file.
 */
export const ServerConfig = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(8080),
  /** The model id clients name in `model` and `GET /v1/models` lists. Default: the upstream's model, or the checkpoint folder's name. */
  model: z.string().min(1).optional(),
  /**
   * Bearer tokens that may call `/v1` (and `/metrics` beyond loopback). Prefer `token_file` or
   * `ENVACE_SERVER_TOKEN`, which keep the secret out of the config. Required beyond loopback.
   */
  tokens: z
    .array(
      z.string().superRefine((token, context) => {
        const problem = tokenProblem(token);
        if (problem !== undefined) context.addIssue({ code: "custom", message: problem });
      }),
    )
    .default([]),
  /** A file of bearer tokens, one a line (`#` comments and blank lines skipped); relative to the config file's folder. */
  token_file: z.string().min(1).optional(),
  limits: z
    .strictObject({
      body_bytes: z
        .number()
        .int()
        .positive()
        .default(4 * 1024 * 1024),
      max_completion_tokens: z.number().int().positive().default(8192),
      default_max_tokens: z.number().int().positive().default(1024),
      max_n: z.number().int().positive().default(8),
    })
    .default({ body_bytes: 4 * 1024 * 1024, max_completion_tokens: 8192, default_max_tokens: 1024, max_n: 8 }),
  concurrency: z
    .strictObject({
      /** Requests generating at once. */
      requests: z.number().int().positive().default(4),
      /** Requests waiting for a slot; one more is answered 429. */
      queue: z.number().int().min(0).default(64),
      /** The `retry-after` of a 429, in seconds. */
      retry_after_s: z.number().int().positive().default(1),
    })
    .default({ requests: 4, queue: 64, retry_after_s: 1 }),
  /** For `openai:` policies, unless the spec sets `timeout=` / `retries=` itself. */
  upstream: z
    .strictObject({ timeout_s: z.number().positive().default(300), retries: z.number().int().min(0).default(2) })
    .default({ timeout_s: 300, retries: 2 }),
  rehearsal: z
    .strictObject({
      /** What a request with tools gets unless it asks otherwise (`envace.rehearsal`). */
      setting: RehearsalSettingText.default("none"),
      memory_budget: z.number().int().positive().nullable().default(null),
      /** The most attempts one request may ask for. */
      max_attempts: z.number().int().positive().default(4),
      /** Act turns per private attempt. */
      max_turns: z.number().int().positive().default(8),
      /** Output tokens per generation inside rehearsal. */
      max_response_tokens: z.number().int().positive().default(1024),
      /** Prompt tokens per generation inside rehearsal; a longer reflect or summarize prompt is not sent (a fallback stands in). Default: no limit. */
      max_prompt_tokens: z.number().int().positive().nullable().default(null),
      /** Tools that change the world: the memory puts their predicted failures first. Default: every tool. */
      write_tools: z.array(z.string().min(1)).nullable().default(null),
      /** How the Rehearse role is prompted: the sections the policy was trained with. Default: all of them, with the built-in instructions. */
      rehearse_prompt: RehearsePrompt.nullable().default(null),
    })
    .default({
      setting: "none",
      memory_budget: null,
      max_attempts: 4,
      max_turns: 8,
      max_response_tokens: 1024,
      max_prompt_tokens: null,
      write_tools: null,
      rehearse_prompt: null,
    }),
  /** Rehearsal memories kept, per conversation, least recently used evicted first. */
  memory: z
    .strictObject({
      max_entries: z.number().int().min(0).default(1024),
      max_bytes: z
        .number()
        .int()
        .min(0)
        .default(16 * 1024 * 1024),
    })
    .default({ max_entries: 1024, max_bytes: 16 * 1024 * 1024 }),
  /** How long SIGTERM waits for requests in flight before it cuts them. */
  shutdown_grace_s: z.number().positive().default(30),
  log_level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type ServerConfig = z.infer<typeof ServerConfig>;
export type ServerConfigInput = z.input<typeof ServerConfig>;

/** The Rehearse-prompt options of `@envace/trajectory` a config's `rehearsal.rehearse_prompt` stands for. */
export function rehearsePromptOf(config: ServerConfig): RehearsePromptOptions | undefined {
  const prompt = config.rehearsal.rehearse_prompt;
  if (prompt === null) return undefined;
  const { latest_act: latestAct, ...rest } = prompt;
  return { sections: { ...rest, ...(latestAct === undefined ? {} : { latestAct }) } };
}

/** A bad server config: names the file, the line and the key. */
export class ServerConfigError extends ConfigError {
  override readonly code: string = "server-config";
}

const serverConfigError = (message: string, options?: ErrorOptions): ServerConfigError => new ServerConfigError(message, options);

/** Validate a config value; `file` names it in errors. */
export function parseServerConfig(value: unknown, file: string): ServerConfig {
  return parseConfigValue(value, file, ServerConfig, serverConfigError);
}

/** Read `server.yaml` (YAML or JSON). */
export function loadServerConfig(path: string): ServerConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ServerConfigError(`${path}: cannot read the server config (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, {
      cause: error,
    });
  }
  const config = parseYamlConfig(text, path, ServerConfig, serverConfigError);
  // A token file named in the config is found beside it.
  return config.token_file === undefined ? config : { ...config, token_file: resolve(dirname(path), config.token_file) };
}

/** The fewest characters a bearer token may have, from every source: 32 is 128 bits as hex, and a guess per request cannot reach it. */
export const MIN_TOKEN_CHARS = 32;

/** What is wrong with a bearer token, if anything: too short, or characters a `Bearer` header cannot carry. Never quotes the token. */
export function tokenProblem(token: string): string | undefined {
  if (!/^[\x21-\x7e]*$/.test(token)) return "a bearer token may hold only visible ASCII characters (no spaces)";
  if (token.length < MIN_TOKEN_CHARS)
    return `a bearer token needs at least ${MIN_TOKEN_CHARS} characters (this one has ${token.length}); make one with: openssl rand -hex 32`;
  return undefined;
}

/** The tokens of a token file: one a line, blank lines and `#` comments skipped; each checked, naming file and line. */
export function parseTokenFile(text: string, file: string): string[] {
  const tokens: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const problem = tokenProblem(line);
    if (problem !== undefined) throw new ServerConfigError(`${file}:${index + 1}: ${problem}`);
    tokens.push(line);
  });
  if (tokens.length === 0) throw new ServerConfigError(`${file}: the token file holds no token`);
  return tokens;
}

/** Read a token file (see `parseTokenFile`). */
export function readTokenFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ServerConfigError(`${file}: cannot read the token file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { cause: error });
  }
  return parseTokenFile(text, file);
}

/**
 * The config with rehearsal's prompt limit fitted to a model whose context is known (`source`
 * names where it was read): left out, it becomes the context less one token (room for the first
 * generated one); set beyond that, no rehearsal prompt could be sent, and the config is refused.
 */
export function fitRehearsalToContext(config: ServerConfig, contextTokens: number | undefined, source: string): ServerConfig {
  if (contextTokens === undefined) return config;
  const room = contextTokens - 1;
  const set = config.rehearsal.max_prompt_tokens;
  if (set === null) return { ...config, rehearsal: { ...config.rehearsal, max_prompt_tokens: room } };
  if (set > room) {
    throw new ServerConfigError(
      `rehearsal.max_prompt_tokens: ${set} does not fit the model's context of ${contextTokens} tokens (${source}); set at most ${room}, or leave it out to derive it`,
    );
  }
  return config;
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
