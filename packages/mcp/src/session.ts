import { InputError, type ToolSpec } from "@envace/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { toolSpecOf } from "./results.js";
import { describeServer, type McpServerSpec } from "./server-spec.js";

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
}

/** One connection to an MCP server: for stdio, one server process. */
export interface McpSession {
  readonly client: Client;
  /** The child process of a stdio server; null over HTTP or once it has exited. */
  readonly pid: number | null;
  /** Why the server went away without being closed (exit, dropped connection), once it has. */
  exited(): string | undefined;
  /** Every tool the server lists, in its order. */
  listTools(): Promise<Tool[]>;
  /** Ends the connection; a stdio server's process is stopped (stdin closed, then SIGTERM, then SIGKILL). Idempotent. */
  close(): Promise<void>;
}

// What is kept of a stdio server's stderr, to say why it exited.
const STDERR_TAIL = 2000;

export async function openSession(spec: McpServerSpec, options: SessionOptions): Promise<McpSession> {
  const name = describeServer(spec);
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
    transport = new StreamableHTTPClientTransport(new URL(spec.url), spec.headers === undefined ? {} : { requestInit: { headers: spec.headers } });
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
  };

  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    await close();
    const said = stderr.trim().split("\n").at(-1);
    throw new McpConnectError(`MCP server ${name}: ${(error as Error).message}${said ? ` (stderr: ${said})` : ""}`);
  }

  return {
    client,
    get pid() {
      return transport instanceof StdioClientTransport ? transport.pid : null;
    },
    exited: () => exitNote,
    async listTools() {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: options.timeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
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

/** The tool specs of a server, for tasks (their `tools`, which private rehearsal sees); connects and disconnects. */
export async function listMcpTools(spec: McpServerSpec, options: SessionOptions = { timeoutMs: 30_000 }): Promise<ToolSpec[]> {
  const session = await openSession(spec, options);
  try {
    return (await session.listTools()).map(toolSpecOf);
  } catch (error) {
    throw new McpConnectError(`MCP server ${describeServer(spec)}: listing tools failed: ${(error as Error).message}`);
  } finally {
    await session.close();
  }
}
