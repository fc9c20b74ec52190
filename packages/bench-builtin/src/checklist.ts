import type { Checklist, ChecklistItem, JsonObject, RewardVerdict, Task } from "@envace/protocol";
import { canonicalJson } from "@envace/records";
import { aggregateTurnItems, type DialogueSource, type RewardFunction } from "@envace/rewards";
import { executionResultText, toolCallText } from "./format.js";
import { runGold, type GoldRun } from "./gold.js";
import { builtinMeta } from "./meta.js";
import { WRITE_TOOLS } from "./tools.js";
import { mentions, transcriptOf, type Transcript, type TranscriptCall } from "./transcript.js";

/** A rule-checkable checklist item: true when the transcript satisfies it. */
export type TranscriptPredicate = (transcript: Transcript) => boolean;

/** A checklist item together with the predicate that decides it without a judge. */
export interface ChecklistRule {
  item: ChecklistItem;
  predicate: TranscriptPredicate;
}

/** Weights are rounded so they read cleanly; each turn still sums to 1 within the protocol's tolerance. */
const round = (weight: number) => Math.round(weight * 1e6) / 1e6;
const READ_SHARE = 0.3;
const WRITE_SHARE = 0.4;
const REPLY_SHARE = 0.3;

const WRITE_LIST = "buy, cancel or pay";

function isWrite(call: TranscriptCall): boolean {
  return (WRITE_TOOLS as readonly string[]).includes(call.name);
}

function sameCall(a: TranscriptCall, name: string, args: JsonObject): boolean {
  return a.name === name && a.arguments !== null && canonicalJson(a.arguments) === canonicalJson(args);
}

function firstWrite(transcript: Transcript): number {
  const index = transcript.calls.findIndex(isWrite);
  return index === -1 ? transcript.calls.length : index;
}

function describeCall(name: string, args: JsonObject): string {
  return `${name}(${Object.entries(args)
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(", ")})`;
}

/**
 * The checklist rules of a gold run. One item per lookup (made before any write), one for the
 * writes (exactly the gold writes, in order) or for making no write at all, and one for the
 * reply (states every required fact). Writes depend on the lookups, the reply on the writes, so
 * with `dependence` honoured a lucky write without its lookups earns nothing. Every item passing
 * implies the verifiable outcome check passes: reads never change state, and the reply item
 * uses the same phrase matcher.
 */
function rulesOf(run: GoldRun, required: readonly string[][]): ChecklistRule[] {
  const reads = run.calls.filter(({ call }) => !isWrite(call));
  const writes = run.calls.filter(({ call }) => isWrite(call));
  const step = (id: string) => run.calls.findIndex(({ call }) => call.id === id);
  const rules: ChecklistRule[] = [];

  const readIds = reads.map(({ call, result }) => {
    const id = `read-${call.name}`;
    const target = describeCall(call.name, call.arguments);
    rules.push({
      item: {
        id,
        evidence: [
          { turn: 0, step: step(call.id), from: "assistant", snippet: toolCallText(call) },
          { turn: 0, step: step(call.id), from: "tool", snippet: executionResultText(result) },
        ],
        focus_on: "assistant.tool_calls",
        question: `Before changing anything, did the assistant call ${target}?`,
        pass_condition: `A call ${target} comes before any ${WRITE_LIST} call.`,
        failure_examples: [`Calls ${WRITE_LIST} before ${target}.`, `Never calls ${call.name}, or calls it with different arguments.`],
        required_for_next_turn: false,
        dependence: [],
        weight: round(READ_SHARE / reads.length),
      },
      predicate: (t) => t.calls.slice(0, firstWrite(t)).some((c) => sameCall(c, call.name, call.arguments)),
    });
    return id;
  });

  let outcomeId: string;
  if (writes.length > 0) {
    outcomeId = "writes";
    const list = writes.map(({ call }) => describeCall(call.name, call.arguments)).join(", then ");
    rules.push({
      item: {
        id: outcomeId,
        evidence: writes.map(({ call }) => ({ turn: 0, step: step(call.id), from: "assistant", snippet: toolCallText(call) })),
        focus_on: "assistant.tool_calls",
        question: `Did the assistant make exactly the requested change: ${list}?`,
        pass_condition: `The ${WRITE_LIST} calls are exactly, in order: ${list}.`,
        failure_examples: ["A write with a different argument (quantity, amount, order id, user or item).", "A missing, repeated or extra write."],
        required_for_next_turn: true,
        dependence: readIds,
        weight: WRITE_SHARE,
      },
      predicate: (t) => {
        const made = t.calls.filter(isWrite);
        return made.length === writes.length && writes.every(({ call }, i) => sameCall(made[i]!, call.name, call.arguments));
      },
    });
  } else {
    outcomeId = "no-write";
    const last = run.calls.at(-1);
    rules.push({
      item: {
        id: outcomeId,
        evidence: last ? [{ turn: 0, step: run.calls.length - 1, from: "tool", snippet: executionResultText(last.result) }] : [],
        focus_on: "assistant.tool_calls",
        question: `The lookups show the request cannot be done (${run.solution.outcome}). Did the assistant avoid every ${WRITE_LIST} call?`,
        pass_condition: `No ${WRITE_LIST} call is made.`,
        failure_examples: [`Attempts the ${WRITE_LIST} call anyway, and it is rejected.`],
        required_for_next_turn: true,
        dependence: readIds,
        weight: WRITE_SHARE,
      },
      predicate: (t) => !t.calls.some(isWrite),
    });
  }

  const facts = required.map((phrasings) => phrasings.map((p) => `"${p}"`).join(" or ")).join("; and ");
  rules.push({
    item: {
      id: "reply",
      evidence: [{ turn: 0, step: run.calls.length, from: "assistant", snippet: run.solution.reply }],
      focus_on: "assistant.content.user_visible_reply",
      question: `Does the final reply tell the user the result: ${run.solution.reply}`,
      pass_condition: `The user-visible reply contains ${facts}.`,
      failure_examples: ["Ends without a reply to the user.", "Claims success or failure without the stated fact."],
      required_for_next_turn: false,
      dependence: [outcomeId],
      weight: REPLY_SHARE,
    },
    predicate: (t) => required.every((phrasings) => mentions(t.reply, phrasings)),
  });
  return rules;
}

const rulesCache = new WeakMap<object, ChecklistRule[]>();

/** The checklist rules of a built-in task, derived from its metadata (once per metadata object). */
export function checklistRules(task: Task): ChecklistRule[] {
  const meta = builtinMeta(task);
  let rules = rulesCache.get(meta);
  if (!rules) {
    rules = rulesOf(runGold(meta.world, meta.request), meta.required);
    rulesCache.set(meta, rules);
  }
  return [...rules];
}

/** The task's CM2 checklist (one checklist, one turn) as stored in `Task.checklists[0]`. */
export function checklistOf(run: GoldRun, required: readonly string[][]): Checklist {
  return [rulesOf(run, required).map((rule) => rule.item)];
}

/** The programmatic predicates of a task's checklist, by item id. */
export function checklistPredicates(task: Task): Record<string, TranscriptPredicate> {
  return Object.fromEntries(checklistRules(task).map((rule) => [rule.item.id, rule.predicate]));
}

export interface ChecklistScoreOptions {
  /** Count an item only if the items it depends on count (default true; CM2 upstream ignores it). */
  dependence?: boolean;
}

/**
 * Score a rollout or dialogue with the checklist's predicates instead of a judge, aggregated by
 * `@envace/rewards` exactly as its checklist judge does (`dependence: "turn"`, or `"ignore"`).
 * A built-in task has one checklist and one user turn, so the score is the sum of the weights of
 * the items that count. Components hold 1 or 0 per item id.
 */
export function scoreChecklist(task: Task, source: DialogueSource, options: ChecklistScoreOptions = {}): RewardVerdict {
  const rules = checklistRules(task);
  const transcript = transcriptOf(source);
  const items = rules.map((rule) => rule.item);
  // The predicates read the whole turn, so one step row stands for every step.
  const passed = rules.map((rule) => rule.predicate(transcript));
  const { countedAt, score } = aggregateTurnItems(items, [passed], options.dependence === false ? "ignore" : "turn");
  const components = Object.fromEntries(items.map((item, i) => [item.id, countedAt[i] === null ? 0 : 1]));
  return { status: "scored", value: score, components };
}

/** `scoreChecklist` as an `@envace/rewards` `RewardFunction`. */
export function checklistReward(options: ChecklistScoreOptions = {}): RewardFunction {
  return (trajectory, task) => {
    try {
      return Promise.resolve(scoreChecklist(task, trajectory, options));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
}
