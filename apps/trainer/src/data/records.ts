import type { Cm2Record, JsonObject, RecordError, Task } from "@envace/protocol";
import { cm2ToTask, type ChecklistJudge } from "@envace/rewards";
import { DEFAULT_REHEARSE_INSTRUCTIONS, replayReference, type RehearsePromptOptions } from "@envace/trajectory";
import type { Domain } from "../setup/domain.js";
import type { DialogueExample } from "../sft.js";
import { throwIfAny } from "./errors.js";
import { referenceGold, type FieldProblem } from "./gold.js";

/** A checked CM2 record and where it came from, so later problems can still name its file and line or row. */
export interface SourcedRecord {
  record: Cm2Record;
  /** Where the record is in its file, for messages about another record (`line 3`, `row 5`). */
  where: string;
  /** The record's problems as an error naming its file, line or row, and fields. */
  error: (problems: readonly FieldProblem[]) => RecordError;
  /** Merged into the task's metadata. */
  metadata: JsonObject;
}

/** The tasks of one data file and their gold SFT examples, by task id. */
export interface Split {
  tasks: Task[];
  gold: Map<string, DialogueExample[]>;
}

export const EMPTY_SPLIT: Split = { tasks: [], gold: new Map() };

/**
 * Tasks from checked records (see `cm2ToTask`), each with the gold examples of its reference
 * dialogue. Duplicate uuids and reference turns that cannot be gold targets are errors; every bad
 * record is reported at once in a `DataError`, and nothing is returned unless all are good.
 */
export function splitOf(records: readonly SourcedRecord[]): Split {
  const { split, errors } = checkRecords(records);
  throwIfAny(errors);
  return split;
}

/** As `splitOf`, but returns the errors (one per bad record) with the split of the good records. */
export function checkRecords(records: readonly SourcedRecord[]): { split: Split; errors: RecordError[] } {
  const errors: RecordError[] = [];
  const first = new Map<string, SourcedRecord>();
  const tasks: Task[] = [];
  const gold = new Map<string, DialogueExample[]>();
  for (const sourced of records) {
    const problems: FieldProblem[] = [];
    const { uuid } = sourced.record;
    const earlier = first.get(uuid);
    if (earlier === undefined) first.set(uuid, sourced);
    else problems.push({ path: "uuid", message: `duplicate uuid "${uuid}" (also at ${earlier.where})` });
    const task = cm2ToTask(sourced.record, sourced.metadata);
    const reference = referenceGold(task);
    problems.push(...reference.problems);
    if (problems.length > 0) {
      errors.push(sourced.error(problems));
      continue;
    }
    tasks.push(task);
    gold.set(task.id, reference.examples);
  }
  return { split: { tasks, gold }, errors };
}

/**
 * A trainer domain over CM2 data. `environment` is absent: the records carry reference
 * dialogues, not tools that run, so training rehearses and evaluation has no real environment.
 */
export interface DataDomain extends Domain {
  /** Releases what the domain holds (the judge's in-flight calls and files). */
  close(): Promise<void>;
}

export interface RecordDomainOptions {
  /** Scores rollouts and gates replayed user turns. The domain owns it: `close()` closes it. */
  judge: ChecklistJudge;
  /** How the Rehearse role is prompted. Default: every section of `@envace/trajectory`'s prompt. */
  rehearsePrompt?: RehearsePromptOptions;
}

/** A `DataDomain` over a training split and a held-out split (possibly empty). */
export function recordDomain(name: string, train: Split, test: Split, options: RecordDomainOptions): DataDomain {
  const { judge } = options;
  const rehearsePrompt = options.rehearsePrompt ?? {};
  const gold = new Map([...test.gold, ...train.gold]);
  return {
    name,
    train: train.tasks,
    test: test.tasks,
    reward: judge.reward,
    gold: (task) => gold.get(task.id) ?? referenceGold(task).examples,
    corpus: () => recordCorpus(train, rehearsePrompt),
    rehearsePrompt,
    toolsInSystemPrompt: false,
    // Later user turns are replayed only if the judge passes the turn's required items (CM2's
    // rule). When the judge fails there, the turns never reached cannot be scored: mask the rollout.
    users: replayReference({
      gate: async ({ messages, task, signal }) => {
        const decision = await judge.mayReplayNextTurn(messages, task, signal ? { signal } : {});
        return decision.reason === "judge_failed" ? { masked: `the judge failed while gating the next user turn` } : decision.replay;
      },
    }),
    close: () => judge.close(),
  };
}

/**
 * Texts to train a tokenizer on: the Rehearse instructions, every distinct tool spec, every
 * message text of the training dialogues and every gold target (which spell the `<tool_call>`
 * and `<execution_result>` forms the model writes). Held-out dialogues are left out.
 */
export function* recordCorpus(train: Split, rehearsePrompt: RehearsePromptOptions): Generator<string> {
  const instructions = rehearsePrompt.sections?.instructions ?? true;
  if (instructions !== false) yield typeof instructions === "string" ? instructions : DEFAULT_REHEARSE_INSTRUCTIONS;
  const specs = new Set<string>();
  for (const task of train.tasks) {
    for (const tool of task.tools) {
      const spec = JSON.stringify(tool);
      if (specs.has(spec)) continue;
      specs.add(spec);
      yield spec;
    }
    for (const message of task.reference ?? task.messages) {
      if (message.role === "assistant" && message.reasoning_content) yield message.reasoning_content;
      if (message.content) yield message.content;
    }
    for (const example of train.gold.get(task.id) ?? []) yield example.text;
  }
}
