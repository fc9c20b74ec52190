import { describe, expect, it } from "vitest";
import { evaluateTrial, formatWindow, initialRubrics, slidingWindows, type VitaMessage } from "./evaluate.js";
import { averageAtK, passAtK, vitaMetrics } from "./metrics.js";
import { parseVitaTasks } from "./task.js";
import { deliveryTask } from "./testing/fixture.js";

const fast = { initialDelayMs: 1, maxDelayMs: 1, factor: 1 };
const [task] = parseVitaTasks(JSON.stringify([deliveryTask()]), "tasks_en.json", "delivery");
const criteria = { expected_states: [{ state_rubrics: ["A", "B"] }, { state_rubrics: ["B", "C"] }], overall_rubrics: ["A", "D"] };

describe("upstream's rubrics and windows", () => {
  it("keeps each rubric text once: state rubrics first, then overall ones", () => {
    expect([...initialRubrics(criteria)].map(([key, state]) => [key, state.rubric, state.meetExpectation])).toEqual([
      ["rubric_0", "A", false],
      ["rubric_1", "B", false],
      ["rubric_2", "C", false],
      ["rubric_3", "D", false],
    ]);
  });

  it("cuts windows of 10 that overlap by 2", () => {
    const messages = Array.from({ length: 23 }, (_, i) => i);
    expect(slidingWindows(messages).map((w) => [w[0], w.length])).toEqual([
      [0, 10],
      [8, 10],
      [16, 7],
    ]);
    expect(slidingWindows([1, 2, 3])).toEqual([[1, 2, 3]]);
    expect(slidingWindows(Array.from({ length: 18 }, (_, i) => i)).map((w) => [w[0], w.length])).toEqual([
      [0, 10],
      [8, 10],
    ]);
  });

  it("writes messages with their global index and tool calls as Python calls", () => {
    const window: VitaMessage[] = [
      { role: "user", content: "Noodles please" },
      {
        role: "assistant",
        content: null,
        toolCalls: [
          { name: "get_delivery_store_info", arguments: { store_id: "S1" } },
          { name: "delivery_distance_to_time", arguments: { distance: 1000 } },
        ],
      },
      { role: "tool", content: "" },
      { role: "assistant", content: "Done", toolCalls: [{ name: "pay_delivery_order", arguments: { order_id: "O'1" } }] },
    ];
    expect(formatWindow(window, 8)).toBe(
      "[9] user: Noodles please\n[10] assistant: get_delivery_store_info(store_id='S1').delivery_distance_to_time(distance=1000)\n[12] assistant: Done pay_delivery_order(order_id=\"O'1\")",
    );
  });
});

describe("evaluateTrial", () => {
  const conversation: VitaMessage[] = Array.from({ length: 12 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `turn ${i}` }));
  const withRubrics = { ...task!, criteria: { overall_rubrics: ["Orders noodles", "Is polite"] } };

  it("lets the judge update every rubric window by window; reward 1 only if all hold", async () => {
    const answers = [
      "not json",
      JSON.stringify({ rubrics: [{ rubric_idx: "rubric_0", rubric: "Orders noodles", justification: "[3] ordered", meetExpectation: true }] }),
      JSON.stringify({ rubrics: [{ rubric_idx: "rubric_1", rubric: "Is polite", justification: "[11] rude", meetExpectation: false }] }),
    ];
    const prompts: string[] = [];
    const verdict = await evaluateTrial({
      task: withRubrics,
      messages: conversation,
      termination: "user_stop",
      backoff: fast,
      judge: ({ system, user }) => {
        prompts.push(system.includes("window 1 (out of 2") ? `1:${user.includes("[1] user: turn 0")}` : `2:${user.includes("[9] user: turn 8")}`);
        return Promise.resolve(answers.shift()!);
      },
    });
    expect(prompts).toEqual(["1:true", "1:true", "2:true"]);
    expect(verdict).toMatchObject({ reward: 0, rubricScore: 0.5, windows: 2 });
    expect(verdict.rubrics.map((r) => [r.rubric, r.meetExpectation, r.justification])).toEqual([
      ["Orders noodles", true, "[3] ordered"],
      ["Is polite", false, "[11] rude"],
    ]);
  });

  it("masks the trial when the judge keeps failing, and never asks it for a premature ending", async () => {
    let calls = 0;
    const failing = (): Promise<string> => (calls++, Promise.reject(new Error("503 Service Unavailable")));
    const masked = await evaluateTrial({ task: withRubrics, messages: conversation, termination: "agent_stop", judge: failing, maxAttempts: 2, backoff: fast });
    expect(masked).toMatchObject({ reward: null, masked: "judge failed on window 1 after 2 attempts: 503 Service Unavailable" });
    expect(calls).toBe(2);
    for (const termination of ["max_steps", "too_many_errors", "invalid_agent_message"] as const) {
      expect(await evaluateTrial({ task: withRubrics, messages: conversation, termination, judge: failing })).toMatchObject({ reward: 0, rubricScore: 0 });
    }
    expect(calls).toBe(2);
  });
});

describe("upstream's metrics", () => {
  it("pass@k, avg@k and pass^k as agent_metrics.py computes them", () => {
    // 4 trials, 1 success: pass@2 = 1 - C(3,2)/C(4,2) = 1 - 3/6.
    expect(passAtK(4, 1, 2)).toBe(0.5);
    expect(passAtK(4, 3, 2)).toBe(1);
    expect(passAtK(1, 1, 2)).toBe(0);
    expect(averageAtK([1, 0, 0, 1], 3)).toBe(0.5);
    const metrics = vitaMetrics(
      [
        { taskId: "a", reward: 1 },
        { taskId: "a", reward: 0 },
        { taskId: "b", reward: 1 },
        { taskId: "b", reward: 1 },
      ],
      2,
    );
    // pass^1 = (1/2 + 1) / 2, pass^2 = (0 + 1) / 2; pass@2 = (1 + 1) / 2.
    expect(metrics).toEqual({ avgReward: 0.75, passHatK: { 1: 0.75, 2: 0.5 }, passAtK: { 1: 0.75, 2: 1 }, avgAtK: { 1: 0.75, 2: 0.75 } });
  });
});
