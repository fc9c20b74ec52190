/**
 * What the checklist judge costs around the judge model itself: lookups per second through the
 * real `openai` client against a loopback server that answers after a fixed latency (a stand-in
 * for a model), one call at a time against the concurrency cap, and re-scoring the same run from
 * its verdict cache (no HTTP at all). The server's latency is simulated; everything else is real.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Cm2Record, Message } from "@envace/protocol";
import { reply, startScriptedServer } from "@envace/scripted-server";
import OpenAI from "openai";
import { ChecklistJudge, cm2ToTask } from "./index.js";

const LATENCY_MS = 25;
const ROLLOUTS = 24;
const TURNS = 2;
const STEPS = 3;
const ITEMS = 4;

function record(r: number): { record: Cm2Record; rollout: Message[] } {
  const messages: Message[] = [{ role: "system", content: "You are a shop assistant." }];
  for (let t = 0; t < TURNS; t++) {
    messages.push({ role: "user", content: `Rollout ${r}, request ${t}: find item ${r * 10 + t}.` });
    for (let s = 0; s < STEPS - 1; s++) {
      const id = `c${t}${s}`;
      messages.push({
        role: "assistant",
        content: `<think>step ${s}</think>`,
        tool_calls: [{ id, type: "function", function: { name: "search", arguments: `{"q":"item ${r}-${t}-${s}"}` } }],
      });
      messages.push({ role: "tool", tool_call_id: id, content: `{"hits":[${r},${t},${s}]}` });
    }
    messages.push({ role: "assistant", content: `Found item ${r * 10 + t}.` });
  }
  const turn = (t: number) =>
    Array.from({ length: ITEMS }, (_, i) => ({
      id: `t${t}-i${i}`,
      evidence: [],
      focus_on: "assistant.tool_calls",
      question: `Does step ${i} of turn ${t} search correctly?`,
      pass_condition: "The search query names the item.",
      failure_examples: ["No search"],
      required_for_next_turn: i === 0,
      dependence: [],
      weight: 1 / ITEMS,
    }));
  const checklist = Array.from({ length: TURNS }, (_, t) => turn(t));
  return { record: { uuid: `bench-${r}`, messages, tools: [], checklists: [checklist] }, rollout: messages };
}

const verdict = JSON.stringify({
  high_level_understanding_of_the_question: "q",
  analysis_of_if_focus_on: "present",
  analysis_of_pass_condition: "met",
  analysis_of_failure_examples: "none",
  answer: true,
});

const server = await startScriptedServer({ script: () => reply.delay(LATENCY_MS, reply.text(verdict)) });
const client = new OpenAI({ baseURL: server.baseURL, apiKey: "bench" });
const cases = Array.from({ length: ROLLOUTS }, (_, r) => record(r));
const lookups = ROLLOUTS * TURNS * STEPS * ITEMS;
const dirs: string[] = [];

async function scoreAll(judge: ChecklistJudge, subset = cases): Promise<number> {
  const start = performance.now();
  await Promise.all(subset.map(({ record: rec, rollout }) => judge.score(rollout, cm2ToTask(rec))));
  return performance.now() - start;
}

function row(label: string, count: number, ms: number, http: number): string {
  return `${label.padEnd(38)} ${String(count).padStart(6)} ${ms.toFixed(0).padStart(8)} ms ${Math.round((count / ms) * 1000)
    .toString()
    .padStart(8)}/s ${String(http).padStart(6)}`;
}

console.log(
  `checklist judge: ${ROLLOUTS} rollouts × ${TURNS} turns × ${STEPS} steps × ${ITEMS} items = ${lookups} lookups; simulated judge latency ${LATENCY_MS} ms`,
);
console.log(`machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the start (other processes share the CPU)`);
console.log(`${"".padEnd(38)} ${"lookups".padStart(6)} ${"time".padStart(11)} ${"rate".padStart(10)} ${"HTTP".padStart(6)}`);

const serial = cases.slice(0, 2);
let before = server.requests.length;
const serialMs = await scoreAll(new ChecklistJudge({ client, model: "bench", concurrency: 1 }), serial);
console.log(row("concurrency 1 (first 2 rollouts)", 2 * TURNS * STEPS * ITEMS, serialMs, server.requests.length - before));

for (const concurrency of [16, 64]) {
  const dir = await mkdtemp(join(tmpdir(), "envace-judge-bench-"));
  dirs.push(dir);
  before = server.requests.length;
  const coldMs = await scoreAll(new ChecklistJudge({ client, model: "bench", concurrency, runDir: dir }));
  console.log(row(`concurrency ${concurrency}, cold`, lookups, coldMs, server.requests.length - before));
  before = server.requests.length;
  const warmMs = await scoreAll(new ChecklistJudge({ client, model: "bench", concurrency, runDir: dir }));
  console.log(row(`concurrency ${concurrency}, re-scored from the run dir`, lookups, warmMs, server.requests.length - before));
}

await server.close();
await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
