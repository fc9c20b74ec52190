import type { Environment, RewardVerdict, Task, Tokenizer, ToolCall, Trajectory } from "@envace/protocol";
import { computeAdvantages } from "@envace/grpo";
import { rowsOf } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config/load.js";
import { groundRollouts, openGrounding } from "./grounding.js";
import { buildReport } from "./report/build.js";
import { CallCounter } from "./rollout.js";
import { supervisedData } from "./update.js";

const chars: Tokenizer = {
  vocabSize: 65_536,
  stopTokenIds: [0],
  encode: (text) => Array.from({ length: text.length }, (_, i) => text.charCodeAt(i)),
  decode: (tokens) => String.fromCharCode(...tokens),
};

const task: Task = {
  id: "t",
  messages: [{ role: "user", content: "What is my balance?" }],
  tools: [{ type: "function", function: { name: "balance", parameters: { type: "object" } } }],
  metadata: {},
};

/** The real world: every balance is 5. */
const bank = (): Environment => ({
  reset: () => Promise.resolve(),
  tools: () => task.tools,
  call: (call: ToolCall) => Promise.resolve({ status: "ok", callId: call.id, name: call.name, content: { balance: 5 } }),
  state: () => Promise.resolve({}),
});

/** Rollout `r`: one balance call, imagined as `imagined`, then a reply. */
function rollout(r: number, imagined: Record<string, number>): Trajectory {
  const call: ToolCall = { id: `c${r}`, name: "balance", arguments: {} };
  const gen = (role: "act" | "rehearse", prompt: number[]) => ({
    role,
    text: "",
    promptTokens: prompt,
    outputTokens: [9],
    logprobs: [-0.5],
    finishReason: "stop" as const,
  });
  return {
    id: `t/${r}`,
    taskId: "t",
    rollout: r,
    context: task.messages,
    steps: [
      {
        type: "act",
        generation: gen("act", [1]),
        message: { role: "assistant", content: "" },
        outcomes: [
          { provenance: "rehearsed", call, result: { status: "ok", callId: call.id, name: call.name, content: imagined }, generation: gen("rehearse", [7, 8]) },
        ],
      },
      { type: "act", generation: gen("act", [2]), message: { role: "assistant", content: "5" }, outcomes: [] },
    ],
    termination: { reason: "agent_stop" },
    metadata: {},
  };
}

const MINIMAL = "grounding: { fraction: 1, use: [metric, target, reward], target_coef: 2, reward_coef: 0.3 }";

describe("grounding in a training step", () => {
  it("grounds every call at fraction 1: rewards r + λ·(2a − 1) on the Rehearse rows, targets weighted coef / tokens, every real call counted", async () => {
    const config = parseConfig(MINIMAL, "g.yaml");
    const grounding = openGrounding(config, { name: "bank", environment: bank }, []);
    const counter = new CallCounter();
    // Rollout 0 imagined the answer exactly (a = 1); rollout 1 the status alone (other keys: a = 1/3).
    const trajectories = [rollout(0, { balance: 5 }), rollout(1, { total: 5 })];
    const step = await groundRollouts({
      grounding,
      domain: { environment: bank },
      tasks: [task],
      trajectories,
      counter,
      seed: 1,
      step: 1,
      tokenizer: chars,
      concurrency: 2,
    });
    expect(counter.take()).toBe(2);

    // Rewards 1 and 0. Rehearse scores: 1 + 0.3·(2·1 − 1) = 1.3 and 0 + 0.3·(2/3 − 1) = −0.1;
    // baseline 0.6, advantages ±0.7. The Act rows are untouched: scores 1, 1, 0, 0 → ±0.5.
    const verdicts = new Map<string, RewardVerdict>([
      ["t/0", { status: "scored", value: 1 }],
      ["t/1", { status: "scored", value: 0 }],
    ]);
    const batch = computeAdvantages(
      trajectories.flatMap((t) => rowsOf(t)),
      verdicts,
      {},
      step.advantages,
    );
    expect(batch.rows.map((s) => [s.row.trajectoryId, s.row.role, Number(s.advantage.toFixed(12))])).toEqual([
      ["t/0", "act", 0.5],
      ["t/0", "rehearse", 0.7],
      ["t/0", "act", 0.5],
      ["t/1", "act", -0.5],
      ["t/1", "rehearse", -0.7],
      ["t/1", "act", -0.5],
    ]);

    // The target: the Rehearse prompt [7, 8], then the real answer and the stop token.
    const target = [...chars.encode('<execution_result>{"balance":5}</execution_result>'), 0];
    const { data, tokens } = supervisedData(step.supervised, new Set(["t"]));
    expect(tokens).toBe(2 * target.length);
    expect(data).toHaveLength(2);
    const full = [7, 8, ...target];
    expect(data[0]!.tokens).toEqual(full.slice(0, -1));
    expect(data[0]!.targetTokens).toEqual(full.slice(1));
    // Position 0 predicts the prompt's 8: no loss; every target token weighs 2 / (2 · |target|).
    expect(data[0]!.mask).toEqual([0, ...target.map(() => 2 / (2 * target.length))]);
    expect(supervisedData(step.supervised, new Set(["other"]))).toEqual({ data: [], tokens: 0 });

    expect(step.record({ loss: 0, metrics: {}, tokens: 0, supervised: { loss: 1.5, tokens: 102 } }).grounding).toMatchObject({
      candidates: 2,
      compared: 2,
      calls: 2,
      calls_run: 2,
      exact: 0.5,
      keys: 0.5,
      status: 1,
      failure_recall: null,
      target_loss: 1.5,
    });
  });

  it("logs the counts but no fidelity without use: metric, and is off (nothing changes) at fraction 0", async () => {
    const config = parseConfig("grounding: { fraction: 1, use: [target], max_calls: { per_step: 1 } }", "g.yaml");
    const counter = new CallCounter();
    const step = await groundRollouts({
      grounding: openGrounding(config, { name: "bank", environment: bank }, []),
      domain: { environment: bank },
      tasks: [task],
      trajectories: [rollout(0, { balance: 5 }), rollout(1, { balance: 5 })],
      counter,
      seed: 1,
      step: 1,
      tokenizer: chars,
      concurrency: 1,
    });
    const record = step.record({ loss: 0, metrics: {}, tokens: 0 }).grounding!;
    expect(record).toMatchObject({ selected: 2, over_budget: 1, compared: 1, calls: 1 });
    expect(record).not.toHaveProperty("exact");
    expect(counter.take()).toBe(1);
    expect(openGrounding(parseConfig("grounding: { fraction: 0 }", "g.yaml"), { name: "bank", environment: bank }, [])).toBeUndefined();
  });

  it("resumes the run's budget from the kept step records", () => {
    const config = parseConfig("grounding: { fraction: 0.5, max_calls: { per_step: 4, per_run: 10 } }", "g.yaml");
    const kept = [
      { kind: "train", step: 1, grounding: { calls: 4 } },
      { kind: "eval", step: 1 },
      { kind: "train", step: 2, grounding: { calls: 3 } },
    ];
    const grounding = openGrounding(config, { name: "bank", environment: bank }, kept)!;
    expect(grounding.budget.usedInRun).toBe(7);
    expect(grounding.budget.stepAllowance()).toBe(3);
    expect(() => openGrounding(config, { name: "cm2" }, [])).toThrow(/no real environment|has none/);
  });
});

describe("the grounding config", () => {
  const refusal = (yaml: string): string => {
    try {
      parseConfig(yaml, "g.yaml");
    } catch (error) {
      return (error as Error).message;
    }
    return "accepted";
  };

  it("is refused where it cannot work, naming the keys", () => {
    expect(refusal(`mode: grpo\nenvironment: simulator\ngrounding: { fraction: 0.05 }`)).toMatch(/grounding.*environment: self/);
    expect(
      refusal(
        `data: { source: cm2, path: x.jsonl }\nreward: { type: checklist, judge: { base_url: "http://127.0.0.1:1/v1", model: j } }\ngrounding: { fraction: 0.05 }`,
      ),
    ).toMatch(/grounding.*real environment/);
    expect(refusal("grounding: { fraction: 0.05, max_calls: { per_step: 0 } }")).toMatch(
      /grounding\.max_calls\.per_step.*0 cannot honour grounding\.fraction 0\.05/,
    );
    expect(refusal("grounding: { fraction: 0.05, max_calls: { per_run: 0 } }")).toMatch(/grounding\.max_calls\.per_run/);
    expect(refusal("grounding: { fraction: 0.05, target_coef: 2 }")).toMatch(/grounding\.target_coef.*add target to grounding\.use/);
    expect(refusal("grounding: { fraction: 0.05, use: [metric], reward_coef: 2 }")).toMatch(/grounding\.reward_coef/);
    expect(refusal("grounding: { fraction: 1.5 }")).toMatch(/grounding\.fraction/);
    expect(refusal("grounding: { fraction: 0.05, select: fancy }")).toMatch(/grounding\.select/);
    expect(refusal("grounding: { fraction: 0.05, use: [metric, metric] }")).toMatch(/grounding\.use/);
  });

  it("is accepted with its defaults: off at fraction 0, caps none, use metric", () => {
    expect(parseConfig("grounding: {}", "g.yaml").grounding).toEqual({
      fraction: 0,
      select: "uniform",
      use: ["metric"],
      max_calls: { per_step: null, per_run: null },
    });
    // Fraction 0 with a zero cap honours it trivially.
    expect(refusal("grounding: { fraction: 0, max_calls: { per_step: 0 } }")).toBe("accepted");
  });
});

describe("the report", () => {
  it("draws the grounded calls' fidelity over training beside the evaluation's", () => {
    const records = [
      { kind: "train", step: 1, grounding: { exact: 0, keys: 0.5, status: 0.75, failure_recall: null } },
      { kind: "train", step: 2, grounding: { exact: 0.25, keys: 0.75, status: 1, failure_recall: 0.5 } },
      { kind: "eval", step: 2, rehearsal: "none", success_rate: 0.5, fidelity: { exact: 0, keys: 0.5, status: 1 } },
    ];
    const report = buildReport([{ name: "run", config: {}, records }]);
    const ids = report.charts.map((c) => c.id);
    expect(ids.indexOf("grounding")).toBe(ids.indexOf("fidelity") + 1);
    const chart = report.charts.find((c) => c.id === "grounding")!;
    expect(chart.title).toBe("Fidelity over training (grounded calls)");
    expect(chart.series.map((s) => [s.label, "points" in s ? s.points : []])).toEqual([
      [
        "exact",
        [
          [1, 0],
          [2, 0.25],
        ],
      ],
      [
        "same keys",
        [
          [1, 0.5],
          [2, 0.75],
        ],
      ],
      [
        "same status",
        [
          [1, 0.75],
          [2, 1],
        ],
      ],
      ["failures predicted", [[2, 0.5]]],
    ]);
    // A run without grounding has no such chart.
    expect(buildReport([{ name: "run", config: {}, records: records.slice(2) }]).charts.map((c) => c.id)).not.toContain("grounding");
  });
});
