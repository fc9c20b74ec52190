import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { basename, dirname, join } from "node:path";
import { parseModelSpec, policyFromSpec, type ModelSpec } from "@envace/models";
import { InputError, type Policy, type Tokenizer } from "@envace/protocol";
import type { Logger } from "pino";
import { buildApp, type App } from "./app.js";
import {
  fitRehearsalToContext,
  isLoopback,
  loadServerConfig,
  parseServerConfig,
  readTokenFile,
  tokenProblem,
  type ServerConfig,
  type ServerConfigInput,
} from "./config.js";
import { upstreamProbe, type ReadinessProbe } from "./ready.js";

/** The server cannot start as configured (no token beyond loopback, a port in use, …). */
export class ServeError extends InputError {
  override readonly code: string = "serve";
  override readonly name = "ServeError";
}

export interface StartOptions {
  policy: Policy;
  tokenizer?: Tokenizer | undefined;
  model: string;
  config?: ServerConfig | ServerConfigInput;
  /** Bearer tokens in addition to the config's (and its `token_file`'s). Default: `ENVACE_SERVER_TOKEN` when set. */
  tokens?: readonly string[];
  /** The model's context in tokens, when known: rehearsal prompts are fitted to it (`fitRehearsalToContext`). */
  contextTokens?: number | undefined;
  /** Whether the model answers, for `GET /ready`; default: ready once started. */
  ready?: ReadinessProbe | undefined;
  /** Where the request log goes (a child of it); default JSON lines on stderr. */
  logger?: Logger | undefined;
  /** Called with the app before it listens, for routes or hooks of the caller's own (fastify takes them only until then). */
  prepare?: (app: App) => void;
}

export interface RunningServer {
  /** `http://<host>:<port>`; clients take `${url}/v1` as their base URL. */
  url: string;
  port: number;
  app: App;
  /**
   * Stop: accept no new connection and close idle keep-alive ones; answer 503 (`connection:
   * close`) to a request arriving on a connection still open; let those in flight finish (their
   * responses carry `connection: close`), and cut any still running after `shutdown_grace_s`.
   * Resolves once the server is closed. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * The bearer tokens, each held to one rule (`tokenProblem`) whatever its source: the config's
 * `tokens` (checked when it loads), its `token_file`, and `extra` — or, without `extra`,
 * `ENVACE_SERVER_TOKEN` when set. A bad one is refused with a line naming its source.
 */
export function serverTokens(config: ServerConfig, extra: readonly string[] | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const tokens = [...config.tokens];
  if (config.token_file !== undefined) tokens.push(...readTokenFile(config.token_file));
  const fromEnv = env.ENVACE_SERVER_TOKEN;
  const more =
    extra === undefined
      ? fromEnv !== undefined && fromEnv.length > 0
        ? [{ token: fromEnv, source: "ENVACE_SERVER_TOKEN" }]
        : []
      : extra.map((token, i) => ({ token, source: `tokens[${i}] (the tokens option)` }));
  for (const { token, source } of more) {
    const problem = tokenProblem(token);
    if (problem !== undefined) throw new ServeError(`${source}: ${problem}`);
    tokens.push(token);
  }
  return tokens;
}

const NO_TOKEN = "set ENVACE_SERVER_TOKEN, or token_file: (or tokens:) in the server config, or bind to 127.0.0.1";

/** Start the server on `config.host:config.port` (port 0: a free one). */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const config = fitRehearsalToContext(parseServerConfig(options.config ?? {}, "server config"), options.contextTokens, "the model's context");
  const tokens = serverTokens(config, options.tokens);
  if (tokens.length === 0 && !isLoopback(config.host)) throw new ServeError(`refusing to listen on ${config.host} without a bearer token: ${NO_TOKEN}`);
  const app = buildApp({
    policy: options.policy,
    tokenizer: options.tokenizer,
    model: options.model,
    config,
    tokens,
    logger: options.logger,
    ready: options.ready,
  });
  options.prepare?.(app);
  // Connections and the responses each has open, for a shutdown that closes every connection
  // without a request in progress: idle keep-alive ones, and those that never sent a request
  // (which Node's closeIdleConnections leaves open until the grace period ends).
  const connections = new Map<Socket, number>();
  app.fastify.server.on("connection", (socket: Socket) => {
    connections.set(socket, 0);
    socket.once("close", () => connections.delete(socket));
  });
  app.fastify.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    connections.set(socket, (connections.get(socket) ?? 0) + 1);
    res.once("close", () => {
      if (connections.has(socket)) connections.set(socket, connections.get(socket)! - 1);
    });
  });
  try {
    await app.fastify.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ServeError(`cannot listen on ${config.host}:${config.port} (${code ?? (error as Error).message})`, { cause: error });
  }
  const address = app.fastify.server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const host = config.host.includes(":") && !config.host.startsWith("[") ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const grace = setTimeout(() => {
        app.abortAll(new Error("the server shut down before the request finished"));
        app.fastify.server.closeAllConnections();
      }, config.shutdown_grace_s * 1000);
      // A keep-alive connection turns idle once its request is answered; close it then, rather
      // than after the keep-alive timeout.
      const closeIdle = (): void => {
        for (const [socket, open] of connections) if (open === 0) socket.destroy();
      };
      closeIdle();
      const idle = setInterval(closeIdle, 50);
      try {
        await app.fastify.close();
      } finally {
        clearTimeout(grace);
        clearInterval(idle);
      }
    })();
    return closing;
  };
  return { url: `http://${host}:${port}`, port, app, close };
}

/** What `envace serve` takes. */
export interface ServeCommandOptions {
  policy: string;
  host?: string | undefined;
  port?: number | undefined;
  config?: string | undefined;
  /** The request log's level, over the config's `log_level`. */
  logLevel?: ServerConfig["log_level"] | undefined;
  /** A file of bearer tokens, over the config's `token_file`. */
  tokenFile?: string | undefined;
}

/**
 * The served model id: the config's, else the upstream's model, else one that tells checkpoints
 * apart. A checkpoint a run saved (`<run>/checkpoints/<step>/<folder>`) is `<run>-<step>`, with
 * `-<folder>` unless the folder is `policy` (`runs/default/checkpoints/step-000040/policy` is
 * `default-step-000040`); any other folder is its name (`checkpoints/base` is `base`).
 */
export function servedModelName(spec: ModelSpec, config: ServerConfig): string {
  if (config.model !== undefined) return config.model;
  if (spec.kind === "openai") return spec.model;
  let dir = spec.dir;
  while (dir.length > 1 && dir.endsWith("/")) dir = dir.slice(0, -1);
  const folder = basename(dir);
  const step = basename(dirname(dir));
  const checkpoints = dirname(dirname(dir));
  if (/^step-\d+$/.test(step) && basename(checkpoints) === "checkpoints") {
    const run = basename(dirname(checkpoints));
    const id = run === "" || run === "." || run === ".." ? step : `${run}-${step}`;
    return folder === "policy" ? id : `${id}-${folder}`;
  }
  return folder || dir;
}

/** The context of a checkpoint folder's model (`config.json`'s `max_position_embeddings`), when it says. */
export function checkpointContext(dir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, "config.json"), "utf8");
  } catch {
    return undefined;
  }
  const config = JSON.parse(text) as { max_position_embeddings?: unknown; maxPositionEmbeddings?: unknown } | null;
  const value = config?.max_position_embeddings ?? config?.maxPositionEmbeddings;
  return typeof value === "number" && Number.isInteger(value) && value > 1 ? value : undefined;
}

/** Upstream timeout and retries from the config, unless the spec sets them itself. */
export function withUpstreamDefaults(spec: ModelSpec, config: ServerConfig): ModelSpec {
  if (spec.kind !== "openai") return spec;
  return { ...spec, options: { timeout: String(config.upstream.timeout_s), retries: String(config.upstream.retries), ...spec.options } };
}

/**
 * `envace serve`: load the policy, listen, print the URL on stdout (`print`), and run until SIGTERM
 * or SIGINT, which finish the requests in flight before the process exits. `log` is the command's
 * log (loading, shutting down).
 */
export async function serve(options: ServeCommandOptions, log: Logger, print: (line: string) => void = console.log): Promise<void> {
  const file = options.config === undefined ? parseServerConfig({}, "server config") : loadServerConfig(options.config);
  const config: ServerConfig = {
    ...file,
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.logLevel === undefined ? {} : { log_level: options.logLevel }),
    ...(options.tokenFile === undefined ? {} : { token_file: options.tokenFile }),
  };
  const tokens = serverTokens(config, undefined);
  if (tokens.length === 0 && !isLoopback(config.host)) throw new ServeError(`refusing to listen on ${config.host} without a bearer token: ${NO_TOKEN}`);
  const spec = withUpstreamDefaults(parseModelSpec(options.policy), config);
  // Refused before the model loads: a rehearsal prompt limit the checkpoint's context cannot hold.
  const contextTokens = spec.kind === "openai" ? undefined : checkpointContext(spec.dir);
  const fitted = fitRehearsalToContext(config, contextTokens, `${join(spec.kind === "openai" ? "" : spec.dir, "config.json")} max_position_embeddings`);
  log.info({ policy: options.policy }, "loading the policy");
  // The upstream's key is read here, at the command's edge; the library takes it as an argument.
  const upstreamKey = process.env.OPENAI_API_KEY;
  const model = await policyFromSpec(spec, upstreamKey === undefined || upstreamKey === "" ? {} : { apiKey: upstreamKey });
  const connection = model.connection;
  const ready =
    connection === undefined
      ? undefined
      : upstreamProbe(connection.baseURL, {
          headers: connection.headers,
          onChange: (readiness, detail) =>
            log[readiness.ready ? "info" : "warn"](
              { ready: readiness.ready, detail },
              readiness.ready ? "the model server answers" : "the model server does not answer",
            ),
        });
  const server = await startServer({
    policy: model.policy,
    tokenizer: model.tokenizer,
    model: servedModelName(spec, config),
    config: fitted,
    tokens,
    logger: log,
    ready,
  });
  print(`envace serve: ${servedModelName(spec, config)} on ${server.url}/v1`);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      log.info({ signal, grace_s: config.shutdown_grace_s }, "shutting down: finishing the requests in flight");
      void server.close().then(resolve, resolve);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}
