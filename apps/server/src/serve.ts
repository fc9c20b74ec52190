import { basename } from "node:path";
import { parseModelSpec, policyFromSpec, type ModelSpec } from "@envace/models";
import { InputError, type Policy, type Tokenizer } from "@envace/protocol";
import type { Logger } from "pino";
import { buildApp, type App } from "./app.js";
import { isLoopback, loadServerConfig, parseServerConfig, type ServerConfig, type ServerConfigInput } from "./config.js";

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
  /** Bearer tokens in addition to the config's. Default: `ENVACE_SERVER_TOKEN` when set. */
  tokens?: readonly string[];
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
   * Stop: refuse new requests (503), let those in flight finish, and cut any still running after
   * `shutdown_grace_s`. Resolves once the server is closed. Idempotent.
   */
  close(): Promise<void>;
}

/** The bearer tokens: the config's and the one in the environment, if any. */
export function serverTokens(config: ServerConfig, extra: readonly string[] | undefined): string[] {
  const fromEnv = process.env.ENVACE_SERVER_TOKEN;
  return [...config.tokens, ...(extra ?? (fromEnv !== undefined && fromEnv.length > 0 ? [fromEnv] : []))];
}

/** Start the server on `config.host:config.port` (port 0: a free one). */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const config = parseServerConfig(options.config ?? {}, "server config");
  const tokens = serverTokens(config, options.tokens);
  if (tokens.length === 0 && !isLoopback(config.host)) {
    throw new ServeError(`refusing to listen on ${config.host} without a bearer token: set ENVACE_SERVER_TOKEN or tokens: in the server config, or bind to 127.0.0.1`);
  }
  const app = buildApp({ policy: options.policy, tokenizer: options.tokenizer, model: options.model, config, tokens, logger: options.logger });
  options.prepare?.(app);
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
      const idle = setInterval(() => {
        app.fastify.server.closeIdleConnections();
      }, 50);
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
}

/** The served model id: the config's, else the upstream's model, else the checkpoint folder's name. */
export function servedModelName(spec: ModelSpec, config: ServerConfig): string {
  if (config.model !== undefined) return config.model;
  return spec.kind === "openai" ? spec.model : basename(spec.dir.replace(/\/+$/, "")) || spec.dir;
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
  };
  const tokens = serverTokens(config, undefined);
  if (tokens.length === 0 && !isLoopback(config.host)) {
    throw new ServeError(`refusing to listen on ${config.host} without a bearer token: set ENVACE_SERVER_TOKEN or tokens: in the server config, or bind to 127.0.0.1`);
  }
  const spec = withUpstreamDefaults(parseModelSpec(options.policy), config);
  log.info({ policy: options.policy }, "loading the policy");
  const model = await policyFromSpec(spec);
  const server = await startServer({ policy: model.policy, tokenizer: model.tokenizer, model: servedModelName(spec, config), config, tokens, logger: log });
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
