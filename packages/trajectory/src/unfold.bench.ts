// The rollout engine's own overhead: 256 concurrent trajectories against a policy and an
// environment that answer instantly, compared with a bare loop that calls the same functions
// (policy.generate, parseActOutput, environment.call, toolMessage; for self-unfolded rollouts also
// the call check, buildRehearsePrompt and parseRehearseOutput). Goal: unfold ≤ 1.2× the bare loop.
import { performance } from "node:perf_hooks";
import {
  SamplingParams,
  type Environment,
  type GenerateRequest,
  type Generation,
  type Message,
  type Policy,
  type Task,
  type ToolCall,
  type ToolResult,
  type ToolSpec,
} from "@envace/protocol";
import { parseActOutput } from "./act-parser.js";
import { ToolCallValidator } from "./call-validator.js";
import { ConcurrencyLimit, unfoldGroup } from "./group.js";
import { toolMessage } from "./messages.js";
import { rehearsal } from "./rehearsal-environment.js";
import { parseRehearseOutput } from "./rehearse-parser.js";
import { buildRehearsePrompt } from "./rehearse-prompt.js";
import { singleTurn } from "./user-turns.js";

const TRAJECTORIES = 256;
const GROUP = 4;
const TOOL_TURNS = 20;
const REPEATS = 15;

const tools: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "lookup",
      parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
    },
  },
];
const tasks: Task[] = Array.from({ length: TRAJECTORIES / GROUP }, (_, i) => ({
  id: `task-${i}`,
  messages: [
    { role: "system", content: "You look things up." },
    { role: "user", content: `Find key ${i}.` },
  ],
  tools,
  metadata: {},
}));

const generation = (role: GenerateRequest["role"], text: string): Generation => ({
  role,
  text,
  promptTokens: [],
  outputTokens: [],
  logprobs: null,
  finishReason: "stop",
});
const callTurn = generation("act", '<think>Look it up.</think>\n<tool_call>\n{"name": "lookup", "arguments": {"key": "k"}}\n</tool_call>');
const replyTurn = generation("act", "The value is 42.");
const rehearseTurn = generation("rehearse", '<execution_result>{"value": 42}</execution_result>');

/** Answers at once: a tool call for the first TOOL_TURNS Act turns, then a reply. */
const policy: Policy = {
  id: "instant",
  generate(request) {
    if (request.role === "rehearse") return Promise.resolve(rehearseTurn);
    const assistantTurns = (request.messages.length - 2) / 2;
    return Promise.resolve(assistantTurns < TOOL_TURNS ? callTurn : replyTurn);
  },
};

class InstantEnvironment implements Environment {
  reset(): Promise<void> {
    return Promise.resolve();
  }
  tools(): readonly ToolSpec[] {
    return tools;
  }
  call(call: ToolCall): Promise<ToolResult> {
    return Promise.resolve({ status: "ok", callId: call.id, name: call.name, content: { value: 42 } });
  }
  state(): Promise<null> {
    return Promise.resolve(null);
  }
}

const sampling = SamplingParams.parse({});

async function bareGrounded(task: Task): Promise<number> {
  const environment = new InstantEnvironment();
  await environment.reset();
  const messages: Message[] = [...task.messages];
  let steps = 0;
  for (;;) {
    const output = parseActOutput(await policy.generate({ role: "act", messages, tools, sampling }), { tools });
    steps += 1;
    if (output.kind !== "tool_calls") return steps;
    messages.push(output.message);
    for (const call of output.calls) messages.push(toolMessage(await environment.call(call)));
  }
}

async function bareRehearsed(task: Task): Promise<number> {
  const validator = new ToolCallValidator(task.tools);
  const messages: Message[] = [...task.messages];
  let steps = 0;
  for (;;) {
    const output = parseActOutput(await policy.generate({ role: "act", messages, tools, sampling }), { tools });
    steps += 1;
    if (output.kind !== "tool_calls") return steps;
    const results: Message[] = [];
    for (const call of output.calls) {
      if (!validator.check(call).ok) throw new Error("unexpected refusal");
      const prompt = buildRehearsePrompt({ tools, history: messages, latestAct: output.message, call });
      const parsed = parseRehearseOutput((await policy.generate({ role: "rehearse", messages: prompt, tools: [], sampling })).text);
      if (parsed.kind !== "result") throw new Error("unexpected rehearse output");
      results.push(toolMessage({ status: "ok", callId: call.id, name: call.name, content: parsed.content }));
    }
    messages.push(output.message, ...results);
  }
}

async function engine(mode: "grounded" | "rehearsed"): Promise<number> {
  const limit = new ConcurrencyLimit(TRAJECTORIES);
  const groups = await Promise.all(
    tasks.map((task) =>
      unfoldGroup({
        task,
        size: GROUP,
        actor: policy,
        environment: mode === "grounded" ? () => new InstantEnvironment() : () => rehearsal(policy),
        users: singleTurn,
        limit,
      }),
    ),
  );
  return groups.flat().reduce((sum, t) => sum + t.steps.length, 0);
}

async function bare(mode: "grounded" | "rehearsed"): Promise<number> {
  const run = mode === "grounded" ? bareGrounded : bareRehearsed;
  const counts = await Promise.all(tasks.flatMap((task) => Array.from({ length: GROUP }, () => run(task))));
  return counts.reduce((a, b) => a + b, 0);
}

async function time(fn: () => Promise<number>): Promise<{ ms: number; steps: number }> {
  const start = performance.now();
  const steps = await fn();
  return { ms: performance.now() - start, steps };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

for (const mode of ["grounded", "rehearsed"] as const) {
  for (let i = 0; i < 3; i += 1) {
    await time(() => bare(mode));
    await time(() => engine(mode));
  }
  const bareMs: number[] = [];
  const engineMs: number[] = [];
  const ratios: number[] = [];
  let steps = 0;
  // Interleaved pairs, so drift in machine load falls on both sides alike; the ratio reported is
  // the median of the per-pair ratios.
  for (let i = 0; i < REPEATS; i += 1) {
    const b = await time(() => bare(mode));
    const e = await time(() => engine(mode));
    if (b.steps !== e.steps) throw new Error(`the two loops disagree: ${b.steps} vs ${e.steps} steps`);
    steps = e.steps;
    bareMs.push(b.ms);
    engineMs.push(e.ms);
    ratios.push(e.ms / b.ms);
  }
  const b = median(bareMs);
  const e = median(engineMs);
  console.log(
    `${mode.padEnd(9)} ${TRAJECTORIES} concurrent trajectories, ${steps} Act steps, ${REPEATS} interleaved runs: ` +
      `bare loop median ${b.toFixed(1)} ms (min ${Math.min(...bareMs).toFixed(1)}), ` +
      `unfold median ${e.toFixed(1)} ms (min ${Math.min(...engineMs).toFixed(1)}), ` +
      `ratio ${median(ratios).toFixed(2)}× (goal ≤ 1.2×); unfold ${((e * 1000) / steps).toFixed(1)} µs per Act step`,
  );
}
