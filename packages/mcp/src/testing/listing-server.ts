// An MCP server over stdio whose tool listing misbehaves, chosen by MCP_TEST_LISTING:
// `endless` answers every page with two new tools and a next cursor, forever;
// `duplicate` lists one name twice; `control` lists a name with a control character.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const mode = process.env.MCP_TEST_LISTING ?? "endless";
// The low-level server: the high-level one cannot answer a listing of its own making.
// eslint-disable-next-line @typescript-eslint/no-deprecated
const server = new Server({ name: "envace-listing-test", version: "1.0.0" }, { capabilities: { tools: {} } });
const tool = (name: string) => ({ name, description: "A tool of a listing that never ends.", inputSchema: { type: "object" as const, properties: {} } });

server.setRequestHandler(ListToolsRequestSchema, (request) => {
  if (mode === "duplicate") return { tools: [tool("echo"), tool("add"), tool("echo")] };
  if (mode === "control") return { tools: [tool("echo"), tool("bad\u0007name")] };
  const page = Number(request.params?.cursor ?? "0");
  return { tools: [tool(`tool_${page}_a`), tool(`tool_${page}_b`)], nextCursor: String(page + 1) };
});
await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
