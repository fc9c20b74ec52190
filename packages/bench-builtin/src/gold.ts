import { AssistantMessage, Message, ToolCall, ToolResult, toWireToolCall, type ActStep, type Generation, type Task, type Trajectory } from "@envace/protocol";
import { z } from "zod";
import { toToolResult } from "./environment.js";
import { solveRequest, type Solution } from "./families.js";
import { executionResultText, toolCallText, toolMessageText } from "./format.js";
import { builtinMeta } from "./meta.js";
import type { Request } from "./request.js";
import { Shop } from "./tools.js";
import { checkOutcome } from "./verify.js";
import type { World } from "./world.js";

/** One call of the gold solution and the real environment's answer to it. */
export interface GoldCall {
  call: ToolCall;
  result: ToolResult;
}

/** The gold solution of a request in a world: its calls, its conclusion and the final state. */
export interface GoldRun {
  calls: GoldCall[];
  solution: Solution;
  finalState: World;
}

/** Run the gold solver against a private copy of `world`. Call ids are `c1`, `c2`, … */
export function runGold(world: World, request: Request): GoldRun {
  const shop = new Shop(world);
  const calls: GoldCall[] = [];
  const solution = solveRequest(request, (name, args) => {
    const result = shop.call(name, args);
    const id = `c${calls.length + 1}`;
    calls.push({ call: { id, name, arguments: args }, result: toToolResult(id, name, result) });
    return result;
  });
  return { calls, solution, finalState: shop.state() };
}

/** The whole gold dialogue in OpenAI chat form: one assistant message per call, then the reply. */
export function goldDialogue(context: readonly Message[], run: GoldRun): Message[] {
  return [
    ...context,
    ...run.calls.flatMap(({ call, result }): Message[] => [
      { role: "assistant", content: null, tool_calls: [toWireToolCall(call)] },
      { role: "tool", tool_call_id: call.id, name: call.name, content: toolMessageText(result) },
    ]),
    { role: "assistant", content: run.solution.reply },
  ];
}

/**
 * One supervised example for warm-start SFT. `history` is the dialogue before the turn; the
 * trainer renders it with the model's own chat template (Act) or its Rehearse prompt builder.
 *
 * - `act`: the target is the assistant message `target`; `text` is its plain-text form
 *   (a `<tool_call>{…}</tool_call>` block, or the final reply).
 * - `rehearse`: `latestAct` is the assistant message that made `call` (the shape of a Rehearse
 *   request: history, latest Act turn, call); the target is the real answer `result`, as text
 *   `<execution_result>{…}</execution_result>`.
 */
export const SftExample = z.discriminatedUnion("role", [
  z.object({ role: z.literal("act"), history: z.array(Message), target: AssistantMessage, text: z.string() }),
  z.object({
    role: z.literal("rehearse"),
    history: z.array(Message),
    latestAct: AssistantMessage,
    call: ToolCall,
    result: ToolResult,
    text: z.string(),
  }),
]);
export type SftExample = z.infer<typeof SftExample>;

/** A task's gold solution in every form the trainer needs. */
export interface GoldTrajectory {
  task: Task;
  /** The whole dialogue, OpenAI chat shape. */
  messages: Message[];
  /** The protocol form: Act steps with `grounded` outcomes, scored by the outcome check. */
  trajectory: Trajectory;
  /** One example per generation, in order: act, rehearse, act, rehearse, …, act (the reply). */
  examples: SftExample[];
  /**
   * Where a precondition fails: a Rehearse example of the write the gold solution declined, asked
   * where the reply is given, with the shop's typed refusal as the target. No Act example goes
   * with it: the agent should not make that call, but its rehearsal should know how it ends.
   */
  declined: SftExample[];
}

/** The Act generation record of a gold turn: text only, no token data (it was not sampled). */
function goldGeneration(text: string): Generation {
  return { role: "act", text, promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" };
}

/** The gold solution of a built-in task, recomputed from its metadata. */
export function goldTrajectory(task: Task): GoldTrajectory {
  const meta = builtinMeta(task);
  const run = runGold(meta.world, meta.request);
  const messages = goldDialogue(task.messages, run);
  const examples: SftExample[] = [];
  const steps: ActStep[] = [];
  let history: Message[] = [...task.messages];
  for (const { call, result } of run.calls) {
    const target: AssistantMessage = { role: "assistant", content: null, tool_calls: [toWireToolCall(call)] };
    const text = toolCallText(call);
    examples.push({ role: "act", history, target, text });
    examples.push({ role: "rehearse", history, latestAct: target, call, result, text: executionResultText(result) });
    history = [...history, target, { role: "tool", tool_call_id: call.id, name: call.name, content: toolMessageText(result) }];
    steps.push({ type: "act", generation: goldGeneration(text), message: target, outcomes: [{ provenance: "grounded", call, result }] });
  }
  const declined: SftExample[] = [];
  if (run.solution.declined !== undefined) {
    const { name, args } = run.solution.declined;
    const call = { id: `c${run.calls.length + 1}`, name, arguments: args };
    const result = toToolResult(call.id, name, new Shop(run.finalState).call(name, args));
    const latestAct: AssistantMessage = { role: "assistant", content: null, tool_calls: [toWireToolCall(call)] };
    declined.push({ role: "rehearse", history, latestAct, call, result, text: executionResultText(result) });
  }
  const reply: AssistantMessage = { role: "assistant", content: run.solution.reply };
  examples.push({ role: "act", history, target: reply, text: run.solution.reply });
  steps.push({ type: "act", generation: goldGeneration(run.solution.reply), message: reply, outcomes: [] });
  const trajectory: Trajectory = {
    id: `${task.id}/gold`,
    taskId: task.id,
    rollout: 0,
    context: [...task.messages],
    steps,
    termination: { reason: "agent_stop" },
    reward: checkOutcome(task, { state: run.finalState, reply: run.solution.reply }),
    metadata: { gold: true },
  };
  return { task, messages, trajectory, examples, declined };
}

/**
 * A plain, template-free rendering of a dialogue, one message per line: `system:`, `user:`,
 * `assistant:` (with `<tool_call>` blocks), `tool:` (as `<execution_result>`). For reading, and
 * for the character budget a chat template adds its own tokens to.
 */
export function renderPlain(messages: readonly Message[]): string {
  return messages
    .map((message) => {
      switch (message.role) {
        case "assistant": {
          // The wire arguments are a JSON string already; splice them in unparsed so even
          // malformed ones render.
          const calls = (message.tool_calls ?? []).map(
            (c) => `<tool_call>{"name":${JSON.stringify(c.function.name)},"arguments":${c.function.arguments}}</tool_call>`,
          );
          return `assistant: ${[message.content ?? "", ...calls].filter(Boolean).join("")}`;
        }
        case "tool":
          return `tool: <execution_result>${message.content}</execution_result>`;
        default:
          return `${message.role}: ${message.content}`;
      }
    })
    .join("\n");
}
