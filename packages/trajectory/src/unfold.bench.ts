// The rollout engine's own overhead: 256 concurrent trajectories against a policy and an
// environment that answer instantly, compared with hand-written loops that call the same functions
// with the same inputs (policy.generate, parseActOutput, environment.call, toolMessage; for
// self-unfolded rollouts also the call check, buildRehearsePrompt and parseRehearseOutput).
// Goal: unfold ≤ 1.2× the loop that returns the same trajectories. The loop that keeps nothing
// shows what keeping 256 trajectories alive costs on top (mostly garbage collection).
import { performance } from "node:perf_hooks";
import { GCProfiler, getHeapStatistics, setFlagsFromString } from "node:v8";
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
  type Trajectory,
  type ToolOutcome,
  type ToolResult,
  type ToolSpec,
} from "@envace/protocol";
import { parseActOutput, type ActOutput, type ActParserOptions } from "./act-parser.js";
import { ToolCallValidator } from "./call-validator.js";
import { ConcurrencyLimit } from "@envace/concurrency";
import { unfoldGroup } from "./group.js";
import { toolMessage } from "./messages.js";
import { rehearsal } from "./rehearsal-environment.js";
import { parseRehearseOutput } from "./rehearse-parser.js";
import { buildRehearsePrompt } from "./rehearse-prompt.js";
import { singleTurn } from "./user-turns.js";

const TRAJECTORIES = 256;
const GROUP = 4;
const TOOL_TURNS = 20;
const REPEATS = 36;

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
 * The hand-written loops call the same functions as the engine, with the same inputs (call ids
 * name the turn, as the engine's do). With `keep`, a loop also builds and returns the trajectory
 * the engine returns; without, it keeps only the conversation it needs and returns a step count.
 */
async function handGrounded(task: Task, rollout: number, keep: boolean): Promise<Trajectory | number> {
  const environment = new InstantEnvironment();
  await environment.reset();
  return handLoop(task, rollout, keep, "grounded", async (messages, output, outcomes) => {
    messages.push(output.message);
    for (const call of output.calls) {
      const result = await environment.call(call);
      outcomes?.push({ provenance: "grounded", call, result });
      messages.push(toolMessage(result));
    }
  });
}

async function handRehearsed(task: Task, rollout: number, keep: boolean): Promise<Trajectory | number> {
  const validator = new ToolCallValidator(task.tools);
  return handLoop(task, rollout, keep, "rehearsed", async (messages, output, outcomes) => {
    const results: Message[] = [];
    for (const call of output.calls) {
      if (!validator.check(call).ok) throw new Error("unexpected refusal");
      const prompt = buildRehearsePrompt({ tools, history: messages, latestAct: output.message, call });
      const rehearsed = await policy.generate({ role: "rehearse", messages: prompt, tools: [], sampling });
      const parsed = parseRehearseOutput(rehearsed.text);
      if (parsed.kind !== "result") throw new Error("unexpected Rehearse output");
      const result: ToolResult = { status: "ok", callId: call.id, name: call.name, content: parsed.content };
      outcomes?.push({ provenance: "rehearsed", call, result, generation: rehearsed });
      results.push(toolMessage(result));
    }
    messages.push(output.message, ...results);
  });
}

/** Answers one Act turn's calls: extends the conversation, and fills `outcomes` when the loop keeps them. */
type AnswerCalls = (messages: Message[], output: Extract<ActOutput, { kind: "tool_calls" }>, outcomes: ToolOutcome[] | undefined) => Promise<void>;

/** The Act loop both hand-written variants share; `answer` is where grounding and rehearsing differ. */
async function handLoop(task: Task, rollout: number, keep: boolean, environment: string, answer: AnswerCalls): Promise<Trajectory | number> {
  const context = [...task.messages];
  const messages: Message[] = [...context];
  const steps: Step[] = [];
  let turn = 0;
  const parserOptions: ActParserOptions = { tools, callId: (index) => `call_${turn}_${index}` };
  for (;;) {
    const generated = await policy.generate({ role: "act", messages, tools, sampling });
    turn += 1;
    const output = parseActOutput(generated, parserOptions);
    if (output.kind === "error") throw new Error("unexpected Act output");
    const outcomes: ToolOutcome[] = [];
    if (keep) steps.push({ type: "act", generation: generated, message: output.message, outcomes });
    if (output.kind === "reply") return keep ? kept(task, rollout, context, steps, environment) : turn;
    await answer(messages, output, keep ? outcomes : undefined);
  }
}

function kept(task: Task, rollout: number, context: Message[], steps: Step[], environment: string): Trajectory {
  return {
    id: `${task.id}/${rollout}`,
    taskId: task.id,
    rollout,
    context,
    steps,
    termination: { reason: "agent_stop" },
    metadata: { actor: policy.id, environment },
  };
}

type Variant = "bare" | "keeping" | "unfold";

/** One batch: every task's group of rollouts at once. Returns the number of Act steps taken. */
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
  const run = mode === "grounded" ? handGrounded : handRehearsed;
  const keep = variant === "keeping";
  const all = await Promise.all(tasks.flatMap((task) => Array.from({ length: GROUP }, (_, rollout) => run(task, rollout, keep))));
  return all.reduce<number>((sum, r) => sum + (typeof r === "number" ? r : r.steps.length), 0);
}

interface Timing {
  /** Wall-clock milliseconds. */
  wall: number;
  /** CPU milliseconds of this process (user + system): what the other processes sharing the machine cannot inflate. */
  cpu: number;
  /** Bytes allocated on the JavaScript heap during the run; meaningful when no collection fell inside it. */
  allocated: number;
  /** Garbage collections that fell inside the run. */
  collections: number;
  steps: number;
}

// Every timed run starts from a fully collected heap, with a young generation large enough (set on
// the command line, see package.json) that no collection falls inside a run. A collection inside a
// run of a few milliseconds costs about as much as the run itself, and whether one falls inside
// depends on where the previous runs left the heap, which would make the ratios a lottery. The
// price of collecting garbage follows the bytes allocated, which are reported instead.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (options: { type: "minor" | "major" }) => void;

async function time(fn: () => Promise<number>): Promise<Timing> {
  gc({ type: "major" });
  const profiler = new GCProfiler();
  profiler.start();
  const heap = getHeapStatistics().used_heap_size;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const steps = await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const allocated = getHeapStatistics().used_heap_size - heap;
  const collections = profiler.stop().statistics.length;
  return { wall, cpu: (used.user + used.system) / 1000, allocated, collections, steps };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(
  `rollout engine overhead: ${TRAJECTORIES} concurrent trajectories (${TRAJECTORIES / GROUP} groups of ${GROUP}), ` +
    `${TOOL_TURNS} tool turns and a reply each, instant policy and environment; ${REPEATS} interleaved runs of each, medians`,
);
const variants: readonly Variant[] = ["bare", "keeping", "unfold"];
const ORDERS: readonly (readonly Variant[])[] = [
  ["bare", "keeping", "unfold"],
  ["bare", "unfold", "keeping"],
  ["keeping", "bare", "unfold"],
  ["keeping", "unfold", "bare"],
  ["unfold", "bare", "keeping"],
  ["unfold", "keeping", "bare"],
];
const LABELS: Record<Variant, string> = {
  bare: "hand-written loop",
  keeping: "hand-written loop keeping the trajectories",
  unfold: "unfold",
};
for (const mode of ["grounded", "rehearsed"] as const) {
  for (let i = 0; i < 3; i += 1) for (const variant of variants) await time(() => rollouts(variant, mode));
  const runs: Record<Variant, Timing[]> = { bare: [], keeping: [], unfold: [] };
  // Interleaved, so drift in machine load falls on every variant alike, in every order in turn, so
  // that no variant always runs after the same one; each ratio is the median of the per-round ratios.
  for (let i = 0; i < REPEATS; i += 1) {
    for (const variant of ORDERS[i % ORDERS.length]!) runs[variant].push(await time(() => rollouts(variant, mode)));
    const counts = variants.map((v) => runs[v].at(-1)!.steps);
    if (new Set(counts).size !== 1) throw new Error(`the loops disagree on the number of steps: ${counts.join(", ")}`);
  }
  const steps = runs.unfold[0]!.steps;
  const of = (v: Variant, key: "wall" | "cpu" | "allocated"): number => median(runs[v].map((r) => r[key]));
  const ratio = (over: Variant, key: "wall" | "cpu" | "allocated"): string => median(runs.unfold.map((t, i) => t[key] / runs[over][i]![key])).toFixed(2);
  const collected = variants.reduce((sum, v) => sum + runs[v].filter((r) => r.collections > 0).length, 0);
  console.log(`  ${mode}, ${steps} Act steps per run`);
  for (const v of variants) {
    console.log(
      `    ${LABELS[v].padEnd(44)} CPU ${of(v, "cpu").toFixed(1).padStart(6)} ms, wall ${of(v, "wall").toFixed(1).padStart(6)} ms; ` +
        `per Act step ${((of(v, "cpu") * 1000) / steps).toFixed(2)} µs CPU, ${(of(v, "allocated") / steps / 1024).toFixed(2)} KiB allocated`,
    );
  }
  console.log(
    `    unfold / loop keeping the trajectories: ${ratio("keeping", "cpu")}× CPU, ${ratio("keeping", "wall")}× wall, ` +
      `${ratio("keeping", "allocated")}× allocation (the engine's own overhead; goal ≤ 1.2×)`,
  );
  console.log(
    `    unfold / loop keeping nothing:          ${ratio("bare", "cpu")}× CPU, ${ratio("bare", "wall")}× wall, ` +
      `${ratio("bare", "allocated")}× allocation (also what keeping 256 trajectories costs)`,
  );
  if (collected > 0) {
    console.log(`    note: ${collected} of ${3 * REPEATS} runs had a garbage collection inside; give node a larger --max-semi-space-size`);
  }
}
