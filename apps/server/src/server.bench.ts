/**
 * What the server adds to a request. Three processes, as in a deployment: the scripted upstream
 * (answers at once), the server in front of it (this process), and the load (64 conversations,
 * each a run of turns carrying the history so far). Two loads, each sent to the upstream directly
 * and then through the server:
 *
 * - paced: every conversation waits a fixed think time between its turns, so requests arrive at
 *   a steady rate well under what the machine can serve. The difference of the percentiles is
 *   the latency the server adds (at saturation it would be queueing, not the server).
 * - saturating: no think time, every conversation sends its next turn as soon as the last is
 *   answered: requests per second through the server against the upstream alone.
 *
 * The runs stop after a fixed number of requests and fail on any error.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { policyFromSpec } from "@envace/models";
import { reply, startScriptedServer } from "@envace/scripted-server";
import { startServer } from "./serve.js";

const CONVERSATIONS = 64;
const MODEL = "scripted-model";
/** Think time of the paced load: 64 conversations at about 80 requests per second. */
const THINK_MS = 800;

interface Load {
  turns: number;
  thinkMs: number;
}

interface LoadResult {
  requests: number;
  errors: number;
  /** Requests sent again after a reused socket was closed under them. */
  resent: number;
  seconds: number;
  latenciesMs: number[];
}

const tool = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { item: { type: "string" } } } } };

/** Every conversation sends its turns one after another, each with the history so far. */
async function load(baseURL: string, { turns, thinkMs }: Load): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let resent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONVERSATIONS }, async (_, c) => {
      // Spread the paced conversations over one think time, so they do not arrive in step.
      if (thinkMs > 0) await sleep((c / CONVERSATIONS) * thinkMs);
      const messages: unknown[] = [{ role: "user", content: `Conversation ${c}: find the rabo.` }];
      for (let turn = 0; turn < turns; turn += 1) {
        if (turn > 0 && thinkMs > 0) await sleep(thinkMs);
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

/** A child process of this file in `mode`; resolves with what it prints on stdout. */
function child(args: string[]): { process: ChildProcess; output: Promise<string> } {
  const spawned = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  spawned.stdout.on("data", (data: Buffer) => (out += data.toString()));
  const output = once(spawned, "exit").then(([code]) => {
    if (code !== 0) throw new Error(`${args[0]} process exited with ${String(code)}`);
    return out;
  });
  return { process: spawned, output };
}

async function loadFromChild(baseURL: string, spec: Load): Promise<LoadResult> {
  return JSON.parse(await child(["--load", baseURL, JSON.stringify(spec)]).output) as LoadResult;
}

/** The scripted upstream in its own process; resolves with its base URL once it listens. */
async function startUpstream(): Promise<{ baseURL: string; stop: () => Promise<void> }> {
  const upstream = child(["--upstream"]);
  const [line] = (await once(upstream.process.stdout!, "data")) as [Buffer];
  const baseURL = line.toString().trim();
  return {
    baseURL,
    stop: async () => {
      upstream.process.kill("SIGTERM");
      await upstream.output.catch(() => undefined);
    },
  };
}

async function serveUpstream(): Promise<void> {
  const upstream = await startScriptedServer({
    script: (request) => {
      const turns = (request.body as { messages: unknown[] }).messages.length;
      return reply.text(turns % 4 === 1 ? '<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>' : "It is on shelf 4.");
    },
    dialect: "openai",
  });
  process.stdout.write(`${upstream.baseURL}\n`);
  process.once("SIGTERM", () => void upstream.close().then(() => process.exit(0)));
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const upstream = await startUpstream();
  const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},concurrency=${CONVERSATIONS}`);
  const server = await startServer({ policy: resolved.policy, model: MODEL, config: { port: 0, log_level: "silent", concurrency: { requests: CONVERSATIONS, queue: CONVERSATIONS } }, tokens: [] });
  const paced: Load = { turns: 16, thinkMs: THINK_MS };
  const saturating: Load = { turns: 10, thinkMs: 0 };
  try {
    // One short run through the server first: detection of the upstream, JIT warm-up.
    await loadFromChild(`${server.url}/v1`, saturating);
    const runs = {
      pacedDirect: await loadFromChild(upstream.baseURL, paced),
      pacedThrough: await loadFromChild(`${server.url}/v1`, paced),
      saturatingDirect: await loadFromChild(upstream.baseURL, saturating),
      saturatingThrough: await loadFromChild(`${server.url}/v1`, saturating),
    };
    const rate = (r: LoadResult) => r.requests / r.seconds;
    const row = (name: string, r: LoadResult) =>
      `${name.padEnd(34)} ${String(r.requests).padStart(6)} ${String(r.errors).padStart(6)} ${percentile(r.latenciesMs, 50).toFixed(2).padStart(9)} ${percentile(r.latenciesMs, 99).toFixed(2).padStart(9)} ${rate(r).toFixed(0).padStart(8)} ${String(r.resent).padStart(6)}`;
    console.log(`server bench: ${CONVERSATIONS} conversations from a second process, the upstream in a third; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`);
    console.log(`${"load / target".padEnd(34)} ${"reqs".padStart(6)} ${"errors".padStart(6)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)} ${"req/s".padStart(8)} ${"resent".padStart(6)}`);
    console.log(row(`paced (${THINK_MS} ms think), directly`, runs.pacedDirect));
    console.log(row(`paced (${THINK_MS} ms think), server`, runs.pacedThrough));
    console.log(row("saturating, directly", runs.saturatingDirect));
    console.log(row("saturating, server", runs.saturatingThrough));
    const added = (p: number) => percentile(runs.pacedThrough.latenciesMs, p) - percentile(runs.pacedDirect.latenciesMs, p);
    console.log(`added latency (paced): p50 ${added(50).toFixed(2)} ms, p99 ${added(99).toFixed(2)} ms (goal p99 ≤ 5 ms)`);
    console.log(`throughput (saturating): ${rate(runs.saturatingThrough).toFixed(0)} req/s through the server, ${((rate(runs.saturatingThrough) / rate(runs.saturatingDirect)) * 100).toFixed(0)}% of the upstream alone`);
    const errors = Object.values(runs).reduce((sum, r) => sum + r.errors, 0);
    if (errors > 0) throw new Error(`${errors} requests failed`);
  } finally {
    await server.close();
    await upstream.stop();
  }
}

const mode = process.argv[2];
if (mode === "--load") {
  const result = await load(process.argv[3]!, JSON.parse(process.argv[4]!) as Load);
  process.stdout.write(JSON.stringify(result));
} else if (mode === "--upstream") {
  await serveUpstream();
} else {
  await main();
}
