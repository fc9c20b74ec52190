import type { Message, Task } from "@envace/protocol";
import { flattenConversation, unreadRehearseEnding } from "@envace/trajectory";
import { callText, renderAttempt, terminationText, type AttemptDigest } from "./attempt.js";
import { asText, field, readTaggedObject } from "./structured-output.js";

/**
 * The policy's judgement of one rehearsal attempt. `source: "fallback"` marks an assessment built
 * deterministically from the attempt because the reflect output could not be read (`problem` says
 * why) or the prompt did not fit the context.
 */
export interface Assessment {
  /** Did the attempt do what was asked? `null` when unknown (fallback assessments never guess). */
  reachedGoal: boolean | null;
  /** Where the attempt went wrong; "" when nowhere. */
  wentWrong: string;
  /** What to do differently in the real run; "" when nothing. */
  revision: string;
  source: "policy" | "fallback";
  problem?: string;
}

export const DEFAULT_REFLECT_INSTRUCTIONS = `You review one private rehearsal of a tool-using agent. Before acting for real, the agent tried the task in its head: it chose tool calls and predicted every tool result itself. Nothing in the rehearsal happened, and the real results may differ.

Judge the attempt:
- reached_goal: did the attempt do what the user asked, with every precondition checked before any change? true or false.
- went_wrong: where it went wrong (a call predicted to fail, a missing lookup, a wrong or missing reply), or "" if nowhere.
- revision: what to do differently in the real run, in one or two sentences, or "" if nothing.

Do not call tools. Answer only with <assessment>{"reached_goal": true, "went_wrong": "…", "revision": "…"}</assessment>.`;

/** The task as the reflect and summarize roles see it: its starting conversation and its tools. */
export function taskText(task: Task): string {
  const tools = task.tools.map((tool) => tool.function.name).join(", ");
  return `${flattenConversation(task.messages)}\n\n(tools: ${tools.length > 0 ? tools : "none"})`;
}

/** The prompt of the reflect role for one attempt. */
export function buildReflectPrompt(task: Task, attempt: AttemptDigest, instructions = DEFAULT_REFLECT_INSTRUCTIONS): Message[] {
  return [
    { role: "system", content: instructions },
    {
      role: "user",
      content: `## Task\n${taskText(task)}\n\n## Rehearsal attempt ${attempt.index + 1} (predicted, not real)\n${renderAttempt(attempt)}`,
    },
  ];
}

const REACHED = ["reached_goal", "goal_reached", "reached", "success", "succeeded"];
const WRONG = ["went_wrong", "wrong", "mistakes", "errors", "issues"];
const REVISION = ["revision", "revise", "suggestion", "next_time", "improvement", "plan"];

/**
 * Read a reflect output: `<assessment>{"reached_goal": …, "went_wrong": …, "revision": …}</assessment>`.
 * Lenient where meaning is clear: key spelling (`reachedGoal`, `goal_reached`, …), `"yes"`/`"no"`
 * for the verdict, lists of strings for the texts, a missing tag. Anything else is a `problem`.
 */
export function parseAssessment(text: string): { ok: true; assessment: Assessment } | { ok: false; problem: string } {
  const read = readTaggedObject(text, "assessment");
  if (!read.ok) return read;
  const reached = field(read.value, REACHED);
  const wrong = field(read.value, WRONG);
  const revision = field(read.value, REVISION);
  if (!reached.found && !revision.found) return { ok: false, problem: "the assessment has neither reached_goal nor revision" };
  const verdict = reached.found ? verdictOf(reached.value) : null;
  if (verdict === undefined) return { ok: false, problem: `reached_goal is ${JSON.stringify(reached.value)}, not true or false` };
  const wentWrong = wrong.found ? asText(wrong.value) : "";
  const revise = revision.found ? asText(revision.value) : "";
  if (wentWrong === undefined) return { ok: false, problem: "went_wrong is not text" };
  if (revise === undefined) return { ok: false, problem: "revision is not text" };
  return { ok: true, assessment: { reachedGoal: verdict, wentWrong, revision: revise, source: "policy" } };
}

/**
 * The reflect output that states `assessment`, in the form `parseAssessment` reads first: the
 * target of a supervised reflect row (a judgement known from the real outcome).
 */
export function reflectOutput(assessment: Pick<Assessment, "reachedGoal" | "wentWrong" | "revision">): string {
  return `<assessment>${JSON.stringify({ reached_goal: assessment.reachedGoal, went_wrong: assessment.wentWrong, revision: assessment.revision })}</assessment>`;
}

function verdictOf(value: unknown): boolean | null | undefined {
  if (typeof value === "boolean") return value;
  if (value === null) return null;
  if (typeof value !== "string") return undefined;
  const word = value.trim().toLowerCase();
  if (["true", "yes", "y"].includes(word)) return true;
  if (["false", "no", "n"].includes(word)) return false;
  if (["unknown", "unclear", ""].includes(word)) return null;
  return undefined;
}

/**
 * An assessment built from the attempt alone, when the policy's could not be used: the calls
 * predicted to fail and an abnormal ending are what went wrong; the revision is to avoid those
 * calls. An ending is no revision: a malformed output or a limit sampled in rehearsal says
 * nothing about the task, and canned advice in the memory would only take the real run's context.
 * Whether the goal was reached is left unknown.
 */
export function fallbackAssessment(attempt: AttemptDigest, problem: string): Assessment {
  const wrong: string[] = [];
  const revise: string[] = [];
  for (const event of attempt.events) {
    // An unreadable prediction is no prediction; the ending below says what happened.
    if (event.kind !== "call" || event.result.status === "ok" || event.source === "unreadable") continue;
    const call = callText(event.name, event.arguments);
    wrong.push(`${call} was predicted to fail (${event.result.error.code})`);
    revise.push(`avoid ${call}`);
  }
  const reason = attempt.termination.reason;
  // An ending on an unreadable prediction is the rehearsal's failure, not the agent's.
  if (reason !== "agent_stop" && reason !== "user_stop" && unreadRehearseEnding(attempt.termination) === undefined)
    wrong.push(terminationText(attempt.termination));
  return { reachedGoal: null, wentWrong: wrong.join("; "), revision: revise.join("; "), source: "fallback", problem };
}
