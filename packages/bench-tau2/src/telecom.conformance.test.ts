import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJsonLines } from "@envace/records";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Tau2Environment } from "./environment.js";
import { Tau2Evaluator } from "./evaluate.js";
import { loadDomain, type Tau2Domain } from "./load.js";
import { runTau2, Tau2Entry } from "./run.js";
import { readLabels, sharedDataOrSkip } from "./testing/shared-data.js";

// Upstream's telecom environment on every gold action of the shared tasks (the labels'
// README gives the procedure): the oracle's run must reproduce each line exactly.

const Label = z.object({
  id: z.string(),
  initial_db_hash: z.string(),
  initial_user_db_hash: z.string(),
  calls: z.array(z.object({ name: z.string(), requestor: z.enum(["assistant", "user"]), content: z.string(), error: z.boolean() })),
  assertions: z.array(z.object({ func_name: z.string(), env_type: z.enum(["assistant", "user"]), result: z.boolean() })),
  final_db_hash: z.string(),
  final_user_db_hash: z.string(),
  gold_db_hash: z.string(),
  gold_user_db_hash: z.string(),
  db_match: z.boolean(),
});
type Label = z.infer<typeof Label>;

const data = sharedDataOrSkip("τ² telecom conformance labels");

describe.skipIf(data === undefined)("the telecom domain against upstream's conformance labels", () => {
  let domain: Tau2Domain;
  let labels: Label[];
  let entries: Map<string, Tau2Entry>;

  beforeAll(async () => {
    const dir = join(data!, "tau2", "telecom");
    domain = await loadDomain("telecom", { data: join(data!, "tau2"), tasks: join(dir, "tasks_small.json") });
    labels = readLabels(data!, "telecom", Label);
    const out = mkdtempSync(join(tmpdir(), "tau2-telecom-"));
    await runTau2({ domain, guidelines: { plain: "", tools: "" }, participants: "oracle", out });
    // What a user reads: the run directory's entries.jsonl, not the objects in memory.
    const written = join(out, "entries.jsonl");
    entries = new Map(parseJsonLines(Tau2Entry, readFileSync(written, "utf8"), written, { source: "own" }).map((entry) => [entry.id, entry]));
  });

  /** Expects every label's list to equal the oracle's entry's for its task; the number of items compared. */
  function compareEach(field: "calls" | "assertions"): number {
    let compared = 0;
    for (const label of labels) {
      expect({ id: label.id, [field]: entries.get(label.id)![field] }).toEqual({ id: label.id, [field]: label[field] });
      compared += label[field].length;
    }
    return compared;
  }

  it("has a task for each of the 14 labels, and labels the first 14 tasks in file order", () => {
    expect(labels).toHaveLength(14);
    expect(labels.map((label) => label.id)).toEqual(domain.tasks.slice(0, 14).map((task) => task.id));
  });

  it("starts every task from upstream's initial agent and user database hashes", () => {
    for (const label of labels) {
      const environment = Tau2Environment.forTask(
        domain,
        domain.tasks.find((task) => task.id === label.id)!,
      );
      expect({ id: label.id, db: environment.dbHash(), user: environment.userDbHash() }).toEqual({
        id: label.id,
        db: label.initial_db_hash,
        user: label.initial_user_db_hash,
      });
    }
  });

  it("answers every gold action, routed by requestor, with upstream's exact content and error flag", () => {
    expect(compareEach("calls")).toBe(19);
  });

  it("ends on upstream's final agent and user database hashes", () => {
    for (const label of labels) {
      const entry = entries.get(label.id)!;
      expect({ id: label.id, db: entry.db_hash, user: entry.user_db_hash }).toEqual({ id: label.id, db: label.final_db_hash, user: label.final_user_db_hash });
    }
  });

  it("gives every environment assertion upstream's result", () => {
    expect(compareEach("assertions")).toBe(27);
  });

  it("builds the gold state as upstream's evaluator does (no sync), so 4 tasks report no DB match", () => {
    const evaluator = new Tau2Evaluator(domain);
    for (const label of labels) {
      const gold = evaluator.gold(domain.tasks.find((task) => task.id === label.id)!);
      expect({ id: label.id, db: gold.agent, user: gold.user, match: entries.get(label.id)!.db_match }).toEqual({
        id: label.id,
        db: label.gold_db_hash,
        user: label.gold_user_db_hash,
        match: label.db_match,
      });
    }
    expect(labels.filter((label) => !label.db_match).map((label) => label.id)).toEqual([
      "[mobile_data_issue]user_abroad_roaming_disabled_on[PERSONA:Easy]",
      "[mobile_data_issue]user_abroad_roaming_disabled_off[PERSONA:Hard]",
      "[mobile_data_issue]data_usage_exceeded[PERSONA:Easy]",
      "[service_issue]overdue_bill_suspension[PERSONA:Easy]",
    ]);
  });

  it("scores the oracle 1 on every shared task (ENV_ASSERTION, and ACTION where listed)", () => {
    const rewards = domain.tasks.map((task) => [task.id, entries.get(task.id)!.reward, entries.get(task.id)!.termination]);
    expect(rewards).toEqual(domain.tasks.map((task) => [task.id, 1, "user_stop"]));
  });
});
