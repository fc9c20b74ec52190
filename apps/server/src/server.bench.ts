/**
 * What the server adds to a request. Four processes, as in a deployment, each running compiled
 * code (this file bundled by esbuild, as `envace serve` runs from its bundle; no TypeScript
 * loader): the scripted upstream (answers at once), the server in front of it, and the load (64
 * conversations, each a run of turns carrying the history so far), started by this one. Two
 * loads, each sent to the upstream directly and then through the server:
 *
 * - paced: every conversation waits a fixed think time between its turns, so requests arrive at
 *   a steady rate well under what the machine can serve. The difference of the percentiles is
 *   the latency the server adds (at saturation it would be queueing, not the server).
 * - saturating: no think time, every conversation sends its next turn as soon as the last is
 *   answered: requests per second through the server against the upstream alone.
 *
 * The paced load also goes through a bare proxy: a Fastify route that forwards the body with
 * `@envace/http` and returns the upstream's answer, with no validation, policy or metrics. What it
 * adds is what one more Node.js hop costs on this machine, a floor for the server's figures.
 *
 * The runs stop after a fixed number of requests and fail on any error.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn, type ChildProcess } from "node:child_process";
import { subscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import type { ClientRequest, IncomingMessage } from "node:http";
import { cpus, loadavg } from "node:os";
import { performance, PerformanceObserver } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { HttpError, requestJson, send } from "@envace/http";
import { policyFromSpec } from "@envace/models";
import { reply, startScriptedServer } from "@envace/scripted-server";
import Fastify from "fastify";
import { startServer } from "./serve.js";

const CONVERSATIONS = 64;
const MODEL = "scripted-model";
/** Think time of the paced load: 64 conversations at about 80 requests per second. */
const THINK_MS = 800;
/**
 * Paced rounds, each directly and through the server (order alternating): one round's p99 moves by
 * several milliseconds with the machine's other work, so the added latency is the median of the rounds'.
 */
const ROUNDS = Number(process.env.ENVACE_SERVER_BENCH_ROUNDS ?? 5);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
  throw new Error(`ENVACE_SERVER_BENCH_ROUNDS: ${process.env.ENVACE_SERVER_BENCH_ROUNDS} is not a whole number of rounds ≥ 1`);

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
        const post = () =>
          send({
            url: `${baseURL}/chat/completions`,
            body: { model: MODEL, messages, tools: [tool], temperature: 0.6, max_tokens: 64, seed: turn },
            headers: { authorization: "Bearer unused" },
            timeoutMs: 60_000,
          });
        // A keep-alive socket the server closed just as it was reused fails before any answer;
        // a client sends again then (on an overloaded machine this race is not rare).
        const reply = await post().catch((error: unknown) => {
          if (!(error instanceof HttpError && (error.cause as { code?: string } | undefined)?.code === "ECONNRESET")) throw error;
          resent += 1;
          return post();
        });
        const body = reply.body as { choices?: { message: unknown }[] };
        latenciesMs.push(performance.now() - t0);
        if (reply.status !== 200 || body.choices?.length !== 1) {
          errors += 1;
          continue;
        }
        messages.push(body.choices[0]!.message, { role: "user", content: "And then?" });
      }
    }),
  );
  return { requests: latenciesMs.length, errors, resent, seconds: (performance.now() - started) / 1000, latenciesMs };
}

/** The compiled bench (this file and everything it imports), run by every child process. */
let bundle = "";

/** A child process of the bundle in `mode`; resolves with what it prints on stdout. */
function child(args: string[]): { process: ChildProcess; output: Promise<string> } {
  const spawned = spawn(process.execPath, [bundle, ...args], { stdio: ["ignore", "pipe", "inherit"] });
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

/** A long-lived child (the upstream, the server); resolves with the URL it prints once it listens. */
async function startChild(args: string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const started = child(args);
  const [line] = (await once(started.process.stdout!, "data")) as [Buffer];
  return {
    url: line.toString().trim(),
    stop: async () => {
      started.process.kill("SIGTERM");
      await started.output.catch(() => undefined);
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

/**
 * The server in front of `upstreamURL`, as `envace serve --policy openai:<url>#<model>` starts it,
 * plus what only the bench needs: each completion's own time (arrival to last byte, less the waits
 * for the upstream's answers), read and reset at `GET /bench/own-ms` with the process's CPU time
 * since the last read (less sensitive than latency to what else the machine runs).
 */
async function serveServer(upstreamURL: string): Promise<void> {
  // The request being answered, through every await of its handler: where its upstream waits add up.
  const current = new AsyncLocalStorage<{ upstreamMs: number }>();
  const waits = new WeakMap<object, { upstreamMs: number }>();
  // From sending a request to the upstream to the last byte of its answer (Node's own channel for
  // outgoing requests); the client's work around it is the server's.
  subscribe("http.client.request.start", (message) => {
    const record = current.getStore();
    if (!record) return;
    const started = performance.now();
    (message as { request: ClientRequest }).request.once("response", (response: IncomingMessage) =>
      response.once("end", () => (record.upstreamMs += performance.now() - started)),
    );
  });
  const { policy } = await policyFromSpec(`openai:${upstreamURL}#${MODEL},concurrency=${CONVERSATIONS}`);
  let ownMs: number[] = [];
  // Garbage-collection pauses stop every request in flight: their lengths, read with the rest.
  let gcMs: number[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs.push(entry.duration);
  }).observe({ entryTypes: ["gc"] });
  let cpuSince = process.cpuUsage();
  const server = await startServer({
    policy,
    model: MODEL,
    config: { port: 0, log_level: "silent", concurrency: { requests: CONVERSATIONS, queue: CONVERSATIONS } },
    tokens: [],
    prepare: ({ fastify }) => {
      fastify.addHook("onRequest", (request, _reply, done) => {
        const record = { upstreamMs: 0 };
        waits.set(request, record);
        current.run(record, done);
      });
      fastify.addHook("onResponse", async (request, reply) => {
        if (request.url === "/v1/chat/completions") ownMs.push(reply.elapsedTime - waits.get(request)!.upstreamMs);
      });
      fastify.get("/bench/own-ms", (_request, reply) => {
        const cpu = process.cpuUsage(cpuSince);
        const answer = { ownMs, gcMs, cpuMs: (cpu.user + cpu.system) / 1000 };
        ownMs = [];
        gcMs = [];
        cpuSince = process.cpuUsage();
        return reply.send(answer);
      });
    },
  });
  process.stdout.write(`${server.url}\n`);
  process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
}

/** The bare proxy in front of `upstreamURL`: Fastify, one route, the body forwarded as it came. */
async function serveProxy(upstreamURL: string): Promise<void> {
  const proxy = Fastify({ logger: false });
  proxy.post("/v1/chat/completions", async (request, answer) => {
    const upstream = await send({ url: `${upstreamURL}/chat/completions`, body: request.body, timeoutMs: 60_000 });
    return answer.code(upstream.status).send(upstream.body);
  });
  const url = await proxy.listen({ host: "127.0.0.1", port: 0 });
  process.stdout.write(`${url}\n`);
  process.once("SIGTERM", () => void proxy.close().then(() => process.exit(0)));
}

/** This file and what it imports as one ES module, in a folder of its own under the package's node_modules. */
async function buildBundle(): Promise<{ file: string; remove: () => void }> {
  // Under node_modules, so the packages left outside the bundle (native code, workers) resolve.
  const dir = mkdtempSync(join(import.meta.dirname, "..", "node_modules", ".server-bench-"));
  const file = join(dir, "bench.mjs");
  const outside = /^(onnxruntime-node|@tensorflow\/.*|pino|pino-pretty)$/;
  await build({
    entryPoints: [fileURLToPath(import.meta.url)],
    outfile: file,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["@envace/source"],
    banner: { js: 'import { createRequire as __benchRequire } from "node:module"; const require = __benchRequire(import.meta.url);' },
    logLevel: "error",
    plugins: [
      {
        // Left outside, at the path their importer resolves them to (pnpm does not hoist them here).
        name: "outside",
        setup(b) {
          b.onResolve({ filter: outside }, (args) => ({ path: createRequire(join(args.resolveDir, "_")).resolve(args.path), external: true }));
        },
      },
    ],
  });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const built = await buildBundle();
  bundle = built.file;
  const upstream = await startChild(["--upstream"]);
  const children = [upstream];
  const stopAll = () => Promise.all(children.map((c) => c.stop()));
  try {
    const server = await startChild(["--server", upstream.url]);
    children.push(server);
    const proxy = await startChild(["--proxy", upstream.url]);
    children.push(proxy);
    await measure(upstream.url, server.url, proxy.url);
  } finally {
    await stopAll();
    built.remove();
  }
}

type Target = "directly" | "server" | "bare proxy";

async function measure(upstreamURL: string, serverURL: string, proxyURL: string): Promise<void> {
  const paced: Load = { turns: 16, thinkMs: THINK_MS };
  const saturating: Load = { turns: 10, thinkMs: 0 };
  const targets: Record<Target, string> = { directly: upstreamURL, server: `${serverURL}/v1`, "bare proxy": `${proxyURL}/v1` };
  // One short run through each hop first: detection of the upstream, JIT warm-up.
  await loadFromChild(targets.server, saturating);
  await loadFromChild(targets["bare proxy"], saturating);
  const ownMs = async () => (await requestJson({ url: `${serverURL}/bench/own-ms`, timeoutMs: 10_000 })) as { ownMs: number[]; gcMs: number[]; cpuMs: number };
  await ownMs();
  // The rounds rotate the order of the three, so that no target always runs first or last.
  const order: Target[] = ["directly", "server", "bare proxy"];
  const rounds: Record<Target, LoadResult>[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const result: Partial<Record<Target, LoadResult>> = {};
    for (let i = 0; i < order.length; i += 1) {
      const target = order[(round + i) % order.length]!;
      result[target] = await loadFromChild(targets[target], paced);
    }
    rounds.push(result as Record<Target, LoadResult>);
  }
  const { ownMs: pacedOwnMs, gcMs: pacedGcMs, cpuMs: pacedCpuMs } = await ownMs();
  const saturatingDirect = await loadFromChild(targets.directly, saturating);
  const saturatingThrough = await loadFromChild(targets.server, saturating);
  const rate = (r: LoadResult) => r.requests / r.seconds;
  const row = (name: string, r: LoadResult) =>
    `${name.padEnd(34)} ${String(r.requests).padStart(6)} ${String(r.errors).padStart(6)} ${percentile(r.latenciesMs, 50).toFixed(2).padStart(9)} ${percentile(r.latenciesMs, 99).toFixed(2).padStart(9)} ${rate(r).toFixed(0).padStart(8)} ${String(r.resent).padStart(6)}`;
  console.log(
    `server bench: ${CONVERSATIONS} conversations from a second process, the server and the upstream in their own, all compiled; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`,
  );
  console.log(
    `${"load / target".padEnd(34)} ${"reqs".padStart(6)} ${"errors".padStart(6)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)} ${"req/s".padStart(8)} ${"resent".padStart(6)}`,
  );
  rounds.forEach((round, i) => {
    for (const target of order) console.log(row(`paced ${i + 1} (${THINK_MS} ms think), ${target}`, round[target]));
  });
  console.log(row("saturating, directly", saturatingDirect));
  console.log(row("saturating, server", saturatingThrough));
  const added = (target: Target, p: number) => rounds.map((round) => percentile(round[target].latenciesMs, p) - percentile(round.directly.latenciesMs, p));
  const range = (values: number[]) => `${median(values).toFixed(2)} ms (rounds: ${values.map((v) => v.toFixed(2)).join(", ")})`;
  console.log(`added latency (paced, median of ${ROUNDS} rounds): p50 ${range(added("server", 50))}, p99 ${range(added("server", 99))} (goal p99 ≤ 5 ms)`);
  console.log(
    `  of which the server's own time (arrival to last byte, less the wait for the upstream's answer; ${pacedOwnMs.length} completions): p50 ${percentile(pacedOwnMs, 50).toFixed(2)} ms, p99 ${percentile(pacedOwnMs, 99).toFixed(2)} ms`,
  );
  console.log(`  the server process's CPU time (paced rounds): ${((pacedCpuMs / pacedOwnMs.length) * 1000).toFixed(0)} µs a completion`);
  const gcTotal = pacedGcMs.reduce((sum, ms) => sum + ms, 0);
  console.log(
    `  its garbage-collection pauses (paced rounds): ${pacedGcMs.length}, ${gcTotal.toFixed(0)} ms in all, median ${(pacedGcMs.length ? median(pacedGcMs) : 0).toFixed(2)} ms, longest ${Math.max(0, ...pacedGcMs).toFixed(2)} ms`,
  );
  console.log(`  added by the bare proxy, the same rounds: p50 ${range(added("bare proxy", 50))}, p99 ${range(added("bare proxy", 99))}`);
  console.log(
    `throughput (saturating): ${rate(saturatingThrough).toFixed(0)} req/s through the server, ${((rate(saturatingThrough) / rate(saturatingDirect)) * 100).toFixed(0)}% of the upstream alone`,
  );
  const runs = [...rounds.flatMap((round) => order.map((target) => round[target])), saturatingDirect, saturatingThrough];
  const errors = runs.reduce((sum, r) => sum + r.errors, 0);
  if (errors > 0) throw new Error(`${errors} requests failed`);
}

const mode = process.argv[2];
if (mode === "--load") {
  const result = await load(process.argv[3]!, JSON.parse(process.argv[4]!) as Load);
  process.stdout.write(JSON.stringify(result));
} else if (mode === "--upstream") {
  await serveUpstream();
} else if (mode === "--server") {
  await serveServer(process.argv[3]!);
} else if (mode === "--proxy") {
  await serveProxy(process.argv[3]!);
} else {
  await main();
}
