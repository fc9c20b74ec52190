// The cost of the rehearsal machinery itself, with a policy that answers instantly: per task, a
// whole rehearse-then-commit episode for each setting, against the bare minimum it contains (the
// same N self-unfolded attempts and the committed rollout, run with `unfold` directly). The
// difference is what reflect/summarize prompts, parsing, the memory and its budget add. Then the
// memory compressor alone on a large input. Model time, which dominates in practice, is excluded.
import { performance } from "node:perf_hooks";
import type { GenerateRequest } from "@envace/protocol";
import { rehearsal, ScriptedPolicy, unfold } from "@envace/trajectory";
import { predictedFailures } from "./attempt.js";
import { rehearseThenCommit } from "./commit.js";
import { buildMemory } from "./memory.js";
import { parseRehearsalSetting } from "./setting.js";
import { assessment, call, memory, RecordingBank, result, task } from "./testing/bank.js";
import { tokenCounter } from "./tokens.js";

const TASKS = 100;
const REPEATS = 9;

function script(request: GenerateRequest): string {
  switch (request.role) {
    case "act": {
      const turn = request.messages.filter((m) => m.role === "assistant").length;
      return turn === 0 ? call("balance", { account: "me" }) : turn === 1 ? call("transfer", { to: "Bob", amount: 500 }) : "That is more than your balance.";
    }
    case "rehearse":
      return request.messages.at(-1)?.content?.includes('"transfer"') === true
        ? result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } })
        : result({ account: "me", balance: 120 });
    case "reflect":
      return assessment({ reached_goal: false, went_wrong: "the transfer fails", revision: "check the balance first" });
    default:
      return memory({ plan: "Check the balance, then explain that 500 is too much.", lessons: ["A transfer of 500 fails.", "Reply with the balance."] });
  }
}

// No token ids: token use is estimated by the metering, which is part of the machinery measured.
const policy = new ScriptedPolicy("instant", script);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Milliseconds per task of each workload, measured in interleaved rounds so load changes hit all alike. */
async function perTask(workloads: readonly (() => Promise<unknown>)[]): Promise<number[]> {
  const times = workloads.map((): number[] => []);
  for (let r = 0; r < REPEATS; r += 1) {
    for (const [w, work] of workloads.entries()) {
      const started = performance.now();
      for (let i = 0; i < TASKS; i += 1) await work();
      times[w]!.push((performance.now() - started) / TASKS);
    }
  }
  return times.map(median);
}

console.log(`rehearsal machinery, ${TASKS} tasks × ${REPEATS} interleaved rounds, instant policy (medians, ms per task)\n`);
console.log("setting        bare unfolds  episode  overhead  episode, budget 64  overhead");
for (const text of ["none", "parallel:1", "parallel:2", "parallel:3", "sequential:1", "sequential:2", "sequential:3"]) {
  const setting = parseRehearsalSetting(text);
  const attempts = setting.mode === "none" ? 0 : setting.attempts;
  const bare = async (): Promise<void> => {
    for (let a = 0; a < attempts; a += 1) await unfold({ task, actor: policy, environment: rehearsal(policy) });
    await unfold({ task, actor: policy, environment: new RecordingBank(), preset: "evaluation" });
  };
  const episode = (budget: number | null) => () =>
    rehearseThenCommit({ task, policy, environment: new RecordingBank(), setting, rehearsal: { memoryBudget: budget } });
  const [b = 0, e = 0, eb = 0] = await perTask(setting.mode === "none" ? [bare, episode(null)] : [bare, episode(null), episode(64)]);
  const cell = (value: number): string => value.toFixed(3).padStart(8);
  const budgeted = setting.mode === "none" ? "" : `  ${cell(eb).padStart(18)}  ${cell(eb - b)}`;
  console.log(`${text.padEnd(13)}  ${cell(b).padStart(12)}  ${cell(e).padStart(7)}  ${cell(e - b)}${budgeted}`);
}

// The compressor alone: 30 predicted failures, a long plan and lessons, squeezed into 64 tokens.
const digests = Array.from({ length: 3 }, (_, index) => ({
  index,
  termination: { reason: "agent_stop" as const },
  events: Array.from({ length: 10 }, (_, k) => ({
    kind: "call" as const,
    name: k % 2 === 0 ? "transfer" : "balance",
    arguments: { to: `user${index}-${k}`, amount: k + 1 },
    result: { status: "error" as const, callId: "c", name: "transfer", error: { code: "INSUFFICIENT_FUNDS", message: `balance ${k} < ${k + 1}` } },
    source: "model" as const,
  })),
}));
const failures = predictedFailures(digests, (tool) => tool === "transfer");
const summary = {
  plan: "Check every balance first, then transfer only what each account covers, and tell the user. ".repeat(4),
  lessons: Array.from({ length: 6 }, (_, i) => `Lesson ${i}: look before you write.`),
  source: "policy" as const,
};
const times: number[] = [];
let kept = 0;
for (let r = 0; r < 200; r += 1) {
  const started = performance.now();
  kept = buildMemory({ summary, predictedFailures: failures, attempts: 3, budget: 64, counter: tokenCounter() }).tokens;
  times.push(performance.now() - started);
}
console.log(
  `\nbuildMemory, 30 predicted failures + plan + 6 lessons into 64 estimated tokens: ${median(times).toFixed(3)} ms (median of 200), ${kept} tokens kept`,
);
