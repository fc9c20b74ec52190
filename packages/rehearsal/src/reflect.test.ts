import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import type { AttemptDigest } from "./attempt.js";
import { reflectOutput, fallbackAssessment, parseAssessment } from "./reflect.js";
import { rehearse } from "./rehearse.js";
import { fallbackSummary, parseSummary, type AssessedAttempt } from "./summarize.js";
import { call, charTokenizer, recording, result, task } from "./testing/bank.js";

describe("reading reflect outputs", () => {
  it("reads the tagged JSON, after reasoning, in a code fence, or without the tag", () => {
    const expected = { reachedGoal: false, wentWrong: "no lookup", revision: "look up first", source: "policy" };
    for (const text of [
      '<assessment>{"reached_goal": false, "went_wrong": "no lookup", "revision": "look up first"}</assessment>',
      '<think>hmm</think>\n<assessment>\n```json\n{"reached_goal": false, "went_wrong": "no lookup", "revision": "look up first"}\n```\n</assessment>',
      '{"reachedGoal": "no", "wentWrong": ["no lookup"], "revision": "look up first"}',
      'Here it is: <assessment>{"goal_reached": "false", "mistakes": "no lookup", "suggestion": "look up first"}',
      'Sure. {"success": false, "issues": "no lookup", "next_time": "look up first"} Hope that helps.',
    ]) {
      expect(parseAssessment(text)).toEqual({ ok: true, assessment: expected });
    }
  });

  it("writes an assessment as the tagged JSON the reader takes first", () => {
    const text = reflectOutput({ reachedGoal: false, wentWrong: 'pay {"amount":9}: LOW_BALANCE', revision: "do not pay" });
    expect(text).toBe('<assessment>{"reached_goal":false,"went_wrong":"pay {\\"amount\\":9}: LOW_BALANCE","revision":"do not pay"}</assessment>');
    expect(parseAssessment(text)).toEqual({
      ok: true,
      assessment: { reachedGoal: false, wentWrong: 'pay {"amount":9}: LOW_BALANCE', revision: "do not pay", source: "policy" },
    });
    expect(reflectOutput({ reachedGoal: true, wentWrong: "", revision: "" })).toBe(
      '<assessment>{"reached_goal":true,"went_wrong":"","revision":""}</assessment>',
    );
  });

  it("treats a missing verdict as unknown, but needs a verdict or a revision", () => {
    expect(parseAssessment('<assessment>{"revision": "retry"}</assessment>')).toEqual({
      ok: true,
      assessment: { reachedGoal: null, wentWrong: "", revision: "retry", source: "policy" },
    });
    expect(parseAssessment('<assessment>{"went_wrong": "x"}</assessment>')).toEqual({
      ok: false,
      problem: "the assessment has neither reached_goal nor revision",
    });
  });

  it("reports what is wrong with malformed output instead of throwing", () => {
    expect(parseAssessment("")).toEqual({ ok: false, problem: "empty output" });
    expect(parseAssessment("<think>never closed")).toEqual({ ok: false, problem: "the reasoning block never closed" });
    expect(parseAssessment("<assessment></assessment>")).toEqual({ ok: false, problem: "<assessment> is empty" });
    expect(parseAssessment("<assessment>{bad json</assessment>")).toEqual({ ok: false, problem: "no JSON object in <assessment>" });
    expect(parseAssessment('<tool_call>{"name":"transfer"}</tool_call>')).toEqual({
      ok: false,
      problem: "the assessment has neither reached_goal nor revision",
    });
    expect(parseAssessment('{"reached_goal": "maybe"}')).toEqual({ ok: false, problem: 'reached_goal is "maybe", not true or false' });
    expect(parseAssessment('{"reached_goal": true, "revision": 3}')).toEqual({ ok: false, problem: "revision is not text" });
  });
});

describe("reading summarize outputs", () => {
  it("needs a plan; lessons are optional and may be one string", () => {
    expect(parseSummary('<memory>{"plan": "look, then buy", "lessons": ["a", " ", "b"]}</memory>')).toEqual({
      ok: true,
      summary: { plan: "look, then buy", lessons: ["a", "b"], source: "policy" },
    });
    expect(parseSummary('{"final_plan": "p", "notes": "n"}')).toEqual({ ok: true, summary: { plan: "p", lessons: ["n"], source: "policy" } });
    expect(parseSummary('<memory>{"lessons": ["a"]}</memory>')).toEqual({ ok: false, problem: "the memory has no plan" });
    expect(parseSummary('<memory>{"plan": ""}</memory>')).toEqual({ ok: false, problem: "the plan is empty or not text" });
    expect(parseSummary('<memory>{"plan": "p", "lessons": [1]}</memory>')).toEqual({ ok: false, problem: "lessons is not a list of strings" });
    expect(parseSummary("I will transfer now.")).toEqual({ ok: false, problem: "no JSON object and no <memory>" });
  });
});

/** The balance read that both attempts begin with. */
const balanceLookup: AttemptDigest["events"][number] = {
  kind: "call",
  name: "balance",
  arguments: { account: "me" },
  result: { status: "ok", callId: "a", name: "balance", content: { balance: 120 } },
  source: "model",
};
const failing: AttemptDigest = {
  index: 0,
  events: [
    balanceLookup,
    {
      kind: "call",
      name: "transfer",
      arguments: { to: "Bob", amount: 500 },
      result: { status: "error", callId: "b", name: "transfer", error: { code: "INSUFFICIENT_FUNDS", message: "no" } },
      source: "model",
    },
  ],
  termination: { reason: "parse_error", code: "JSON_DECODE_ERROR", detail: "x" },
};
const clean: AttemptDigest = {
  index: 1,
  events: [balanceLookup, { kind: "reply", text: "Too much." }],
  termination: { reason: "agent_stop" },
};

describe("deterministic fallbacks", () => {
  it("assesses an attempt from its predicted failures and its ending, never guessing the verdict", () => {
    expect(fallbackAssessment(failing, "empty output")).toEqual({
      reachedGoal: null,
      wentWrong: 'transfer {"amount":500,"to":"Bob"} was predicted to fail (INSUFFICIENT_FUNDS); the agent\'s output was malformed (JSON_DECODE_ERROR)',
      revision: 'avoid transfer {"amount":500,"to":"Bob"}',
      source: "fallback",
      problem: "empty output",
    });
    expect(fallbackAssessment(clean, "p")).toEqual({ reachedGoal: null, wentWrong: "", revision: "", source: "fallback", problem: "p" });
  });

  it("plans after the last attempt judged successful without predicted failures, else the last revision", () => {
    const judged: AssessedAttempt[] = [
      { digest: failing, assessment: { reachedGoal: false, wentWrong: "w", revision: "check first", source: "policy" } },
      { digest: clean, assessment: { reachedGoal: true, wentWrong: "", revision: "", source: "policy" } },
    ];
    expect(fallbackSummary(judged, "p")).toEqual({
      plan: 'as in attempt 2: balance {"account":"me"}, then reply',
      lessons: ["check first"],
      source: "fallback",
      problem: "p",
    });
    expect(fallbackSummary(judged.slice(0, 1), "p")).toEqual({ plan: "check first", lessons: [], source: "fallback", problem: "p" });
    // What went wrong is a lesson when the policy said it, not when a fallback restated the attempt.
    const unjudged: AssessedAttempt[] = [
      { digest: failing, assessment: fallbackAssessment(failing, "p") },
      { digest: clean, assessment: { reachedGoal: false, wentWrong: "no reply", revision: "", source: "policy" } },
      {
        digest: { ...clean, index: 2, termination: { reason: "max_turns", limit: 8 } },
        assessment: fallbackAssessment({ ...clean, index: 2, termination: { reason: "max_turns", limit: 8 } }, "p"),
      },
    ];
    expect(unjudged[2]!.assessment).toMatchObject({ wentWrong: "stopped after 8 turns", revision: "" });
    expect(fallbackSummary(unjudged, "p")).toEqual({
      plan: 'avoid transfer {"amount":500,"to":"Bob"}',
      lessons: ["no reply"],
      source: "fallback",
      problem: "p",
    });
  });
});

describe("rehearsal with unreadable or oversized reflections and summaries", () => {
  const acting = (text: string) =>
    recording(
      new ScriptedPolicy(
        "p",
        (request) => {
          if (request.role === "act") return request.messages.at(-1)?.role === "tool" ? "Too much." : call("transfer", { to: "Bob", amount: 500 });
          if (request.role === "rehearse") return result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } });
          return text;
        },
        { tokenizer: charTokenizer },
      ),
    );

  it("falls back to a summary built from the attempts and counts every malformed output", async () => {
    const policy = acting('<tool_call>{"name":"transfer","arguments":{"to":"Eve","amount":1}}</tool_call>');
    const run = await rehearse({ task, policy, setting: "parallel:2", tokenizer: charTokenizer });
    expect(run.malformed).toEqual({ reflect: 2, summarize: 1 });
    expect(run.skipped).toEqual({ reflect: 0, summarize: 0 });
    expect(run.attempts.map((a) => a.assessment.source)).toEqual(["fallback", "fallback"]);
    expect(run.attempts.every((a) => a.reflection !== undefined)).toBe(true);
    expect(run.summary).toMatchObject({ source: "fallback", plan: 'avoid transfer {"amount":500,"to":"Bob"}' });
    expect(run.memory.summarySource).toBe("fallback");
    expect(run.memory.text).toContain('- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500) [2/2 attempts]');
    expect(run.memory.text).toContain('Plan: avoid transfer {"amount":500,"to":"Bob"}');
  });

  it("does not send reflect or summarize prompts over maxPromptTokens, and counts them as skipped", async () => {
    const policy = acting('<assessment>{"reached_goal": true}</assessment>');
    const run = await rehearse({
      task,
      policy,
      setting: "parallel:2",
      concurrency: 1,
      tokenizer: charTokenizer,
      limits: { maxPromptTokens: 3000 },
      instructions: { reflect: "Judge. ".repeat(500), summarize: "Sum up. ".repeat(500) },
    });
    expect(policy.requests.map((r) => r.role)).toEqual(["act", "rehearse", "act", "act", "rehearse", "act"]);
    expect(run.skipped).toEqual({ reflect: 2, summarize: 1 });
    expect(run.malformed).toEqual({ reflect: 0, summarize: 0 });
    expect(run.attempts[0]!.assessment.problem).toMatch(/^the reflect prompt has \d+ tokens, over maxPromptTokens 3000$/);
    expect(run.summarization).toBeUndefined();
  });
});
