import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Tau2Environment } from "./environment.js";
import { Tau2Evaluator } from "./evaluate.js";
import { loadDomain, loadUserGuidelines, type Tau2Domain, type UserGuidelines } from "./load.js";
import { oracle } from "./oracle.js";
import { runTau2, type Tau2Entry } from "./run.js";
import { simulate } from "./simulate.js";
import type { Action, Tau2Task } from "./task.js";
import { readLabels, ReplayLabel, sharedDataOrSkip } from "./testing/shared-data.js";

const data = sharedDataOrSkip("τ² conformance labels");
const labels = (domain: string): ReplayLabel[] => readLabels(data!, domain, ReplayLabel);

/** The task with its gold actions replaced. */
function withActions(task: Tau2Task, actions: Action[]): Tau2Task {
  return { ...task, evaluation_criteria: { ...task.evaluation_criteria!, actions } };
}

/** The gold actions that change the database when played in order (and succeed). */
function stateChangingWrites(domain: Tau2Domain, task: Tau2Task): number[] {
  const environment = Tau2Environment.forTask(domain, task);
  const indices: number[] = [];
  (task.evaluation_criteria?.actions ?? []).forEach((action, index) => {
    const before = environment.dbHash();
    const response = environment.respond({ id: action.action_id, name: action.name, arguments: action.arguments, requestor: action.requestor });
    if (!response.error && environment.mutates(action.name) && environment.dbHash() !== before) indices.push(index);
  });
  return indices;
}

/** The first string argument of a call, changed (an id that then matches nothing). */
function changeOneArgument(action: Action): Action {
  const args = new Map(action.arguments);
  for (const [key, value] of args) {
    if (typeof value === "string") {
      args.set(key, `${value}_changed`);
      return { ...action, arguments: args };
    }
    if (Array.isArray(value) && typeof value[0] === "string") {
      args.set(key, [`${value[0]}_changed`, ...value.slice(1)]);
      return { ...action, arguments: args };
    }
  }
  throw new Error(`${action.name} has no string argument to change`);
}

describe.skipIf(data === undefined).each(["retail", "mock"])("the %s domain against upstream's conformance labels", (name) => {
  let domain: Tau2Domain;
  let guidelines: UserGuidelines;
  let entries: Map<string, Tau2Entry>;

  beforeAll(async () => {
    domain = await loadDomain(name, { data: join(data!, "tau2") });
    guidelines = await loadUserGuidelines(join(data!, "tau2"));
    const run = await runTau2({ domain, guidelines, participants: "oracle" });
    entries = new Map(run.entries.map((entry) => [entry.id, entry]));
  });

  it("has a label for every task and a task for every label", () => {
    expect(
      labels(name)
        .map((label) => label.id)
        .sort(),
    ).toEqual(domain.tasks.map((task) => task.id).sort());
  });

  it("starts every task from upstream's initial database hash", () => {
    const mismatched = labels(name).filter((label) => {
      const task = domain.tasks.find((candidate) => candidate.id === label.id)!;
      return Tau2Environment.forTask(domain, task).dbHash() !== label.initial_db_hash;
    });
    expect(mismatched.map((label) => label.id)).toEqual([]);
  });

  it("answers every gold action of the oracle's run with upstream's exact content and error flag", () => {
    let compared = 0;
    for (const label of labels(name)) {
      const entry = entries.get(label.id)!;
      expect({ id: label.id, calls: entry.calls }).toEqual({
        id: label.id,
        calls: label.calls.map(({ name, content, error }) => ({ name, requestor: "assistant", content, error })),
      });
      compared += label.calls.length;
    }
    expect(compared).toBe(labels(name).reduce((sum, label) => sum + label.calls.length, 0));
  });

  it("ends every oracle run on upstream's final database hash, with the user's stop", () => {
    for (const label of labels(name)) {
      const entry = entries.get(label.id)!;
      expect({ id: label.id, hash: entry.db_hash, termination: entry.termination }).toEqual({
        id: label.id,
        hash: label.final_db_hash,
        termination: "user_stop",
      });
    }
  });

  it("scores the oracle 1 on the DB component of every task, and reaches the gold state on the others", () => {
    const evaluator = new Tau2Evaluator(domain);
    let scored = 0;
    for (const task of domain.tasks) {
      const entry = entries.get(task.id)!;
      expect({ id: task.id, hash: entry.db_hash }).toEqual({ id: task.id, hash: evaluator.gold(task).agent });
      if (task.evaluation_criteria?.reward_basis.includes("DB") === true && task.evaluation_criteria.actions !== null) {
        expect({ id: task.id, db: entry.components.DB }).toEqual({ id: task.id, db: 1 });
        scored++;
      }
    }
    expect(scored).toBeGreaterThan(0);
  });

  it("scores 0 when the conversation drops one write or changes one argument of a write", async () => {
    const evaluator = new Tau2Evaluator(domain);
    let perturbed = 0;
    for (const task of domain.tasks) {
      const writes = stateChangingWrites(domain, task);
      if (writes.length === 0) continue;
      const actions = task.evaluation_criteria!.actions!;
      // The last write that changes the database: without it the final state must differ
      // (an earlier write may be undone later, as task 22 sets an address and restores it).
      const target = writes[writes.length - 1]!;
      const variants = {
        dropped: actions.filter((_, index) => index !== target),
        changed: actions.map((action, index) => (index === target ? changeOneArgument(action) : action)),
      };
      for (const [kind, variant] of Object.entries(variants)) {
        const pair = oracle(withActions(task, variant));
        const simulation = await simulate({ environment: new Tau2Environment(domain), task, agent: pair.agent, user: pair.user, guidelines });
        const reward = await evaluator.evaluate(task, simulation.messages, simulation.termination_reason);
        expect({ id: task.id, kind, db: reward.db?.reward, reward: reward.reward }).toEqual({ id: task.id, kind, db: 0, reward: 0 });
      }
      perturbed++;
    }
    expect(perturbed).toBeGreaterThan(0);
  });
});
