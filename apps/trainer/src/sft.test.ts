import { describe, expect, it } from "vitest";
import { builtinMeta, generateTasks, goldTrajectory, SYSTEM_PROMPT_SHORT } from "@envace/bench-builtin";
import { TINY_COMPACT_CHAT_TEMPLATE } from "@envace/models";
import { trainTokenizer } from "@envace/training";
import { ChatTemplate, IncrementalRenderer } from "@envace/trajectory";
import type { Task, TrainingRow, Trajectory } from "@envace/protocol";
import { argumentTokens, cosineSchedule, goldRows, mergeContinuations, reflectExamples } from "./sft.js";

const tasks = generateTasks({ seed: 3, count: 4, split: "train", systemPrompt: SYSTEM_PROMPT_SHORT });
const corpus = tasks.flatMap((t) => goldTrajectory(t).examples.map((e) => e.text)).concat(tasks.map((t) => JSON.stringify(t.messages)));
const tokenizer = trainTokenizer(corpus, { vocabSize: 400, minFrequency: 1 });
const renderer = new IncrementalRenderer(new ChatTemplate(TINY_COMPACT_CHAT_TEMPLATE), tokenizer);
const rehearsePrompt = { sections: { instructions: "Answer as the tool.", tools: false, examples: false, latestAct: false } };

describe("goldRows", () => {
  const task = tasks[0]!;
  const examples = goldTrajectory(task).examples;
  const rows = goldRows(task, examples, { renderer, rehearsePrompt });

  it("makes one row per example, in order, each target ending with the stop token", () => {
    expect(rows.map((r) => r.role)).toEqual(examples.map((e) => e.role));
    const stop = tokenizer.stopTokenIds[0]!;
    rows.forEach((row, i) => {
      expect(row.outputTokens.at(-1)).toBe(stop);
      expect(tokenizer.decode(row.outputTokens.slice(0, -1))).toBe(examples[i]!.text);
    });
  });

  it("renders Act prompts incrementally: each continues the previous prompt and output", () => {
    const acts = rows.filter((r) => r.role === "act");
    for (let i = 1; i < acts.length; i++) {
      const before = [...acts[i - 1]!.promptTokens, ...acts[i - 1]!.outputTokens];
      expect(acts[i]!.promptTokens.slice(0, before.length)).toEqual(before);
    }
    expect(tokenizer.decode(acts[0]!.promptTokens)).toBe(new ChatTemplate(TINY_COMPACT_CHAT_TEMPLATE).render(task.messages, { addGenerationPrompt: true }));
  });

  it("prompts the Rehearse role with the call and the history", () => {
    const rehearse = rows.find((r) => r.role === "rehearse")!;
    const text = tokenizer.decode(rehearse.promptTokens);
    expect(text).toContain("Answer as the tool.");
    expect(text).toContain("## Tool call to simulate");
    expect(text.endsWith("<|im_start|>assistant\n")).toBe(true);
  });
});

describe("reflectExamples", () => {
  // A two-step gold dialogue by hand: look up ada, then reply; the gold solution declined pay 9.
  const task: Task = {
    id: "t",
    messages: [
      { role: "system", content: "Shop." },
      { role: "user", content: "ada pays bo 9." },
    ],
    tools: [],
    metadata: {},
  };
  const lookup = { id: "c1", name: "user", arguments: { user: "ada" } };
  const gold: Trajectory = {
    id: "t/gold",
    taskId: "t",
    rollout: 0,
    context: task.messages,
    steps: [
      {
        type: "act",
        generation: { role: "act", text: "", promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" },
        message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "user", arguments: '{"user":"ada"}' } }] },
        outcomes: [{ provenance: "grounded", call: lookup, result: { status: "ok", callId: "c1", name: "user", content: { balance: 4 } } }],
      },
      {
        type: "act",
        generation: { role: "act", text: "", promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" },
        message: { role: "assistant", content: "ada has only 4." },
        outcomes: [],
      },
    ],
    termination: { reason: "agent_stop" },
    metadata: {},
  };
  const declined = {
    call: { id: "c2", name: "pay", arguments: { from: "ada", to: "bo", amount: 9 } },
    result: { status: "error" as const, callId: "c2", name: "pay", error: { code: "LOW_BALANCE", message: "balance 4 < 9" } },
  };

  it("judges the gold dialogue as reaching the goal, and the declined write made as the refusal it is", () => {
    const examples = reflectExamples(task, gold, declined, "Judge.");
    expect(examples.map((e) => e.text)).toEqual([
      '<assessment>{"reached_goal":true,"went_wrong":"","revision":""}</assessment>',
      '<assessment>{"reached_goal":false,"went_wrong":"pay {\\"amount\\":9,\\"from\\":\\"ada\\",\\"to\\":\\"bo\\"}: LOW_BALANCE","revision":"do not try it: tell the user why"}</assessment>',
    ]);
    const prompts = examples.map((e) => (e.role === "reflect" ? e.messages : []));
    expect(prompts.map((m) => m[0]!.content)).toEqual(["Judge.", "Judge."]);
    // The refused write sits before the reply, answered with the real refusal.
    expect(prompts[1]![1]!.content).toContain(
      '1. user {"user":"ada"} → {"balance":4}\n2. pay {"amount":9,"from":"ada","to":"bo"} → error LOW_BALANCE: balance 4 < 9\n3. reply: ada has only 4.\nended: the agent finished',
    );
    expect(prompts[0]![1]!.content).toContain('1. user {"user":"ada"} → {"balance":4}\n2. reply: ada has only 4.\nended: the agent finished');
  });

  it("makes only the gold judgement where nothing was declined, and rows whose prompt is the reflect prompt", () => {
    const examples = reflectExamples(task, gold, undefined, "Judge.");
    expect(examples).toHaveLength(1);
    const [row] = goldRows(task, examples, { renderer, rehearsePrompt });
    const example = examples[0]!;
    expect(row!.role).toBe("reflect");
    expect(tokenizer.decode(row!.promptTokens)).toBe(
      new ChatTemplate(TINY_COMPACT_CHAT_TEMPLATE).render(example.role === "reflect" ? example.messages : [], { addGenerationPrompt: true }),
    );
    expect(tokenizer.decode(row!.outputTokens.slice(0, -1))).toBe(example.text);
  });
});

describe("argument weighting", () => {
  const task = tasks.find((t) => builtinMeta(t).family === "buy" && builtinMeta(t).outcome === "ok")!;
  const request = builtinMeta(task).request as { user: string; item: string; qty: number };
  const examples = goldTrajectory(task).examples;
  const weighted = goldRows(task, examples, { renderer, rehearsePrompt, argumentWeight: 10 });

  it("weights exactly the tokens of the argument values in Act targets", () => {
    const heavy = (row: (typeof weighted)[number]) => tokenizer.decode(row.outputTokens.filter((_, t) => row.outputWeights?.[t] === 10));
    const acts = weighted.filter((r) => r.role === "act");
    // The gold dialogue of a buy that succeeds: user(name), item(name), buy(user, item, qty), the reply.
    expect(heavy(acts[0]!)).toBe(request.user);
    expect(heavy(acts[1]!)).toBe(request.item);
    expect(heavy(acts[2]!)).toBe(`${request.user}${request.item}${request.qty}`);
    // The reply and every Rehearse target keep weight 1 throughout.
    expect(acts.at(-1)!.outputWeights).toBeUndefined();
    expect(weighted.filter((r) => r.role === "rehearse").every((r) => r.outputWeights === undefined)).toBe(true);
    expect(goldRows(task, examples, { renderer, rehearsePrompt }).every((r) => r.outputWeights === undefined)).toBe(true);
  });

  it("carries the weights into the merged datum's mask, at the positions that predict those tokens", () => {
    const [act] = mergeContinuations(weighted.filter((r) => r.role === "act"));
    const heavy = act!.targetTokens.filter((_, i) => act!.mask[i] === 10);
    expect(tokenizer.decode(heavy).startsWith(`${request.user}${request.item}`)).toBe(true);
    expect(act!.mask.filter((m) => m === 10).length).toBe(weighted.flatMap((r) => r.outputWeights ?? []).filter((w) => w === 10).length);
  });

  it("leaves out a value the text does not contain, or whose edges fall inside a token", () => {
    const text = '<tool_call>{"name":"user","arguments":{"user":"zzz"}}</tool_call>';
    const tokens = tokenizer.encode(text);
    expect(argumentTokens(tokenizer, text, tokens, [{ function: { arguments: '{"user":"nobody"}' } }]).size).toBe(0);
    expect(argumentTokens(tokenizer, text, tokens, [{ function: { arguments: "not json" } }]).size).toBe(0);
  });
});

describe("mergeContinuations", () => {
  const row = (trajectoryId: string, role: "act" | "rehearse", promptTokens: number[], outputTokens: number[], index: number): TrainingRow => ({
    taskId: "t",
    trajectoryId,
    rollout: 0,
    index,
    role,
    promptTokens,
    outputTokens,
    logprobs: outputTokens.map(() => 0),
    invalid: false,
  });

  it("joins Act turns of one dialogue across interleaved Rehearse rows, keeping every target masked in", () => {
    const data = mergeContinuations([row("a", "act", [1, 2], [3, 4], 0), row("a", "rehearse", [9, 9, 3], [5], 1), row("a", "act", [1, 2, 3, 4, 6], [7], 2)]);
    expect(data).toHaveLength(2);
    const act = data[0]!;
    expect(act.tokens).toEqual([1, 2, 3, 4, 6]);
    expect(act.targetTokens).toEqual([2, 3, 4, 6, 7]);
    expect(act.mask).toEqual([0, 1, 1, 0, 1]);
    expect(data[1]!.mask).toEqual([0, 0, 1]);
  });

  it("keeps rows that do not continue each other apart", () => {
    expect(mergeContinuations([row("a", "act", [1, 2], [3], 0), row("a", "act", [1, 5, 3], [4], 1), row("b", "act", [1, 2, 3], [4], 0)])).toHaveLength(3);
  });
});

describe("cosineSchedule", () => {
  it("warms up linearly, peaks, then decays along a cosine to a tenth of the peak", () => {
    const lr = (i: number) => cosineSchedule(1, i, 22, 0.1);
    // 2 warm-up batches (22 × 0.1, floored), then 20 decaying ones.
    expect([lr(0), lr(1), lr(2)]).toEqual([0.5, 1, 1]);
    expect(lr(21)).toBeCloseTo(0.1, 12);
    // Halfway through the decay: 0.1 + 0.9 × (1 + cos(π · 9.5/19)) / 2 = 0.55.
    expect(cosineSchedule(1, 2 + 9.5, 22, 0.1)).toBeCloseTo(0.55, 12);
    for (let i = 3; i < 22; i++) expect(lr(i)).toBeLessThan(lr(i - 1));
  });
});
