import { InputError, type ToolSpec } from "@envace/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_LIST_LIMITS, listWithin, McpListLimitError, McpToolNameError, type ListLimits } from "./listing.js";
import { reachFetch, type ReachFetch, type Resolver } from "./reach.js";
import { toolSpecOf } from "./results.js";
import { checkReach, describeServer, RemoteServerRefused, type McpServerSpec } from "./server-spec.js";

/** The server could not be started or reached, or did not complete the MCP handshake. */
export class McpConnectError extends InputError {
  override readonly code: string = "mcp-connect";
  override readonly name = "McpConnectError";
}

export interface SessionOptions {
  /** Connecting, the handshake and each page of the tool listing. */
  timeoutMs: number;
  /** The client name the server sees. */
  clientName?: string;
  /** Allow an HTTP server off loopback. Default false: every address a connection would use must be 127.0.0.0/8 or ::1. */
  allowRemote?: boolean;
  /** How host names are resolved (default: the system resolver); each answer is checked, then used. */
  resolve?: Resolver;
  /** Bounds on the tool listing; each one left out has its default (`DEFAULT_LIST_LIMITS`). */
  listLimits?: Partial<ListLimits>;
}

/** One connection to an MCP server: for stdio, one server process. */
export interface McpSession {
  readonly client: Client;
  /** The child process of a stdio server; null over HTTP or once it has exited. */
  readonly pid: number | null;
  /** Why the server went away without being closed (exit, dropped connection), once it has. */
  exited(): string | undefined;
  /**
   * Every tool the server lists, in its order, within the listing limits (`McpListLimitError`
   * names the one passed); a duplicate or invalid tool name is an `McpToolNameError`.
   */
  listTools(limits?: Partial<ListLimits>): Promise<Tool[]>;
  /** Ends the connection; a stdio server's process is stopped (stdin closed, then SIGTERM, then SIGKILL). Idempotent. */
  close(): Promise<void>;
}

// What is kept of a stdio server's stderr, to say why it exited.
const STDERR_TAIL = 2000;

/**
 * Connects to the server. Over HTTP the reach rule is enforced on the connection itself: without
 * `allowRemote` a URL naming an address off loopback is refused at once, and a host name is
 * resolved once, every address checked, and the connection made to those addresses
 * (`RemoteServerRefused` otherwise).
 */
export async function openSession(spec: McpServerSpec, options: SessionOptions): Promise<McpSession> {
  const name = describeServer(spec);
  checkReach(spec, options.allowRemote ?? false);
  let reach: ReachFetch | undefined;
  const client = new Client({ name: options.clientName ?? "envace", version: "0.1.0" });
  let stderr = "";
  let closing = false;
  let exitNote: string | undefined;
  let transport: StdioClientTransport | StreamableHTTPClientTransport;
  if (spec.transport === "stdio") {
    const stdio = new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      stderr: "pipe",
      ...(spec.env === undefined ? {} : { env: spec.env }),
      ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    });
    // Read stderr always: a full pipe would block the server.
    stdio.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    transport = stdio;
  } else {
    reach = reachFetch(spec.url, options.allowRemote ?? false, options.resolve);
    transport = new StreamableHTTPClientTransport(new URL(spec.url), {
      fetch: reach.fetch,
      ...(spec.headers === undefined ? {} : { requestInit: { headers: spec.headers } }),
    });
  }
  client.onclose = () => {
    if (closing) return;
    const said = stderr.trim().split("\n").at(-1);
    exitNote = `the MCP server (${name}) ${spec.transport === "stdio" ? "exited" : "closed the connection"}${said ? `: ${said}` : ""}`;
  };
  const close = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    if (transport instanceof StreamableHTTPClientTransport && exitNote === undefined) {
      // Ends the server's session too; a server without sessions answers 405, which is fine.
      await transport.terminateSession().catch(() => undefined);
    }
    const pid = transport instanceof StdioClientTransport ? transport.pid : null;
    await client.close().catch(() => undefined);
    // The SDK sends SIGKILL last without waiting for the exit: wait here, so the process is gone
    // (and reaped) when close resolves.
    if (pid !== null) await waitForExit(pid);
    await reach?.close().catch(() => undefined);
  };

  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    await close();
    const refused = reach?.refused();
    if (refused !== undefined) throw refused;
    const said = stderr.trim().split("\n").at(-1);
    throw new McpConnectError(`MCP server ${name}: ${(error as Error).message}${said ? ` (stderr: ${said})` : ""}`);
  }

  return {
    client,
    get pid() {
      return transport instanceof StdioClientTransport ? transport.pid : null;
    },
    exited: () => exitNote,
    async listTools(limits) {
      return listWithin(
        (cursor, left) => client.listTools(cursor === undefined ? {} : { cursor }, { timeout: Math.min(options.timeoutMs, left) }),
        { ...DEFAULT_LIST_LIMITS, ...options.listLimits, ...limits },
        name,
      );
    },
    close,
  };
}

/** Resolves once process `pid` no longer exists; kills it again if it outlives `graceMs`. */
async function waitForExit(pid: number, graceMs = 5000): Promise<void> {
  const exists = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + graceMs;
  let killed = false;
  while (exists() && Date.now() < deadline + graceMs) {
    if (!killed && Date.now() > deadline) {
      killed = true;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        return; // gone meanwhile
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The tool specs of a server, for tasks (their `tools`, which private rehearsal sees); connects
 * and disconnects, under the same reach rule and listing limits as `McpEnvironment`.
 */
export async function listMcpTools(spec: McpServerSpec, options: SessionOptions = { timeoutMs: 30_000 }): Promise<ToolSpec[]> {
  const session = await openSession(spec, options);
  try {
    return (await session.listTools()).map(toolSpecOf);
  } catch (error) {
    if (error instanceof McpListLimitError || error instanceof McpToolNameError || error instanceof RemoteServerRefused) throw error;
    throw new McpConnectError(`MCP server ${describeServer(spec)}: listing tools failed: ${(error as Error).message}`);
  } finally {
    await session.close();
  }
}
