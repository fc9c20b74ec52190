// A small MCP server for tests: one tool per behaviour the environment must handle.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface TestServer {
  server: McpServer;
  /** Connects the server to `transport`, logging requests and corrupting `malformed`'s answers on the way. */
  connect(transport: Transport): Promise<void>;
}

/** `log`: a file that gets one line per request the server receives (`initialize`, `tools/list`, `tools/call <name>`). */
export function createTestServer(options: { log?: string } = {}): TestServer {
  const server = new McpServer({ name: "envace-test", version: "1.0.0" });
  const corrupt = new Set<string | number>();
  const refuse = new Set<string | number>();

  server.registerTool("echo", { description: "Repeat a text.", inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool(
    "add",
    { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool("fail", { description: "Always fails." }, () => ({ content: [{ type: "text", text: "card declined" }], isError: true }));
  server.registerTool("hang", { description: "Never answers." }, () => new Promise(() => setInterval(() => undefined, 1000)));
  server.registerTool("crash", { description: "Kills the server." }, () => {
    process.stderr.write("fatal: disk on fire\n");
    process.exit(3);
  });
  server.registerTool("malformed", { description: "Answers with something that is not a tool result." }, (extra) => {
    corrupt.add(extra.requestId);
    return { content: [{ type: "text", text: "fine" }] };
  });
  server.registerTool("refuse", { description: "Answered with a JSON-RPC error." }, (extra) => {
    refuse.add(extra.requestId);
    return { content: [] };
  });
  server.registerTool("whoami", { description: "The server's process id." }, () => ({ content: [{ type: "text", text: String(process.pid) }] }));

  return {
    server,
    async connect(transport) {
      await server.connect(transport);
      const receive = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (options.log !== undefined && "method" in message) {
          const params = (message as { params?: { name?: string } }).params;
          appendFileSync(options.log, `${message.method}${message.method === "tools/call" ? ` ${params?.name}` : ""}\n`);
        }
        receive?.(message, extra);
      };
      const send = transport.send.bind(transport);
      transport.send = (message: JSONRPCMessage, sendOptions) => {
        if ("id" in message && "result" in message && corrupt.has(message.id))
          return send({ ...message, result: { content: "not a list of blocks" } }, sendOptions);
        if ("id" in message && "result" in message && refuse.has(message.id)) {
          return send({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "internal failure" } }, sendOptions);
        }
        return send(message, sendOptions);
      };
    },
  };
}
