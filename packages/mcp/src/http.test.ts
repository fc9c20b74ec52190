import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Task } from "@envace/protocol";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpEnvironment } from "./environment.js";
import { RemoteServerRefused } from "./server-spec.js";
import { createTestServer } from "./testing/tools.js";

const task: Task = { id: "t", messages: [{ role: "user", content: "go" }], tools: [], metadata: {} };

describe("McpEnvironment over streamable HTTP on loopback", () => {
  let http: Server;
  let url: string;
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  beforeAll(async () => {
    // One transport (and one test server) per MCP session, as a real streamable-HTTP server keeps them.
    http = createServer((req, res) => {
      const id = req.headers["mcp-session-id"];
      const known = typeof id === "string" ? sessions.get(id) : undefined;
      if (known !== undefined) {
        void known.handleRequest(req, res);
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      void createTestServer()
        .connect(transport)
        .then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it("lists tools, calls them, types a timeout, and ends its session at close", async () => {
    const env = new McpEnvironment({ server: { transport: "http", url }, callTimeoutMs: 300 });
    await env.reset(task);
    expect(env.tools().map((t) => t.function.name)).toContain("add");
    expect(sessions.size).toBe(1);
    expect(await env.call({ id: "c1", name: "add", arguments: { a: 1.5, b: 2 } })).toEqual({ status: "ok", callId: "c1", name: "add", content: { sum: 3.5 } });
    expect(await env.call({ id: "c2", name: "fail", arguments: {} })).toMatchObject({ status: "error", error: { code: "MCP_TOOL_ERROR", message: "card declined" } });
    expect(await env.call({ id: "c3", name: "hang", arguments: {} })).toMatchObject({ status: "error", error: { code: "MCP_TIMEOUT" } });
    await env.close();
    expect(sessions.size).toBe(0);
  });

  it("refuses a server off this machine unless allowed explicitly", () => {
    const remote = { transport: "http" as const, url: "https://tools.example.com/mcp" };
    expect(() => new McpEnvironment({ server: remote })).toThrow(RemoteServerRefused);
    expect(() => new McpEnvironment({ server: remote })).toThrow(
      "MCP server https://tools.example.com/mcp is neither a local process (stdio) nor on loopback: allow remote MCP servers explicitly (allowRemote, --allow-remote-mcp) to use it",
    );
    expect(new McpEnvironment({ server: remote, allowRemote: true }).server).toEqual(remote);
    expect(new McpEnvironment({ server: { transport: "http", url: "http://localhost:8931/mcp" } }).server.transport).toBe("http");
  });
});
