/**
 * What the server adds to a request: 64 conversations at once, each a run of turns, sent from a
 * second process to the scripted upstream directly and then through the server in front of it
 * (no rehearsal; the upstream answers at once). Reports latency percentiles, the difference
 * (the server's added latency) and requests per second; the run stops after a fixed number of
 * requests and fails on any error.
 */
import { spawn } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { policyFromSpec } from "@envace/models";
import { reply, startScriptedServer } from "@envace/scripted-server";
import { startServer } from "./serve.js";

const CONVERSATIONS = 64;
const TURNS = 10;
const MODEL = "scripted-model";

interface LoadResult {
  requests: number;
  errors: number;
  /** Requests sent again after a reused socket was closed under them. */
  resent: number;
  seconds: number;
  latenciesMs: number[];
}

const tool = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { item: { type: "string" } } } } };

/** The load: every conversation sends its turns one after another, each turn with the history so far. */
async function load(baseURL: string, conversations: number, turns: number): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let resent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: conversations }, async (_, c) => {
      const messages: unknown[] = [{ role: "user", content: `Conversation ${c}: find the rabo.` }];
      for (let turn = 0; turn < turns; turn += 1) {
        const t0 = performance.now();
        const send = () =>
          fetch(`${baseURL}/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer unused" },
            body: JSON.stringify({ model: MODEL, messages, tools: [tool], temperature: 0.6, max_tokens: 64, seed: turn }),
          });
        // A keep-alive socket the server closed just as it was reused fails before any answer;
        // a client sends again then (on an overloaded machine this race is not rare).
        const response = await send().catch((error: unknown) => {
          if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error;
          resent += 1;
          return send();
        });
        const body = (await response.json()) as { choices?: { message: unknown }[] };
        latenciesMs.push(performance.now() - t0);
        if (!response.ok || body.choices?.length !== 1) {
          errors += 1;
          continue;
        }
        messages.push(body.choices[0]!.message, { role: "user", content: "And then?" });
      }
    }),
  );
  return { requests: latenciesMs.length, errors, resent, seconds: (performance.now() - started) / 1000, latenciesMs };
}

/** The load from a second process, so the server's own event loop is not the client's. */
function loadFromChild(baseURL: string): Promise<LoadResult> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--load", baseURL], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (data: Buffer) => (out += data.toString()));
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out) as LoadResult);
      else reject(new Error(`the load process exited with ${code}`));
    });
  });
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const upstream = await startScriptedServer({
    script: (request) => {
      const turns = (request.body as { messages: unknown[] }).messages.length;
      return reply.text(turns % 4 === 1 ? '<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>' : "It is on shelf 4.");
    },
    dialect: "openai",
  });
  const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},concurrency=${CONVERSATIONS}`);
  const server = await startServer({ policy: resolved.policy, model: MODEL, config: { port: 0, log_level: "silent", concurrency: { requests: CONVERSATIONS, queue: CONVERSATIONS } }, tokens: [] });
  try {
    // One short run through the server first: detection of the upstream, JIT warm-up.
    await loadFromChild(`${server.url}/v1`);
    const direct = await loadFromChild(upstream.baseURL);
    const through = await loadFromChild(`${server.url}/v1`);
    const row = (name: string, r: LoadResult) =>
      `${name.padEnd(24)} ${String(r.requests).padStart(6)} ${String(r.errors).padStart(6)} ${percentile(r.latenciesMs, 50).toFixed(2).padStart(9)} ${percentile(r.latenciesMs, 99).toFixed(2).padStart(9)} ${(r.requests / r.seconds).toFixed(0).padStart(8)} ${String(r.resent).padStart(6)}`;
    console.log(`server bench: ${CONVERSATIONS} conversations × ${TURNS} turns from a second process; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`);
    console.log(`${"target".padEnd(24)} ${"reqs".padStart(6)} ${"errors".padStart(6)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)} ${"req/s".padStart(8)} ${"resent".padStart(6)}`);
    console.log(row("upstream directly", direct));
    console.log(row("through the server", through));
    const added50 = percentile(through.latenciesMs, 50) - percentile(direct.latenciesMs, 50);
    const added99 = percentile(through.latenciesMs, 99) - percentile(direct.latenciesMs, 99);
    console.log(`added latency: p50 ${added50.toFixed(2)} ms, p99 ${added99.toFixed(2)} ms (goal p99 ≤ 5 ms); throughput ${((through.requests / through.seconds / (direct.requests / direct.seconds)) * 100).toFixed(0)}% of direct`);
    if (direct.errors + through.errors > 0) throw new Error(`${direct.errors + through.errors} requests failed`);
  } finally {
    await server.close();
    await upstream.close();
  }
}

const at = process.argv.indexOf("--load");
if (at >= 0) {
  const result = await load(process.argv[at + 1]!, CONVERSATIONS, TURNS);
  process.stdout.write(JSON.stringify(result));
} else {
  await main();
}
