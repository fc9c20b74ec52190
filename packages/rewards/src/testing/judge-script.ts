import type { Cm2Record } from "@envace/protocol";
import { type RecordedRequest, type Reply, reply } from "@envace/scripted-server";

/** A well-formed judge reply with the given answer. */
export function verdictReply(answer: boolean): Reply {
  return reply.text(
    JSON.stringify({
      high_level_understanding_of_the_question: "what is asked",
      analysis_of_if_focus_on: "present",
      analysis_of_pass_condition: answer ? "met" : "not met",
      analysis_of_failure_examples: "none triggered",
      answer,
    }),
  );
}

/** Which item, turn and step a judge request is about, read back from its prompt. */
export interface JudgeTarget {
  item: string;
  turn: number;
  step: number;
}

/**
 * A judge that answers from a table: `answers["<turn>/<item id>"][step]`. Requests are recorded
 * with their target; `faults["<turn>/<item>/<step>"]` is a queue of replies served before the
 * real answer (one per attempt), to inject failures into chosen calls.
 */
export class VerdictScript {
  readonly calls: JudgeTarget[] = [];
  readonly faults = new Map<string, Reply[]>();
  private readonly itemsByQuestion = new Map<string, string>();
  private active = 0;
  /** The most requests this judge had in flight at once. */
  maxInFlight = 0;

  constructor(
    records: readonly Cm2Record[],
    private readonly answers: Readonly<Record<string, readonly boolean[]>>,
    private readonly latencyMs = 0,
  ) {
    for (const record of records) {
      for (const checklist of record.checklists) for (const turn of checklist) for (const item of turn) this.itemsByQuestion.set(item.question, item.id);
    }
  }

  /** Pass as the scripted server's `script`. */
  readonly handle = async (request: RecordedRequest): Promise<Reply> => {
    this.active++;
    this.maxInFlight = Math.max(this.maxInFlight, this.active);
    try {
      if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
      const target = this.target(request);
      this.calls.push(target);
      const fault = this.faults.get(`${target.turn}/${target.item}/${target.step}`)?.shift();
      if (fault) return fault;
      const answer = this.answers[`${target.turn}/${target.item}`]?.[target.step];
      if (answer === undefined) return reply.error(400, `no scripted answer for ${target.turn}/${target.item} at step ${target.step}`);
      return verdictReply(answer);
    } finally {
      this.active--;
    }
  };

  /** Calls made about one item of one turn (at any step). */
  callsFor(turn: number, item: string): number {
    return this.calls.filter((c) => c.turn === turn && c.item === item).length;
  }

  private target(request: RecordedRequest): JudgeTarget {
    const prompt = (request.body as { messages: { content: string }[] }).messages[0]!.content;
    const question = /^Question: (.*)$/m.exec(prompt)?.[1] ?? "";
    const item = this.itemsByQuestion.get(question);
    const current = prompt.split("# Messages under evaluation")[1] ?? "";
    const turn = /## Turn (\d+)/.exec(current)?.[1];
    const steps = [...current.matchAll(/### Step (\d+)/g)];
    if (item === undefined || turn === undefined || steps.length === 0) throw new Error(`unrecognised judge prompt:\n${prompt}`);
    return { item, turn: Number(turn), step: Number(steps.at(-1)![1]) };
  }
}
