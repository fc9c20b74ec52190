import type { Message, Task } from "@envace/protocol";
import { callText, type PredictedFailure } from "./attempt.js";
import { RehearsalSettingError } from "./setting.js";
import { renderAssessedAttempt, assessmentText, type AssessedAttempt, type Summary } from "./summarize.js";
import { truncateToTokens, type TokenCounter } from "./tokens.js";

/**
 * The rehearsal memory: what one committed execution is told about the private rehearsals.
 * `text` is added to the committed context verbatim ("" adds nothing).
 */
export interface RehearsalMemory {
  text: string;
  /** Tokens of `text` by the counter below. */
  tokens: number;
  /** The budget the text was kept within; `null` for none. */
  budget: number | null;
  /** Whether `tokens` was counted with the policy's tokenizer (else estimated). */
  exactTokens: boolean;
  /** The plan as kept (possibly cut short). */
  plan: string;
  /** The lessons kept. */
  lessons: string[];
  /** Every call predicted to fail, kept in the text or not (the safe-write gate uses all of them). */
  predictedFailures: PredictedFailure[];
  /** Predicted failures shown in the text. */
  shownFailures: number;
  /** Whether anything was shortened or left out to meet the budget. */
  compressed: boolean;
  summarySource: Summary["source"];
}

const HEADER = "## Rehearsal memory\nYou rehearsed this task privately before acting. These are your own predictions, not real results.";
const SHORT_HEADER = "## Rehearsal memory (your predictions, not real)";

interface Parts {
  header: string;
  failures: { failure: PredictedFailure; detailed: boolean }[];
  plan: string;
  lessons: string[];
}

function failureLine(failure: PredictedFailure, detailed: boolean, attempts: number): string {
  const times = attempts > 1 ? ` [${failure.failedIn.length}/${attempts} attempts]` : "";
  const detail = detailed && failure.message.length > 0 ? ` (${failure.message})` : "";
  return `- ${callText(failure.name, failure.arguments)}: ${failure.code}${detail}${times}`;
}

function render(parts: Parts, attempts: number): string {
  const lines = [parts.header];
  if (parts.failures.length > 0) {
    lines.push("Predicted to fail:", ...parts.failures.map((f) => failureLine(f.failure, f.detailed, attempts)));
  }
  if (parts.plan.length > 0) lines.push(`Plan: ${parts.plan}`);
  if (parts.lessons.length > 0) lines.push("Lessons:", ...parts.lessons.map((lesson) => `- ${lesson}`));
  return lines.join("\n");
}

export interface BuildMemoryOptions {
  summary: Summary;
  predictedFailures: readonly PredictedFailure[];
  /** Number of attempts the failures were merged over. */
  attempts: number;
  /** Token budget of the memory text; `undefined` or `null` for none. */
  budget?: number | null | undefined;
  counter: TokenCounter;
}

/**
 * Render the memory and keep it within the budget. Compression keeps the conclusions and gives up
 * the rest, in this order, until the text fits: lessons (last first); the error messages of
 * predicted failures and the long header; predicted failures of read-only calls; the plan (cut
 * short, then dropped); predicted failures of writes (last first). If not even the header fits,
 * or nothing is left to say, the memory is empty. Predicted write failures survive longest, then
 * the plan.
 */
export function buildMemory(options: BuildMemoryOptions): RehearsalMemory {
  const { summary, counter, attempts } = options;
  const budget = options.budget ?? null;
  const failures = [...options.predictedFailures].sort((a, b) => Number(b.write) - Number(a.write));
  const parts: Parts = {
    header: HEADER,
    failures: failures.map((failure) => ({ failure, detailed: true })),
    plan: summary.plan,
    lessons: [...summary.lessons],
  };
  const fits = (): boolean => budget === null || counter.count(render(parts, attempts)) <= budget;
  let compressed = false;
  const step = (change: () => boolean): void => {
    while (!fits() && change()) compressed = true;
  };

  step(() => parts.lessons.pop() !== undefined);
  step(() => {
    if (parts.header === SHORT_HEADER && parts.failures.every((f) => !f.detailed)) return false;
    parts.header = SHORT_HEADER;
    for (const f of parts.failures) f.detailed = false;
    return true;
  });
  step(() => {
    const last = parts.failures.findLastIndex((f) => !f.failure.write);
    if (last < 0) return false;
    parts.failures.splice(last, 1);
    return true;
  });
  if (!fits() && budget !== null && parts.plan.length > 0) {
    compressed = true;
    const full = parts.plan;
    parts.plan = "";
    const spare = budget - counter.count(render(parts, attempts));
    // Token counts of joined text are not exactly additive: shrink until the whole fits.
    for (let allowance = spare - 1; allowance > 0; allowance -= 1) {
      parts.plan = truncateToTokens(full, allowance, counter);
      if (fits()) break;
      parts.plan = "";
    }
  }
  step(() => parts.failures.pop() !== undefined);

  const empty = parts.failures.length === 0 && parts.plan.length === 0 && parts.lessons.length === 0;
  // A header with nothing under it would only take context.
  let text = empty ? "" : render(parts, attempts);
  if (budget !== null && counter.count(text) > budget) {
    compressed = true;
    text = "";
    parts.failures = [];
    parts.plan = "";
    parts.lessons = [];
  }
  return {
    text,
    tokens: text.length === 0 ? 0 : counter.count(text),
    budget,
    exactTokens: counter.exact,
    plan: parts.plan,
    lessons: parts.lessons,
    predictedFailures: [...options.predictedFailures],
    shownFailures: parts.failures.length,
    compressed,
    summarySource: summary.source,
  };
}

/**
 * What sequential attempt k sees of attempts 0…k-1: each attempt's calls with their predicted
 * results, then its assessment. Within `budget`, results are cut to 60 characters, then the
 * call-by-call transcripts give way to the assessments alone, then the earliest attempts go.
 */
export function earlierAttemptsNote(attempts: readonly AssessedAttempt[], budget: number | null | undefined, counter: TokenCounter): string {
  if (attempts.length === 0) return "";
  const head = "## Your earlier private rehearsals of this task (predicted, not real)";
  const full = (list: readonly AssessedAttempt[], maxResultChars?: number): string =>
    [head, ...list.map((a) => renderAssessedAttempt(a, maxResultChars === undefined ? {} : { maxResultChars }))].join("\n\n");
  const brief = (list: readonly AssessedAttempt[]): string =>
    [head, ...list.map((a) => `### Attempt ${a.digest.index + 1}\n${assessmentText(a.assessment)}`)].join("\n");
  const fits = (text: string): boolean => budget === null || budget === undefined || counter.count(text) <= budget;
  for (const candidate of [full(attempts), full(attempts, 60), brief(attempts)]) if (fits(candidate)) return candidate;
  for (let from = 1; from < attempts.length; from += 1) {
    const text = brief(attempts.slice(from));
    if (fits(text)) return text;
  }
  const last = brief(attempts.slice(-1));
  return fits(last) ? last : truncateToTokens(last, budget ?? 0, counter);
}

/** Where a note (the memory, earlier attempts) goes in a task's starting context. */
export type NotePlacement = "system" | "user";

/**
 * The task with `note` added to its starting context: appended to the first system message (one
 * is added at the front when there is none), or to the last user message. Adding no message keeps
 * reference replays aligned. An empty note returns the task unchanged.
 */
export function withNote(task: Task, note: string, placement: NotePlacement = "system"): Task {
  if (note.length === 0) return task;
  const messages: Message[] = [...task.messages];
  if (placement === "system") {
    const first = messages[0];
    if (first?.role === "system") messages[0] = { ...first, content: `${first.content}\n\n${note}` };
    else messages.unshift({ role: "system", content: note });
  } else {
    const at = messages.findLastIndex((m) => m.role === "user");
    const user = messages[at];
    if (user?.role !== "user") throw new RehearsalSettingError(`task ${task.id}: placement "user" needs a user message in the starting context`);
    messages[at] = { ...user, content: `${user.content}\n\n${note}` };
  }
  return { ...task, messages };
}
