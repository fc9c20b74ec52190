import { backoffDelay, sleep, type Backoff } from "@envace/concurrency";
import type { JsonObject } from "@envace/protocol";
import { fromJson, type PyDict, pyRepr } from "@envace/python-text";
import { strictJsonSchema } from "@envace/rewards";
import { z } from "zod";
import { agentTime } from "./protocol-task.js";
import type { VitaEvaluationCriteria, VitaTask } from "./task.js";

/*
 * Upstream's trajectory evaluator (`TrajectoryEvaluator.calculate_reward`): the task's rubrics
 * (state rubrics, de-duplicated, then overall rubrics) all start unmet; a judge reads the
 * conversation in sliding windows of 10 messages overlapping by 2 and updates every rubric's
 * state after each window; the reward is 1 only if every rubric holds at the end.
 */

export const WINDOW_SIZE = 10;
export const WINDOW_OVERLAP = 2;

/** A message of the conversation as the evaluator reads it. */
export interface VitaMessage {
  readonly role: "user" | "assistant" | "tool" | "system";
  readonly content: string | null;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: JsonObject }[];
}

export interface RubricState {
  readonly rubric: string;
  justification: string;
  meetExpectation: boolean;
}

/** `rubric_0`, `rubric_1`, …: state rubrics first (each text once), then overall rubrics. */
export function initialRubrics(criteria: VitaEvaluationCriteria | null): Map<string, RubricState> {
  const states = new Map<string, RubricState>();
  const seen = new Set<string>();
  const texts = [...(criteria?.expected_states ?? []).flatMap((state) => state.state_rubrics ?? []), ...(criteria?.overall_rubrics ?? [])];
  for (const rubric of texts) {
    if (seen.has(rubric)) continue;
    seen.add(rubric);
    states.set(`rubric_${states.size}`, { rubric, justification: "Not evaluated yet", meetExpectation: false });
  }
  return states;
}

/** `_create_sliding_windows`: windows of `size` messages, each starting `size - overlap` after the last. */
export function slidingWindows<T>(messages: readonly T[], size = WINDOW_SIZE, overlap = WINDOW_OVERLAP): T[][] {
  if (messages.length <= size) return [[...messages]];
  const windows: T[][] = [];
  for (let i = 0; i < messages.length; i += size - overlap) {
    windows.push(messages.slice(i, i + size));
    if (i + size >= messages.length) break;
  }
  return windows;
}

/** `_format_window_content`: `[n] role: content` with the global index; tool calls as `name(k='v')`. */
export function formatWindow(window: readonly VitaMessage[], startIndex: number): string {
  const lines: string[] = [];
  window.forEach((message, i) => {
    let content = message.content ?? "";
    const calls = (message.role === "assistant" ? (message.toolCalls ?? []) : []).map((call) => {
      const args = fromJson(call.arguments) as PyDict;
      return `${call.name}(${[...args].map(([key, value]) => `${key}=${pyRepr(value)}`).join(", ")})`;
    });
    if (calls.length > 0) content = content === "" ? calls.join(".") : `${content} ${calls.join(".")}`;
    if (content !== "") lines.push(`[${startIndex + i + 1}] ${message.role}: ${content}`);
  });
  return lines.join("\n");
}

/** `json.dumps(rubrics, ensure_ascii=False, indent=2)` of the current states (JSON.stringify writes the same for these). */
export function formatRubrics(states: ReadonlyMap<string, RubricState>): string {
  return JSON.stringify(
    [...states].map(([key, state]) => ({ rubric_idx: key, rubric: state.rubric, justification: state.justification, meetExpectation: state.meetExpectation })),
    null,
    2,
  );
}

/** Upstream's English sliding-window judge prompt; the answer format asks for our strict JSON object. */
export function windowSystemPrompt(task: VitaTask, windowIndex: number, totalWindows: number): string {
  const envInfo = `{'system_time': ${pyRepr(agentTime(task.time))}, 'database': []}`;
  return `# System Information
${envInfo}

# User Complete Instruction
${task.instructions}

# Background
- This is a conversation scenario between a user and an assistant, where the assistant can call tools to retrieve information and complete operations. Tool return results will start with "tool"
- You need to evaluate whether the user instruction has been completed. The user's complete instruction has been broken down into several scoring points (rubrics), and you only need to judge whether each scoring point is satisfied
- Due to the large number of conversation turns, we use sliding window evaluation, where each window shows 10 conversation turns with 2 overlapping turns between windows, but rubric status will be preserved across windows
- You are evaluating window ${windowIndex} (out of ${totalWindows} windows total)
- <window_content> contains the conversation content for the current window
- <current_rubrics> contains the current status of all scoring points (true means satisfied, false means not satisfied, all scoring points have an initial status of false)

# Task
- Update the scoring point rubric status based on the conversation content in the current window
- You can update the status from false to true, if and only if the assistant completed the goal in this window
- You can also update true back to false, if and only if the assistant overturned a previous correct conclusion in this window (but note: if the user's needs themselves changed, such as actively canceling after placing an order, the original evaluation of the ordering requirement should not be overturned)
- You can refer to the "User Complete Instruction" to understand the progress of the current conversation window and avoid unnecessary modifications

# Important Notes
- Important: All evaluations are based on whether the assistant's responses and tool call requests complete the goals in the rubrics. User expressions in the conversation are only considered as guidance for the assistant and do not directly affect evaluation standards. Everything is based on the rubric fields!
- Important: Query tool return results are only visible to the assistant and do not represent content recommended by the assistant to users, so they do not directly affect evaluation results either. Everything must be based on the assistant's responses to users after obtaining information! Also note that the Assistant cannot fabricate Tool return results!
- Important: For order-related rubrics (involving order details that must generate orders), you must confirm whether the assistant actually completed the ordering operation. The assistant may mistakenly believe they completed the ordering operation when in fact the tool call failed; or situations where the user states they "can place the order themselves," etc., should all be considered as not meeting the requirements
- For rubrics involving order details such as product quantity or delivery time, the original rubric requirements must be strictly met (no deviation in product quantities, delivery must not be later than the expected time). User compromise behavior does not affect evaluation results (for example, when a user states "fewer items is okay", "I have no objections to the order content" or "later delivery is fine" etc.). These situations should still be considered as not meeting the requirements
- For rubrics involving text content matching of addresses or order notes, apply the functional equivalence principle: as long as the actual content can achieve the same function (such as roughly locating the delivery location or conveying the customer's main needs), it is considered to meet the requirements even if the expression is not completely consistent or lacks some details
- If the current window does not involve a certain rubric, keep its original status unchanged; if the current window involves a rubric but cannot fully determine it, key information can be recorded in the justification for future judgment
- In the justification, record key information related to the current rubric and its corresponding round [x] in an appending manner. If status modifications occur, record the reason using concise language. If the status is not modified, restate the previous reason

# Format Requirements
- Your response is a JSON object {"rubrics": [...]} with one entry per rubric, each with these fields:
- \`rubric_idx\`: Unique identifier for the rubric
- \`rubric\`: Restatement of the rubric
- \`justification\`: Explanation of status changes
- \`meetExpectation\`: Updated status (true or false)`;
}

/** The judge's user message for one window, as upstream builds it. */
export function windowUserPrompt(window: readonly VitaMessage[], startIndex: number, states: ReadonlyMap<string, RubricState>): string {
  return `\n# Input\n<window_content>\n${formatWindow(window, startIndex)}\n</window_content>\n\n<current_rubrics>\n${formatRubrics(states)}\n</current_rubrics>\n`;
}

/** The judge's answer: every rubric's new state. */
export const WindowVerdict = z
  .object({
    rubrics: z.array(z.object({ rubric_idx: z.string(), rubric: z.string(), justification: z.string(), meetExpectation: z.boolean() }).strict()),
  })
  .strict();
export type WindowVerdict = z.infer<typeof WindowVerdict>;

/** The OpenAI `response_format` that makes a judge answer a `WindowVerdict`. */
export const WINDOW_RESPONSE_FORMAT = strictJsonSchema("rubric_states", {
  type: "object",
  additionalProperties: false,
  required: ["rubrics"],
  properties: {
    rubrics: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["rubric_idx", "rubric", "justification", "meetExpectation"],
        properties: { rubric_idx: { type: "string" }, rubric: { type: "string" }, justification: { type: "string" }, meetExpectation: { type: "boolean" } },
      },
    },
  },
});

/** Parse a judge's answer strictly; anything else is a failure worth asking again. */
export function parseWindowVerdict(text: string): WindowVerdict {
  return WindowVerdict.parse(JSON.parse(text));
}

/** A judge: the window's system and user messages in, its raw answer out (it may throw). */
export type VitaJudge = (prompt: { readonly system: string; readonly user: string }) => Promise<string>;

/** How a conversation ended. The first three score 0 without a judge, as upstream. */
export type VitaTermination = "max_steps" | "too_many_errors" | "invalid_agent_message" | "user_stop" | "agent_stop";

export interface VitaVerdict {
  /** 1 or 0; null when the judge failed on some window (the trial is masked, never scored 0). */
  readonly reward: number | null;
  /** The share of rubrics met (upstream's `NL_ASSERTION` breakdown). */
  readonly rubricScore: number | null;
  readonly rubrics: readonly RubricState[];
  readonly windows: number;
  readonly note?: string;
  /** Why the trial is masked. */
  readonly masked?: string;
}

export interface EvaluateOptions {
  readonly task: VitaTask;
  readonly messages: readonly VitaMessage[];
  readonly termination: VitaTermination;
  readonly judge: VitaJudge;
  /** Asks per window before the trial is masked. */
  readonly maxAttempts?: number;
  readonly backoff?: Backoff;
}

const PREMATURE: ReadonlySet<VitaTermination> = new Set(["max_steps", "too_many_errors", "invalid_agent_message"]);

/** Score one trial as upstream's `evaluate_simulation` with `evaluation_type="trajectory"`. */
export async function evaluateTrial(options: EvaluateOptions): Promise<VitaVerdict> {
  const { task, messages, termination } = options;
  if (PREMATURE.has(termination)) return { reward: 0, rubricScore: 0, rubrics: [], windows: 0, note: `terminated prematurely: ${termination}` };
  let states = initialRubrics(task.criteria);
  if (states.size === 0) return { reward: 1, rubricScore: 1, rubrics: [], windows: 0, note: "no rubric to evaluate" };
  const windows = slidingWindows(messages);
  const step = WINDOW_SIZE - WINDOW_OVERLAP;
  const maxAttempts = options.maxAttempts ?? 3;
  for (const [i, window] of windows.entries()) {
    const prompt = { system: windowSystemPrompt(task, i + 1, windows.length), user: windowUserPrompt(window, i * step, states) };
    let verdict: WindowVerdict | undefined;
    let failure = "";
    for (let attempt = 0; attempt < maxAttempts && verdict === undefined; attempt++) {
      if (attempt > 0) await sleep(backoffDelay(attempt - 1, options.backoff ?? { initialDelayMs: 1000, maxDelayMs: 30_000, factor: 2 }));
      try {
        verdict = parseWindowVerdict(await options.judge(prompt));
      } catch (error) {
        failure = error instanceof Error ? error.message.split("\n")[0]! : String(error);
      }
    }
    if (verdict === undefined) {
      return {
        reward: null,
        rubricScore: null,
        rubrics: [...states.values()],
        windows: windows.length,
        masked: `judge failed on window ${i + 1} after ${maxAttempts} attempts: ${failure}`,
      };
    }
    states = new Map([...states].map(([key, state]) => [key, { ...state }]));
    for (const result of verdict.rubrics) {
      const state = states.get(result.rubric_idx);
      if (state === undefined) continue;
      state.justification = result.justification;
      state.meetExpectation = result.meetExpectation;
    }
  }
  const rubrics = [...states.values()];
  const met = rubrics.filter((state) => state.meetExpectation).length;
  return { reward: met === rubrics.length ? 1 : 0, rubricScore: met / rubrics.length, rubrics, windows: windows.length };
}
