import { EnvaceError } from "@envace/errors";
import type { Environment, JsonValue, Task, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";
import { errorResultOf, McpToolErrorCode, resultOf, toolSpecOf } from "./results.js";
import { checkReach, describeServer, McpServerSpec, type McpServerSpecInput } from "./server-spec.js";
import type { ListLimits } from "./listing.js";
import type { Resolver } from "./reach.js";
import { openSession, type McpSession } from "./session.js";

/** A call made outside an episode: the environment was not reset first. */
export class McpEpisodeError extends EnvaceError {
  override readonly code = "episode-state";
}

export interface McpEnvironmentOptions {
  /** The server: `{ transport: "stdio", command, args?, env?, cwd? }` or `{ transport: "http", url, headers? }`. */
  server: McpServerSpecInput;
  /** Longest wait for one tool call, in ms; then the call is cancelled and answered `MCP_TIMEOUT`. Default 30 000. */
  callTimeoutMs?: number;
  /** Longest wait to connect and for each page of the tool listing, in ms. Default 30 000. */
  connectTimeoutMs?: number;
  /**
   * The tools a task may call. Default: the names of `task.tools` when it lists any (the specs the
   * agent and private rehearsal were shown), else every tool the server lists.
   */
  allow?: (task: Task) => readonly string[] | undefined;
  /** Allow an HTTP server that is not on loopback. Default false: such a server is refused. */
  allowRemote?: boolean;
  /** The client name the server sees. Default `envace`. */
  clientName?: string;
  /** How host names are resolved (default: the system resolver); every address is checked, then used. */
  resolve?: Resolver;
  /** Bounds on each episode's tool listing (pages, tools, bytes, time, schema depth); defaults in `DEFAULT_LIST_LIMITS`. */
  listLimits?: Partial<ListLimits>;
}

/** One call of the episode, for `state()`. */
interface CallRecord {
  name: string;
  arguments: JsonValue;
  status: ToolResult["status"];
  code?: string;
}

/**
 * Any MCP server as an `Environment`. Each episode is one session: `reset` connects (for stdio,
 * starts the server process) and lists the tools, `close` ends it (and stops the process). Every
 * failure of a call — the tool's own (`isError`), a JSON-RPC error, a timeout, a malformed answer,
 * an exited server — is a typed tool error (`McpToolErrorCode`), so a rollout goes on or ends by
 * its limits and never hangs. The server's own state is out of reach: `state()` is the episode's
 * call log.
 */
export class McpEnvironment implements Environment {
  readonly server: McpServerSpec;
  readonly #options: McpEnvironmentOptions;
  readonly #callTimeoutMs: number;
  readonly #connectTimeoutMs: number;
  #session: McpSession | undefined;
  #tools: ToolSpec[] = [];
  #allowed = new Set<string>();
  #calls: CallRecord[] = [];

  constructor(options: McpEnvironmentOptions) {
    this.server = McpServerSpec.parse(options.server);
    checkReach(this.server, options.allowRemote ?? false);
    this.#options = options;
    this.#callTimeoutMs = options.callTimeoutMs ?? 30_000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  }

  /** The running stdio server's process id (null over HTTP or between episodes). */
  get pid(): number | null {
    return this.#session?.pid ?? null;
  }

  async reset(task: Task): Promise<void> {
    await this.close();
    this.#calls = [];
    const session = await openSession(this.server, {
      timeoutMs: this.#connectTimeoutMs,
      allowRemote: this.#options.allowRemote ?? false,
      ...(this.#options.clientName === undefined ? {} : { clientName: this.#options.clientName }),
      ...(this.#options.resolve === undefined ? {} : { resolve: this.#options.resolve }),
      ...(this.#options.listLimits === undefined ? {} : { listLimits: this.#options.listLimits }),
    });
    this.#session = session;
    let listed: ToolSpec[];
    try {
      listed = (await session.listTools()).map(toolSpecOf);
    } catch (error) {
      await this.close();
      throw error;
    }
    const names = this.#options.allow?.(task) ?? (task.tools.length > 0 ? task.tools.map((t) => t.function.name) : undefined);
    const allowed = new Set(names ?? listed.map((t) => t.function.name));
    this.#tools = listed.filter((t) => allowed.has(t.function.name));
    this.#allowed = new Set(this.#tools.map((t) => t.function.name));
  }

  tools(): readonly ToolSpec[] {
    return this.#tools;
  }

  async call(call: ToolCall): Promise<ToolResult> {
    const session = this.#session;
    if (session === undefined)
      throw new McpEpisodeError(`McpEnvironment (${describeServer(this.server)}): call of ${call.name} outside an episode (reset first)`);
    const result = await this.#answer(session, call);
    this.#calls.push({ name: call.name, arguments: call.arguments, status: result.status, ...(result.status === "error" ? { code: result.error.code } : {}) });
    return result;
  }

  async #answer(session: McpSession, call: ToolCall): Promise<ToolResult> {
    if (!this.#allowed.has(call.name)) {
      return {
        status: "error",
        callId: call.id,
        name: call.name,
        error: { code: McpToolErrorCode.notAvailable, message: `tool ${call.name} is not available` },
      };
    }
    const exited = session.exited();
    if (exited !== undefined) return errorResultOf(call, undefined, { timeoutMs: this.#callTimeoutMs, exited });
    try {
      const answer = await session.client.callTool({ name: call.name, arguments: call.arguments }, undefined, { timeout: this.#callTimeoutMs });
      return resultOf(call, answer as Parameters<typeof resultOf>[1]);
    } catch (error) {
      return errorResultOf(call, error, { timeoutMs: this.#callTimeoutMs, exited: session.exited() });
    }
  }

  state(): Promise<JsonValue> {
    return Promise.resolve({ server: describeServer(this.server), calls: this.#calls.map((c) => ({ ...c })) });
  }

  async close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    await session?.close();
  }
}
