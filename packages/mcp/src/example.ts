import { fileURLToPath } from "node:url";
import { McpEnvironment } from "@envace/mcp";

// Any MCP server: here this package's test server, started over stdio with this Node.
const server = {
  transport: "stdio" as const,
  command: process.execPath,
  args: ["--import", "tsx", fileURLToPath(new URL("testing/server.ts", import.meta.url))],
};
const environment = new McpEnvironment({ server, callTimeoutMs: 500 });

// An episode is one server session: reset starts the server and lists its tools, close stops it.
await environment.reset({ id: "demo", messages: [{ role: "user", content: "Add 2 and 3." }], tools: [], metadata: {} });
console.log(
  environment
    .tools()
    .map((tool) => tool.function.name)
    .join(" "),
);
console.log(JSON.stringify(await environment.call({ id: "c1", name: "add", arguments: { a: 2, b: 3 } })));
// Failures are typed tool results, never exceptions or hangs.
console.log(JSON.stringify(await environment.call({ id: "c2", name: "fail", arguments: {} })));
console.log(JSON.stringify(await environment.call({ id: "c3", name: "hang", arguments: {} })));
await environment.close();
