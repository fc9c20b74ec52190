// The rollout engine's own overhead: 256 concurrent trajectories against a policy and an
// environment that answer instantly, compared with a bare loop that calls the same functions
// (policy.generate, parseActOutput, environment.call, toolMessage; for self-unfolded rollouts also
// the call check, buildRehearsePrompt and parseRehearseOutput). Goal: unfold ≤ 1.2× the bare loop.
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  SamplingParams,
  type Environment,
  type GenerateRequest,
  type Generation,
  type Message,
  type Policy,
  type Task,
  type ToolCall,
  type Step,
  type ToolOutcome,
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
const REPEATS = 31;

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

/**
 * The bare loops call the same functions as the engine and keep only the conversation. With
 * `record`, they also build the trajectory's steps and outcomes exactly as the engine does, which
 * separates the price of recording a trajectory from the engine's own logic.
 */
async function bareGrounded(task: Task, record: boolean): Promise<Step[]> {
  const environment = new InstantEnvironment();
  await environment.reset();
  const messages: Message[] = [...task.messages];
  const steps: Step[] = [];
  for (;;) {
    const generated = await policy.generate({ role: "act", messages, tools, sampling });
    const output = parseActOutput(generated, { tools });
    const outcomes: ToolOutcome[] = [];
    steps.push(record ? { type: "act", generation: generated, message: { role: "assistant", content: "" }, outcomes } : PLACEHOLDER);
    if (output.kind !== "tool_calls") return steps;
    messages.push(output.message);
    for (const call of output.calls) {
      const result = await environment.call(call);
      if (record) outcomes.push({ provenance: "grounded", call, result });
      messages.push(toolMessage(result));
    }
  }
}

async function bareRehearsed(task: Task, record: boolean): Promise<Step[]> {
  const validator = new ToolCallValidator(task.tools);
  const messages: Message[] = [...task.messages];
  const steps: Step[] = [];
  for (;;) {
    const generated = await policy.generate({ role: "act", messages, tools, sampling });
    const output = parseActOutput(generated, { tools });
    const outcomes: ToolOutcome[] = [];
    steps.push(record ? { type: "act", generation: generated, message: { role: "assistant", content: "" }, outcomes } : PLACEHOLDER);
    if (output.kind !== "tool_calls") return steps;
    const results: Message[] = [];
    for (const call of output.calls) {
      if (!validator.check(call).ok) throw new Error("unexpected refusal");
      const prompt = buildRehearsePrompt({ tools, history: messages, latestAct: output.message, call });
      const rehearsed = await policy.generate({ role: "rehearse", messages: prompt, tools: [], sampling });
      const parsed = parseRehearseOutput(rehearsed.text);
      if (parsed.kind !== "result") throw new Error("unexpected rehearse output");
      const result: ToolResult = { status: "ok", callId: call.id, name: call.name, content: parsed.content };
      if (record) outcomes.push({ provenance: "rehearsed", call, result, generation: rehearsed });
      results.push(toolMessage(result));
    }
    messages.push(output.message, ...results);
  }
}

const PLACEHOLDER: Step = { type: "user", source: "replay", message: { role: "user", content: "" } };

type Variant = "bare" | "recording" | "unfold";

async function rollouts(variant: Variant, mode: "grounded" | "rehearsed"): Promise<number> {
  if (variant === "unfold") {
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
  const run = mode === "grounded" ? bareGrounded : bareRehearsed;
  const record = variant === "recording";
  const all = await Promise.all(tasks.flatMap((task) => Array.from({ length: GROUP }, () => run(task, record))));
  return all.reduce((sum, steps) => sum + steps.length, 0);
}

interface Timing {
  /** Wall-clock milliseconds. */
  wall: number;
  /** CPU milliseconds of this process (user + system): what the other processes sharing the machine cannot inflate. */
  cpu: number;
  steps: number;
}

// A young-generation collection before each timed run, so no run pays for the short-lived garbage
// of the one before it. (A full collection would also shrink the young generation, which distorts
// whichever variant keeps more objects alive.)
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (options: { type: "minor" | "major" }) => void;
const collectGarbage = (): void => {
  gc({ type: "minor" });
};

async function time(fn: () => Promise<number>): Promise<Timing> {
  collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const steps = await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000, steps };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (values: readonly number[]): string => `${median(values).toFixed(1)} ms`;

console.log(
  `rollout engine overhead: ${TRAJECTORIES} concurrent trajectories (${TRAJECTORIES / GROUP} groups of ${GROUP}), ` +
    `${TOOL_TURNS} tool turns and a reply each, instant policy and environment; ${REPEATS} interleaved runs of each`,
);
const variants: readonly Variant[] = ["bare", "recording", "unfold"];
const LABELS: Record<Variant, string> = { bare: "bare loop", recording: "bare loop + recording", unfold: "unfold" };
for (const mode of ["grounded", "rehearsed"] as const) {
  for (let i = 0; i < 3; i += 1) for (const variant of variants) await time(() => rollouts(variant, mode));
  const runs: Record<Variant, Timing[]> = { bare: [], recording: [], unfold: [] };
  // Interleaved, so drift in machine load falls on every variant alike; times are medians, and each
  // ratio is the median of the per-round ratios.
  for (let i = 0; i < REPEATS; i += 1) {
    for (const variant of variants) runs[variant].push(await time(() => rollouts(variant, mode)));
    const counts = variants.map((v) => runs[v].at(-1)!.steps);
    if (new Set(counts).size !== 1) throw new Error(`the loops disagree on the number of steps: ${counts.join(", ")}`);
  }
  const steps = runs.unfold[0]!.steps;
  const pairRatio = (over: Variant, key: "wall" | "cpu"): string =>
    median(runs.unfold.map((e, i) => e[key] / runs[over][i]![key])).toFixed(2);
  const line = (key: "wall" | "cpu"): string =>
    `    ${key === "cpu" ? "CPU " : "wall"}  ` +
    variants.map((v) => `${LABELS[v]} ${ms(runs[v].map((r) => r[key]))} (best ${Math.min(...runs[v].map((r) => r[key])).toFixed(1)})`).join(", ");
  console.log(`  ${mode}: ${steps} Act steps per run`);
  console.log(line("cpu"));
  console.log(line("wall"));
  console.log(
    `    unfold / bare loop: ${pairRatio("bare", "cpu")}× CPU, ${pairRatio("bare", "wall")}× wall (goal ≤ 1.2×); ` +
      `unfold / bare loop + recording: ${pairRatio("recording", "cpu")}× CPU, ${pairRatio("recording", "wall")}× wall; ` +
      `unfold ${((median(runs.unfold.map((r) => r.cpu)) * 1000) / steps).toFixed(1)} µs CPU per Act step`,
  );
}
