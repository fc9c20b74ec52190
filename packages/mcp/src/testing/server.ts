// The test server over stdio. MCP_TEST_LOG: the request log file. MCP_TEST_STUBBORN=1: ignore the
// end of stdin (a server that must be stopped by a signal).
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createTestServer } from "./tools.js";

const log = process.env.MCP_TEST_LOG;
const test = createTestServer(log === undefined ? {} : { log });
await test.connect(new StdioServerTransport());
if (process.env.MCP_TEST_STUBBORN !== "1") process.stdin.on("end", () => process.exit(0));
