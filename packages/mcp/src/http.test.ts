import { randomUUID } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Task } from "@envace/protocol";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpEnvironment } from "./environment.js";
import type { ResolvedAddress, Resolver } from "./reach.js";
import { RemoteServerRefused } from "./server-spec.js";
import { listMcpTools } from "./session.js";
import { createTestServer } from "./testing/tools.js";

const task: Task = { id: "t", messages: [{ role: "user", content: "go" }], tools: [], metadata: {} };

describe("McpEnvironment over streamable HTTP on loopback", () => {
  let http: Server;
  let handler: RequestListener;
  let url: string;
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  beforeAll(async () => {
    // One transport (and one test server) per MCP session, as a real streamable-HTTP server keeps them.
    handler = (req, res) => {
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
    };
    http = createServer(handler);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  /** The same MCP server on another loopback address; closed by the returned function. */
  async function alsoOn(host: string): Promise<{ port: number; close: () => Promise<void> }> {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  // Names resolve through this table, never through DNS; no test sends anything off loopback.
  const table: Record<string, ResolvedAddress[]> = {
    "tools.example.test": [{ address: "203.0.113.7", family: 4 }],
    "evil.localhost": [{ address: "203.0.113.7", family: 4 }],
    "mixed.example.test": [
      { address: "127.0.0.1", family: 4 },
      { address: "203.0.113.7", family: 4 },
    ],
    "loop2.example.test": [{ address: "127.0.0.2", family: 4 }],
    "loop6.example.test": [{ address: "::1", family: 6 }],
  };
  const resolve: Resolver = (hostname) => Promise.resolve(table[hostname] ?? []);

  it("refuses, at connect time, a name that resolves off loopback, whatever it is called", async () => {
    const port = (http.address() as AddressInfo).port;
    for (const host of ["tools.example.test", "evil.localhost", "mixed.example.test"]) {
      const server = { transport: "http" as const, url: `http://${host}:${port}/mcp` };
      // The constructor cannot know before resolution; the connection refuses.
      const env = new McpEnvironment({ server, resolve });
      await expect(env.reset(task)).rejects.toThrow(RemoteServerRefused);
      await expect(listMcpTools(server, { timeoutMs: 5000, resolve })).rejects.toThrow(
        `MCP server http://${host}:${port}/mcp (${host} resolves to 203.0.113.7) is neither a local process (stdio) nor on loopback`,
      );
    }
    expect(sessions.size).toBe(0);
  });

  it("refuses a name that cannot be resolved as unproven loopback, naming the resolver's answer", async () => {
    const unresolvable: Resolver = () => Promise.reject(Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.example.test"), { code: "ENOTFOUND" }));
    const server = { transport: "http" as const, url: "http://nowhere.example.test:65000/mcp" };
    await expect(listMcpTools(server, { timeoutMs: 5000, resolve: unresolvable })).rejects.toThrow(
      "MCP server http://nowhere.example.test:65000/mcp: nowhere.example.test cannot be resolved (ENOTFOUND), so it cannot be shown to be on loopback",
    );
    await expect(listMcpTools(server, { timeoutMs: 5000, resolve: unresolvable })).rejects.toThrow(RemoteServerRefused);
  });

  it("accepts names that resolve to 127.0.0.2 and ::1, and connects to those addresses", async () => {
    for (const [host, address] of [
      ["loop2.example.test", "127.0.0.2"],
      ["loop6.example.test", "::1"],
    ] as const) {
      const other = await alsoOn(address);
      try {
        const tools = await listMcpTools({ transport: "http", url: `http://${host}:${other.port}/mcp` }, { timeoutMs: 5000, resolve });
        expect(tools.map((t) => t.function.name)).toContain("add");
      } finally {
        await other.close();
      }
    }
    // Written as addresses, the same servers need no resolution.
    const other = await alsoOn("::1");
    try {
      expect((await listMcpTools({ transport: "http", url: `http://[::1]:${other.port}/mcp` }, { timeoutMs: 5000 })).length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it("lists tools, calls them, types a timeout, and ends its session at close", async () => {
    const env = new McpEnvironment({ server: { transport: "http", url }, callTimeoutMs: 300 });
    await env.reset(task);
    expect(env.tools().map((t) => t.function.name)).toContain("add");
    expect(sessions.size).toBe(1);
    expect(await env.call({ id: "c1", name: "add", arguments: { a: 1.5, b: 2 } })).toEqual({ status: "ok", callId: "c1", name: "add", content: { sum: 3.5 } });
    expect(await env.call({ id: "c2", name: "fail", arguments: {} })).toMatchObject({
      status: "error",
      error: { code: "MCP_TOOL_ERROR", message: "card declined" },
    });
    expect(await env.call({ id: "c3", name: "hang", arguments: {} })).toMatchObject({ status: "error", error: { code: "MCP_TIMEOUT" } });
    await env.close();
    expect(sessions.size).toBe(0);
  });

  it("refuses an address off this machine at once, in the environment and in listMcpTools, unless allowed explicitly", async () => {
    const remote = { transport: "http" as const, url: "https://203.0.113.7/mcp" };
    expect(() => new McpEnvironment({ server: remote })).toThrow(RemoteServerRefused);
    expect(() => new McpEnvironment({ server: remote })).toThrow(
      "MCP server https://203.0.113.7/mcp is neither a local process (stdio) nor on loopback: allow remote MCP servers explicitly (allowRemote, --allow-remote-mcp) to use it",
    );
    await expect(listMcpTools(remote)).rejects.toThrow(RemoteServerRefused);
    expect(new McpEnvironment({ server: remote, allowRemote: true }).server).toEqual(remote);
    expect(new McpEnvironment({ server: { transport: "http", url: "http://localhost:8931/mcp" } }).server.transport).toBe("http");
  });
});
