import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordError } from "@envace/protocol";
import { pyDumps } from "@envace/python-text";
import { beforeAll, describe, expect, it } from "vitest";
import { oracle } from "./oracle.js";
import { loadDomain, loadTasks, loadUserGuidelines, type Tau2Domain } from "./load.js";
import { loadSimulations, rescore } from "./rescore.js";
import { saveSimulation } from "./run.js";
import { simulate } from "./simulate.js";
import { Tau2Environment } from "./environment.js";
import { renderScenario } from "./task.js";
import { mockTasks, writeMockData } from "./testing/mock-fixture.js";

function file(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "tau2-load-")), name);
  writeFileSync(path, text);
  return path;
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RecordError);
  return (error as RecordError).message;
}

describe("loading upstream task files", () => {
  it("reads the task schema with upstream's defaults", async () => {
    const tasks = await loadTasks(file("tasks.json", JSON.stringify(mockTasks)));
    expect(tasks.map((task) => task.id)).toEqual(["complete", "create", "history", "free"]);
    const history = tasks[2]!;
    expect(history.evaluation_criteria!.reward_basis).toEqual(["DB"]);
    expect(history.initial_state!.message_history![2]).toEqual({
      role: "tool",
      id: "h1",
      content: expect.any(String) as unknown,
      requestor: "assistant",
      error: false,
    });
    expect(tasks[1]!.evaluation_criteria!.actions![0]).toMatchObject({ requestor: "assistant", info: null, compare_args: ["title"] });
    // upstream's default basis is DB and COMMUNICATE
    const plain = await loadTasks(file("tasks.json", JSON.stringify([{ id: "t", user_scenario: { instructions: "x" }, evaluation_criteria: {} }])));
    expect(plain[0]!.evaluation_criteria!.reward_basis).toEqual(["DB", "COMMUNICATE"]);
  });

  it("keeps tool arguments as Python read them: ints, floats and key order", async () => {
    const tasks = await loadTasks(
      file(
        "tasks.json",
        '[{"id": "t", "user_scenario": {"instructions": "x"}, "evaluation_criteria": {"actions": [{"action_id": "a", "name": "f", "arguments": {"9": 1, "1": 2.0}}]}}]',
      ),
    );
    expect(pyDumps(tasks[0]!.evaluation_criteria!.actions![0]!.arguments)).toBe('{"9": 1, "1": 2.0}');
  });

  it("names the file, the task and the field of a bad task", async () => {
    const bad = structuredClone(mockTasks) as unknown as { evaluation_criteria: { actions: { name?: unknown }[] } }[];
    delete bad[1]!.evaluation_criteria.actions[0]!.name;
    const path = file("tasks.json", JSON.stringify(bad));
    expect(await failure(loadTasks(path))).toBe(`${path} (record 1): evaluation_criteria.actions[0].name: Invalid input: expected string, received undefined`);
    const wrongBasis = file(
      "tasks.json",
      JSON.stringify([{ id: "t", user_scenario: { instructions: "x" }, evaluation_criteria: { reward_basis: ["DB", "VIBES"] } }]),
    );
    expect(await failure(loadTasks(wrongBasis))).toMatch(/\(record 0\): evaluation_criteria\.reward_basis\[1\]: Invalid option/);
  });

  it("names the line of a file that is not JSON, and refuses repeated task ids", async () => {
    const broken = file("tasks.json", '[\n  {"id": "a",\n   "user_scenario" {}}\n]');
    expect(await failure(loadTasks(broken))).toBe(`${broken}:3: not JSON (Expecting ':' delimiter, column 20)`);
    const twice = file("tasks.json", JSON.stringify([mockTasks[3], mockTasks[3]]));
    expect(await failure(loadTasks(twice))).toBe(`${twice} (record 1): id: duplicate task id "free"`);
  });

  it("loads a domain from the data folder or from the domain folder itself", async () => {
    const data = writeMockData();
    const fromRoot = await loadDomain("mock", { data });
    const fromDomain = await loadDomain("mock", { data: join(data, "mock") });
    expect(fromDomain.tasks.map((t) => t.id)).toEqual(fromRoot.tasks.map((t) => t.id));
    expect((await loadUserGuidelines(join(data, "mock"))).tools).toContain("use your tools");
    await expect(loadDomain("mock", { data: join(data, "nowhere") })).rejects.toThrow(/no τ² mock data in .*nowhere: expected/);
  });

  it("renders the user's scenario as upstream's str(UserScenario) does", async () => {
    const tasks = await loadTasks(
      file(
        "tasks.json",
        JSON.stringify([
          {
            id: "s",
            user_scenario: {
              persona: "Calm.\nPolite.",
              instructions: {
                domain: "retail",
                reason_for_call: "Return a lamp.",
                known_info: "You are Ann.",
                unknown_info: null,
                task_instructions: "Be brief.\n\nNo refunds to gift cards.",
              },
            },
          },
        ]),
      ),
    );
    expect(renderScenario(tasks[0]!.user_scenario)).toBe(
      "Persona:\n\tCalm.\n\tPolite.\nInstructions:\n\tDomain: retail\n\tReason for call:\n\t\tReturn a lamp.\n\tKnown info:\n\t\tYou are Ann.\n\tTask instructions:\n\t\tBe brief.\n\n\t\tNo refunds to gift cards.",
    );
  });
});

describe("re-scoring saved conversations", () => {
  let domain: Tau2Domain;

  beforeAll(async () => {
    domain = await loadDomain("mock", { data: writeMockData() });
  });

  it("reads upstream's results.json, extra fields and all, and scores each simulation", async () => {
    const task = domain.tasks.find((t) => t.id === "complete")!;
    const pair = oracle(task);
    const played = await simulate({ environment: new Tau2Environment(domain), task, agent: pair.agent, user: pair.user, guidelines: { plain: "", tools: "" } });
    // Upstream's shape: messages carry turn_idx, timestamps and costs; the file holds tasks too.
    const messages = JSON.parse(pyDumps(played.messages)) as Record<string, unknown>[];
    const upstream = {
      timestamp: "2025-01-01T00:00:00",
      info: { num_trials: 1 },
      tasks: [],
      simulations: [
        {
          id: "sim-1",
          task_id: "complete",
          trial: 0,
          start_time: "",
          end_time: "",
          duration: 1.5,
          termination_reason: "user_stop",
          messages: messages.map((message, index) => ({ ...message, turn_idx: index, timestamp: "t", cost: 0 })),
        },
        { id: "sim-2", task_id: "complete", trial: 1, termination_reason: "max_steps", messages: [] },
      ],
    };
    const path = file("results.json", JSON.stringify(upstream, null, 2));
    const result = await rescore(domain, await loadSimulations(path));
    expect(result.entries.map((entry) => [entry.trial, entry.reward, entry.termination])).toEqual([
      [0, 0, "user_stop"],
      [1, 0, "max_steps"],
    ]);
    // The oracle dismissed the notification but never said "completed": DB and assertions pass.
    expect(result.entries[0]!.components).toEqual({ DB: 1, ENV_ASSERTION: 1, COMMUNICATE: 0 });
    expect(result.entries[0]!.db_hash).toBe(played.db_hash);
  });

  it("reads its own simulations.jsonl, and names the line of a bad record", async () => {
    const task = domain.tasks.find((t) => t.id === "history")!;
    const pair = oracle(task);
    const played = await simulate({ environment: new Tau2Environment(domain), task, agent: pair.agent, user: pair.user, guidelines: { plain: "", tools: "" } });
    const path = file("simulations.jsonl", `${saveSimulation(played, undefined)}\n`);
    const [saved] = await loadSimulations(path);
    expect(saved!.messages).toEqual(played.messages);
    expect((await rescore(domain, [saved!])).entries[0]!.reward).toBe(1);
    const bad = file("simulations.jsonl", `${saveSimulation(played, undefined)}\n{"id": "x", "task_id": "history", "messages": [{"role": "robot"}]}\n`);
    expect(await failure(loadSimulations(bad))).toMatch(/simulations\.jsonl:2: termination_reason: .*; messages\[0\]\.role: Invalid discriminator value/);
    const torn = file("simulations.jsonl", `${saveSimulation(played, undefined)}\n{"id": "x", "task_id"\n`);
    expect(await failure(loadSimulations(torn))).toBe(`${torn}:2: not JSON (Expecting ':' delimiter, column 22)`);
  });
});
