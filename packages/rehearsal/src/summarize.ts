import type { Message, Task } from "@envace/protocol";
import { callText, renderAttempt, type AttemptDigest } from "./attempt.js";
import { taskText, type Assessment } from "./reflect.js";
import { asText, field, readTaggedObject } from "./structured-output.js";

/**
 * The policy's condensed conclusions from all attempts. `source: "fallback"` marks a summary
 * built deterministically from the attempts and their assessments (`problem` says why).
 */
export interface Summary {
  /** What to do in the real run. */
  plan: string;
  /** Short conclusions, most important first. */
  lessons: string[];
  source: "policy" | "fallback";
  problem?: string;
}

/** An attempt together with its assessment, as the summarize role and sequential attempts see it. */
export interface AssessedAttempt {
  digest: AttemptDigest;
  assessment: Assessment;
}

export const DEFAULT_SUMMARIZE_INSTRUCTIONS = `You condense the private rehearsals of a tool-using agent into a short memory for its real run. In each rehearsal the agent chose tool calls and predicted every result itself; nothing happened for real.

Keep only conclusions: which calls are predicted to fail and why, what must be looked up before any change, and the plan to follow. Be brief.

Do not call tools. Answer only with <memory>{"plan": "…", "lessons": ["…"]}</memory>.`;

/** One attempt with its assessment, as text. */
export function renderAssessedAttempt(attempt: AssessedAttempt, options: { maxResultChars?: number } = {}): string {
  return `### Attempt ${attempt.digest.index + 1} (predicted, not real)\n${renderAttempt(attempt.digest, options)}\n${assessmentText(attempt.assessment)}`;
}

/** An assessment as one line. */
export function assessmentText(assessment: Assessment): string {
  const verdict = assessment.reachedGoal === null ? "unknown" : assessment.reachedGoal ? "yes" : "no";
  const parts = [`goal reached: ${verdict}`];
  if (assessment.wentWrong.length > 0) parts.push(`went wrong: ${assessment.wentWrong}`);
  if (assessment.revision.length > 0) parts.push(`revision: ${assessment.revision}`);
  return `Assessment: ${parts.join("; ")}`;
}

/** The prompt of the summarize role over every assessed attempt. */
export function buildSummarizePrompt(task: Task, attempts: readonly AssessedAttempt[], instructions = DEFAULT_SUMMARIZE_INSTRUCTIONS): Message[] {
  return [
    { role: "system", content: instructions },
    {
      role: "user",
      content: `## Task\n${taskText(task)}\n\n## Rehearsals\n${attempts.map((a) => renderAssessedAttempt(a)).join("\n\n")}`,
    },
  ];
}

/**
 * Read a summarize output: `<memory>{"plan": "…", "lessons": ["…"]}</memory>`. Lenient about key
 * spelling, a missing tag, a single lesson given as a string; a plan is required.
 */
export function parseSummary(text: string): { ok: true; summary: Summary } | { ok: false; problem: string } {
  const read = readTaggedObject(text, "memory");
  if (!read.ok) return read;
  const plan = field(read.value, ["plan", "final_plan", "next_plan"]);
  if (!plan.found) return { ok: false, problem: "the memory has no plan" };
  const planText = asText(plan.value);
  if (planText === undefined || planText.length === 0) return { ok: false, problem: "the plan is empty or not text" };
  const lessons = field(read.value, ["lessons", "conclusions", "notes", "lesson"]);
  let list: string[] = [];
  if (lessons.found) {
    if (typeof lessons.value === "string") list = [lessons.value.trim()];
    else if (Array.isArray(lessons.value) && lessons.value.every((v) => typeof v === "string")) list = lessons.value.map((v) => v.trim());
    else return { ok: false, problem: "lessons is not a list of strings" };
  }
  return { ok: true, summary: { plan: planText, lessons: list.filter((l) => l.length > 0), source: "policy" } };
}

/**
 * A summary built from the attempts alone. The plan follows the last attempt the policy judged
 * successful that made no call predicted to fail (its calls in order); failing that, the last
 * revision suggested; failing that, it is empty. Lessons are the attempts' revisions (or, without
 * one, what the policy said went wrong), latest first, without repeats.
 */
export function fallbackSummary(attempts: readonly AssessedAttempt[], problem: string): Summary {
  const clean = attempts.filter((a) => a.assessment.reachedGoal === true && a.digest.events.every((e) => e.kind !== "call" || e.result.status === "ok"));
  const model = clean.at(-1);
  let plan: string;
  if (model !== undefined) {
    const calls = model.digest.events.flatMap((e) => (e.kind === "call" ? [callText(e.name, e.arguments)] : []));
    const replies = model.digest.events.some((e) => e.kind === "reply");
    plan = `as in attempt ${model.digest.index + 1}: ${calls.length > 0 ? calls.join(" → ") : "no tool calls"}${replies ? ", then reply" : ""}`;
  } else {
    plan = [...attempts].reverse().find((a) => a.assessment.revision.length > 0)?.assessment.revision ?? "";
  }
  const lessons: string[] = [];
  for (const attempt of [...attempts].reverse()) {
    // A deterministic assessment's "went wrong" only restates the attempt; the policy's is a lesson.
    const lesson = attempt.assessment.revision || (attempt.assessment.source === "policy" ? attempt.assessment.wentWrong : "");
    if (lesson.length > 0 && lesson !== plan && !lessons.includes(lesson)) lessons.push(lesson);
  }
  return { plan, lessons, source: "fallback", problem };
}
