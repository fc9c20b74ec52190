import { deriveSeed, ScriptedPolicy } from "@envace/trajectory";
import type { GenerateRequest, Generation, Policy } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { rehearseThenCommit } from "./commit.js";
import { rehearse, rememberAttempts } from "./rehearse.js";
import { assessment, call, charTokenizer, lastOf, memory, recording, RecordingBank, result, systemOf, task, type LogEntry } from "./testing/bank.js";

const SYSTEM = "You are a bank agent. Check the balance before you transfer.";
const TASK_TEXT = `[system]\n${SYSTEM}\n\n[user]\nSend 500 to Bob.\n\n(tools: balance, transfer)`;

/** Sequential rehearsal: a careless first attempt, a careful second one, then the committed run. */
const sequentialScript = {
  act: [
    // attempt 1
    call("transfer", { to: "Bob", amount: 500 }),
    "I cannot send 500 to Bob.",
    // attempt 2
    call("balance", { account: "me" }),
    "Your balance is 120, so I cannot send 500 to Bob.",
    // committed
    call("balance", { account: "me" }),
    "Your balance is 120, so I cannot send 500 to Bob.",
  ],
  rehearse: [
    result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } }),
    `<think>The balance of me.</think>${result({ account: "me", balance: 120 })}`,
  ],
  reflect: [
    assessment({ reached_goal: false, went_wrong: "transferred before checking the balance", revision: "check the balance first" }),
    assessment({ reached_goal: true, went_wrong: "", revision: "" }),
  ],
  summarize: [memory({ plan: "Check the balance of me, then explain that 500 is too much.", lessons: ["A transfer of 500 fails."] })],
};

const ATTEMPT_1 = [
  '1. transfer {"amount":500,"to":"Bob"} → error INSUFFICIENT_FUNDS: balance 120 < 500',
  "2. reply: I cannot send 500 to Bob.",
  "ended: the agent finished",
].join("\n");
const ATTEMPT_2 = [
  '1. balance {"account":"me"} → {"account":"me","balance":120}',
  "2. reply: Your balance is 120, so I cannot send 500 to Bob.",
  "ended: the agent finished",
].join("\n");
const ASSESSMENT_1 = "Assessment: goal reached: no; went wrong: transferred before checking the balance; revision: check the balance first";

const MEMORY = [
  "## Rehearsal memory",
  "You rehearsed this task privately before acting. These are your own predictions, not real results.",
  "Predicted to fail:",
  '- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500) [1/2 attempts]',
  "Plan: Check the balance of me, then explain that 500 is too much.",
  "Lessons:",
  "- A transfer of 500 fails.",
].join("\n");

describe("sequential rehearsal: each attempt sees the earlier ones with their assessments", () => {
  async function run() {
    const log: LogEntry[] = [];
    const policy = recording(ScriptedPolicy.queues("scripted", sequentialScript, { tokenizer: charTokenizer }), log);
    const environment = new RecordingBank(log);
    const episode = await rehearseThenCommit({ task, policy, environment, setting: "sequential:2", tokenizer: charTokenizer });
    return { log, policy, environment, episode };
  }

  it("asks the roles in exactly this order, and touches the real environment only after the memory exists", async () => {
    const { log, policy } = await run();
    expect(policy.requests.map((r) => r.role)).toEqual([
      ...["act", "rehearse", "act", "reflect"],
      ...["act", "rehearse", "act", "reflect"],
      "summarize",
      ...["act", "act"],
    ]);
    const firstEnv = log.findIndex((entry) => entry.who === "env");
    const lastSummary = log.findLastIndex((entry) => entry.who === "policy" && entry.role === "summarize");
    expect(firstEnv).toBeGreaterThan(lastSummary);
    expect(
      log
        .slice(firstEnv)
        .filter((e) => e.who === "env")
        .map((e) => e.what),
    ).toEqual(["reset", "call"]);
  });

  it("starts attempt 1 from the task alone and shows attempt 2 attempt 1 with its assessment", async () => {
    const { policy } = await run();
    const acts = policy.requests.filter((r) => r.role === "act");
    expect(acts[0]!.messages).toEqual(task.messages);
    expect(systemOf(acts[2]!)).toBe(
      `${SYSTEM}\n\n## Your earlier private rehearsals of this task (predicted, not real)\n\n### Attempt 1 (predicted, not real)\n${ATTEMPT_1}\n${ASSESSMENT_1}`,
    );
    expect(acts[2]!.messages.slice(1)).toEqual(task.messages.slice(1));
  });

  it("reflects on each attempt and summarises both with their assessments", async () => {
    const { policy } = await run();
    const [reflect1, reflect2] = policy.requests.filter((r) => r.role === "reflect");
    expect(lastOf(reflect1!)).toBe(`## Task\n${TASK_TEXT}\n\n## Rehearsal attempt 1 (predicted, not real)\n${ATTEMPT_1}`);
    expect(lastOf(reflect2!)).toBe(`## Task\n${TASK_TEXT}\n\n## Rehearsal attempt 2 (predicted, not real)\n${ATTEMPT_2}`);
    const summarize = policy.requests.find((r) => r.role === "summarize")!;
    expect(lastOf(summarize)).toBe(
      `## Task\n${TASK_TEXT}\n\n## Rehearsals\n### Attempt 1 (predicted, not real)\n${ATTEMPT_1}\n${ASSESSMENT_1}\n\n` +
        `### Attempt 2 (predicted, not real)\n${ATTEMPT_2}\nAssessment: goal reached: yes`,
    );
    for (const request of [reflect1!, reflect2!, summarize]) expect(request.tools).toEqual([]);
  });

  it("conditions the committed execution on the memory, in its system message", async () => {
    const { policy, episode } = await run();
    expect(episode.rehearsal?.memory.text).toBe(MEMORY);
    expect(episode.rehearsal?.memory.tokens).toBe(MEMORY.length);
    const committedActs = policy.requests.filter((r) => r.role === "act").slice(4);
    expect(systemOf(committedActs[0]!)).toBe(`${SYSTEM}\n\n${MEMORY}`);
    expect(episode.committed.trajectory.context[0]).toEqual({ role: "system", content: `${SYSTEM}\n\n${MEMORY}` });
    expect(episode.committed.trajectory.termination).toEqual({ reason: "agent_stop" });
  });

  it("samples Act and Rehearse at 1.0 and reflect and summarize at 0.01 in rehearsal; the committed Act at 0.6", async () => {
    const { policy } = await run();
    const temperatures = policy.requests.map((r) => `${r.role}@${r.sampling.temperature}`);
    expect(temperatures).toEqual([
      ...["act@1", "rehearse@1", "act@1", "reflect@0.01"],
      ...["act@1", "rehearse@1", "act@1", "reflect@0.01"],
      "summarize@0.01",
      ...["act@0.6", "act@0.6"],
    ]);
    expect(policy.requests.at(-1)!.sampling.topP).toBe(0.95);
  });

  it("keeps the grounded outcomes of the committed run apart from the rehearsed ones", async () => {
    const { episode, environment } = await run();
    const rehearsed = episode.rehearsal!.attempts.flatMap((a) => a.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : [])));
    expect(rehearsed.map((o) => o.provenance)).toEqual(["rehearsed", "rehearsed"]);
    const grounded = episode.committed.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []));
    expect(grounded.map((o) => o.provenance)).toEqual(["grounded"]);
    expect(environment.calls).toEqual(grounded.map((o) => o.call));
  });

  it("counts the tokens of every role", async () => {
    const { episode } = await run();
    const usage = episode.rehearsal!.usage;
    expect(Object.keys(usage).sort()).toEqual(["act", "reflect", "rehearse", "summarize"]);
    expect(usage.act?.generations).toBe(4);
    expect(usage.reflect?.outputTokens).toBe(sequentialScript.reflect.join("").length);
    expect(usage.summarize?.outputTokens).toBe(sequentialScript.summarize[0]!.length);
    expect(usage.act?.estimated).toBe(0);
    expect(episode.committed.usage.act?.generations).toBe(2);
    expect(episode.rehearsal!.malformed).toEqual({ reflect: 0, summarize: 0 });
  });
});

/** A policy for identical parallel attempts: it answers from the request alone. */
function bankScript(request: GenerateRequest): string {
  switch (request.role) {
    case "act":
      return request.messages.at(-1)?.role === "tool" ? "That is more than your balance." : call("transfer", { to: "Bob", amount: 500 });
    case "rehearse":
      return result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } });
    case "reflect":
      return assessment({ reached_goal: false, went_wrong: "no balance check", revision: "check the balance first" });
    default:
      return memory({ plan: "Check the balance first." });
  }
}

/**
 * Holds the first generations until `width` of them are in flight at once (or `patience` ms pass),
 * then lets everything through; records the peak number in flight.
 */
function concurrencyProbe(inner: Policy, width: number, patience: number): Policy & { peak: number } {
  let inFlight = 0;
  let open = false;
  let waiting: (() => void)[] = [];
  const release = (): void => {
    open = true;
    for (const resume of waiting) resume();
    waiting = [];
  };
  const probe = {
    id: inner.id,
    peak: 0,
    async generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
      inFlight += 1;
      probe.peak = Math.max(probe.peak, inFlight);
      if (inFlight >= width) release();
      if (!open) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(release, patience);
          waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      try {
        return await inner.generate(request, signal);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return probe;
}

describe("parallel rehearsal: independent attempts from the same context", () => {
  it("runs the attempts concurrently", async () => {
    const probe = concurrencyProbe(new ScriptedPolicy("scripted", bankScript), 3, 5000);
    const run = await rehearse({ task, policy: probe, setting: "parallel:3" });
    expect(probe.peak).toBe(3);
    expect(run.attempts.map((a) => a.index)).toEqual([0, 1, 2]);
  });

  it("with one attempt at a time, asks act, rehearse, act, reflect per attempt, then summarize once", async () => {
    const policy = recording(new ScriptedPolicy("scripted", bankScript));
    const run = await rehearse({ task, policy, setting: "parallel:3", concurrency: 1 });
    expect(policy.requests.map((r) => r.role)).toEqual([
      ...["act", "rehearse", "act", "reflect"],
      ...["act", "rehearse", "act", "reflect"],
      ...["act", "rehearse", "act", "reflect"],
      "summarize",
    ]);
    const firstActs = policy.requests.filter((r) => r.role === "act" && r.messages.length === task.messages.length);
    expect(firstActs).toHaveLength(3);
    for (const request of firstActs) expect(request.messages).toEqual(task.messages);
    const summarize = lastOf(policy.requests.at(-1)!);
    expect(summarize).toContain("### Attempt 1 (predicted, not real)");
    expect(summarize).toContain("### Attempt 3 (predicted, not real)");
    expect(run.memory.text).toContain('- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500) [3/3 attempts]');
    expect(run.attempts.map((a) => a.trajectory.id)).toEqual(["bank-1/rehearsal/0", "bank-1/rehearsal/1", "bank-1/rehearsal/2"]);
  });

  it("runs sequential attempts one at a time", async () => {
    const probe = concurrencyProbe(new ScriptedPolicy("scripted", bankScript), 2, 50);
    await rehearse({ task, policy: probe, setting: "sequential:2" });
    expect(probe.peak).toBe(1);
  });

  it("offsets a fixed seed by the attempt index, so attempts differ (each request then derives its own)", async () => {
    const policy = recording(new ScriptedPolicy("scripted", bankScript));
    await rehearse({ task, policy, setting: "parallel:2", sampling: { act: { seed: 7 }, rehearse: { seed: 70 } }, concurrency: 1 });
    // unfold's derivation: (attempt seed, attempt as rollout index, turns so far, request: 0 = Act, 2 = first call's Rehearse).
    expect(policy.requests.filter((r) => r.role === "act").map((r) => r.sampling.seed)).toEqual([
      deriveSeed(7, 0, 0, 0),
      deriveSeed(7, 0, 1, 0),
      deriveSeed(8, 1, 0, 0),
      deriveSeed(8, 1, 1, 0),
    ]);
    expect(policy.requests.filter((r) => r.role === "rehearse").map((r) => r.sampling.seed)).toEqual([deriveSeed(70, 0, 1, 2), deriveSeed(71, 1, 1, 2)]);
  });

  it("rejects with a policy error and cancels the other attempts", async () => {
    let acts = 0;
    const signals: AbortSignal[] = [];
    const policy: Policy = {
      id: "flaky",
      async generate(request, signal) {
        if (signal !== undefined) signals.push(signal);
        if (request.role === "act" && ++acts === 2) throw new Error("server down");
        await new Promise((resolve) => setTimeout(resolve, 5));
        return new ScriptedPolicy("s", bankScript).generate(request, signal);
      },
    };
    await expect(rehearse({ task, policy, setting: "parallel:3" })).rejects.toThrow("server down");
    expect(signals.length).toBeGreaterThan(0);
    expect(signals.every((s) => s.aborted)).toBe(true);
  });

  it("stops when its signal is aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(rehearse({ task, policy: new ScriptedPolicy("s", bankScript), setting: "sequential:2", signal: controller.signal })).rejects.toThrow("stop");
  });

  it("refuses the setting none", async () => {
    await expect(rehearse({ task, policy: new ScriptedPolicy("s", bankScript), setting: "none" })).rejects.toThrow(/nothing to rehearse/);
  });
});

describe("rememberAttempts: the memory of attempts unfolded elsewhere", () => {
  it("reflects on each given attempt and summarises them as rehearse does its own, without acting or rehearsing", async () => {
    const own = await rehearse({ task, policy: new ScriptedPolicy("scripted", bankScript), setting: "parallel:2", concurrency: 1 });
    const policy = recording(new ScriptedPolicy("scripted", bankScript));
    const remembered = await rememberAttempts({ task, policy, trajectories: own.attempts.map((a) => a.trajectory) });
    expect(policy.requests.map((r) => r.role)).toEqual(["reflect", "reflect", "summarize"]);
    expect(remembered.memory.text).toBe(
      [
        "## Rehearsal memory",
        "You rehearsed this task privately before acting. These are your own predictions, not real results.",
        "Predicted to fail:",
        '- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500) [2/2 attempts]',
        "Plan: Check the balance first.",
      ].join("\n"),
    );
    expect(remembered.memory.text).toBe(own.memory.text);
    expect(remembered.attempts.map((a) => a.assessment.revision)).toEqual(["check the balance first", "check the balance first"]);
    expect(Object.keys(remembered.usage).sort()).toEqual(["reflect", "summarize"]);
  });

  it("falls back to the deterministic summary when the summarize prompt does not fit", async () => {
    const own = await rehearse({ task, policy: new ScriptedPolicy("scripted", bankScript), setting: "parallel:2", concurrency: 1 });
    const policy = recording(new ScriptedPolicy("scripted", bankScript));
    const remembered = await rememberAttempts({ task, policy, trajectories: own.attempts.map((a) => a.trajectory), limits: { maxPromptTokens: 10 } });
    expect(policy.requests).toEqual([]);
    expect(remembered.skipped).toEqual({ reflect: 2, summarize: 1 });
    expect(remembered.summary.source).toBe("fallback");
    // The fallback plan is the last revision: to avoid the call predicted to fail.
    expect(remembered.memory.text.split("\n").slice(2)).toEqual([
      "Predicted to fail:",
      '- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500) [2/2 attempts]',
      'Plan: avoid transfer {"amount":500,"to":"Bob"}',
    ]);
  });
});

describe("a Rehearse output that cannot be read predicts nothing", () => {
  /** Transfers at once; the first attempt's prediction is malformed JSON, the second's a real predicted error. */
  function script(request: GenerateRequest): string {
    if (request.role === "act") return request.messages.at(-1)?.role === "tool" ? "Not possible." : call("transfer", { to: "Bob", amount: 500 });
    if (request.role === "rehearse") return request.sampling.seed === undefined ? '<execution_result>{"balance" 120}</execution_result>' : bankScript(request);
    return "unreadable";
  }

  it("marks the call unreadable, keeps it out of the predicted failures and does not advise avoiding it", async () => {
    const policy = new ScriptedPolicy("scripted", script);
    const run = await rehearse({ task, policy, setting: "parallel:1" });
    const [attempt] = run.attempts;
    expect(attempt!.trajectory.termination).toMatchObject({ reason: "env_error", code: "JSON_DECODE_ERROR" });
    expect(attempt!.digest.events).toEqual([expect.objectContaining({ kind: "call", name: "transfer", source: "unreadable" })]);
    // The ending is the rehearsal's failure, not the agent's: nothing went wrong that it could avoid.
    expect(attempt!.assessment).toMatchObject({ wentWrong: "", revision: "" });
    expect(run.memory.predictedFailures).toEqual([]);
    // Nothing was predicted and nothing is advised: no memory at all.
    expect(run.memory.text).toBe("");
  });

  it("still counts a predicted error of the same call in another attempt", async () => {
    // Seeded attempts get a readable predicted error (bankScript); the unseeded one stays malformed.
    const unreadable = await rehearse({ task, policy: new ScriptedPolicy("scripted", script), setting: "parallel:1" });
    const readable = await rehearse({ task, policy: new ScriptedPolicy("scripted", script), setting: "parallel:1", sampling: { rehearse: { seed: 1 } } });
    const remembered = await rememberAttempts({
      task,
      policy: new ScriptedPolicy("scripted", script),
      trajectories: [unreadable.attempts[0]!.trajectory, readable.attempts[0]!.trajectory],
    });
    expect(remembered.memory.predictedFailures.map((f) => [f.code, f.failedIn, f.succeededIn])).toEqual([["INSUFFICIENT_FUNDS", [1], []]]);
    expect(remembered.attempts[0]!.digest.events[0]).toMatchObject({ source: "unreadable" });
    expect(remembered.attempts[1]!.digest.events[0]).toMatchObject({ source: "model" });
  });
});
