// `pnpm bench`: what one tool call costs over MCP on stdio, next to the same answer from an
// in-process environment and from an MCP client and server joined in memory (the protocol's own
// cost without the process boundary), measured in the same run.
import type { Environment, Task, ToolCall, ToolResult } from "@envace/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpEnvironment } from "./environment.js";
import { stdioServer } from "./testing/spawn.js";
import { createTestServer } from "./testing/tools.js";

const calls = 2000;
const warmup = 200;
const task: Task = { id: "bench", messages: [{ role: "user", content: "echo" }], tools: [], metadata: {} };
const echo = (i: number): ToolCall => ({ id: `c${i}`, name: "echo", arguments: { text: `message ${i}` } });

/** Mean microseconds per call of `run`, after a warm-up. */
async function perCall(run: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < warmup; i += 1) await run(i);
  const start = performance.now();
  for (let i = 0; i < calls; i += 1) await run(i);
  return ((performance.now() - start) * 1000) / calls;
}

const direct: Environment = {
  reset: () => Promise.resolve(),
  tools: () => [],
  call: (call): Promise<ToolResult> => Promise.resolve({ status: "ok", callId: call.id, name: call.name, content: call.arguments.text as string }),
  state: () => Promise.resolve(null),
};
const directUs = await perCall((i) => direct.call(echo(i)));

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await createTestServer().connect(serverSide);
const client = new Client({ name: "bench", version: "0" });
await client.connect(clientSide);
const memoryUs = await perCall((i) => client.callTool({ name: "echo", arguments: { text: `message ${i}` } }));
await client.close();

const stdio = new McpEnvironment({ server: stdioServer() });
let start = performance.now();
await stdio.reset(task);
const startMs = performance.now() - start;
const stdioUs = await perCall((i) => stdio.call(echo(i)));
start = performance.now();
await stdio.close();
const closeMs = performance.now() - start;

const us = (value: number): string => `${value.toFixed(1).padStart(8)} µs`;
console.log(`MCP round trip per tool call (${calls} sequential echo calls after ${warmup} warm-up)`);
console.log(`  in-process environment           ${us(directUs)}`);
console.log(`  MCP client and server in memory  ${us(memoryUs)}`);
console.log(`  MCP over stdio (McpEnvironment)  ${us(stdioUs)}   overhead vs in-process ${us(stdioUs - directUs)}`);
console.log(`  server start + handshake + tools/list ${startMs.toFixed(0)} ms; close ${closeMs.toFixed(0)} ms (Node + tsx test server)`);
