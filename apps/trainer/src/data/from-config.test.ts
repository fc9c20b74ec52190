import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ActStep, Cm2Record, Task, Trajectory } from "@envace/protocol";
import { parseCm2Records } from "@envace/rewards";
import { reply, startScriptedServer, type RecordedRequest, type Reply, type ScriptedServer } from "@envace/scripted-server";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../config/load.js";
import type { TrainConfig, TrainConfigInput } from "../config/schema.js";
import { verdictReply } from "../testing/judge.js";
import { builtinDomain } from "../setup/domain.js";
import { domainFromConfig } from "./from-config.js";
import type { DataDomain } from "./records.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const TRAIN = join(FIXTURES, "cm2-train.jsonl");
const TEST = join(FIXTURES, "cm2-test.json");
const KEY_ENV = "ENVACE_DATA_TEST_JUDGE_KEY";

let server: ScriptedServer;
/** The judge's answer per checklist question; a question without one gets HTTP 400. */
let answers: Record<string, boolean> = {};
const dirs: string[] = [];
const domains: DataDomain[] = [];

function judgeAnswer(request: RecordedRequest): Reply {
  const prompt = (request.body as { messages: { content: string }[] }).messages[0]!.content;
  const question = /^Question: (.*)$/m.exec(prompt)?.[1] ?? "";
  const answer = answers[question];
  if (answer === undefined) return reply.error(400, `no scripted answer for "${question}"`);
  return verdictReply(answer);
}

beforeAll(async () => {
  server = await startScriptedServer({ script: judgeAnswer });
});
afterEach(async () => {
  server.clearRequests();
  answers = {};
  Reflect.deleteProperty(process.env, KEY_ENV);
  await Promise.all(domains.splice(0).map((d) => d.close()));
});
afterAll(async () => {
  await server.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function runDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "envace-data-run-"));
  dirs.push(dir);
  return dir;
}

/** A config read as a file's would be (JSON is YAML), so its defaults are the product's. */
function config(input: TrainConfigInput): TrainConfig {
  const document = { reward: { type: "checklist", judge: { base_url: server.baseURL, model: "judge-model", max_retries: 0 } }, ...input };
  return parseConfig(JSON.stringify(document), "from-config.test.json");
}

async function open(input: TrainConfigInput, dir?: string): Promise<DataDomain> {
  const domain = await domainFromConfig(config(input), dir ?? (await runDir()));
  domains.push(domain);
  return domain;
}

/** A rollout that does what the reference did, its tool results rehearsed (as the gold examples have them). */
function rolloutOf(domain: DataDomain, task: Task): Trajectory {
  const examples = domain.gold!(task);
  const steps: ActStep[] = examples.flatMap((example): ActStep[] =>
    example.role === "act"
      ? [
          {
            type: "act",
            generation: { role: "act", text: example.text, promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" },
            message: example.target,
            outcomes: examples.flatMap((e) =>
              e.role === "rehearse" && e.latestAct === example.target ? [{ provenance: "rehearsed" as const, call: e.call, result: e.result }] : [],
            ),
          },
        ]
      : [],
  );
  return { id: `${task.id}/0`, taskId: task.id, rollout: 0, context: task.messages, steps, termination: { reason: "agent_stop" }, metadata: {} };
}

const SHOP = {
  lookup: "Does the assistant look up ada and the apples?",
  buy: "Does the assistant try to buy 2 apples for ada?",
  reply: "Does the assistant say nothing was bought and that the balance is 10?",
};

describe("the data source a config names", () => {
  it("builtin: the built-in shop domain, unchanged", async () => {
    const input = { data: { train_tasks: 3, test_tasks: 2 }, reward: { type: "verifiable" as const } };
    const domain = await open(input);
    const builtin = builtinDomain(config(input));
    expect(domain.name).toBe("builtin");
    expect(domain.train).toEqual(builtin.train);
    expect(domain.test).toEqual(builtin.test);
    expect(domain.environment).toBeTypeOf("function");
    expect(domain.rehearsePrompt).toEqual(builtin.rehearsePrompt);
    expect(domain.users).toBeUndefined();
  });

  it("builtin with sft.declined_writes: each failing-precondition task's gold gains one Rehearse row of a refused write", () => {
    const input = { data: { train_tasks: 40, test_tasks: 1 } };
    const plain = builtinDomain(config(input));
    const declined = builtinDomain(config({ ...input, sft: { declined_writes: true } }));
    let failing = 0;
    for (const task of plain.train) {
      const [before, after] = [plain.gold!(task), declined.gold!(task)];
      const extra = after.slice(before.length);
      expect(after.slice(0, before.length)).toEqual(before);
      const ok = (task.metadata as { outcome: string }).outcome === "ok";
      expect(extra.map((e) => e.role)).toEqual(ok ? [] : ["rehearse"]);
      if (!ok) failing++;
      for (const example of extra) expect(example.role === "rehearse" && example.result.status).toBe("error");
    }
    expect(failing).toBeGreaterThan(5);
  });

  it("cm2: training and held-out records, no real environment, the default Rehearse prompt, gold and corpus", async () => {
    const domain = await open({ data: { source: "cm2", path: TRAIN, test_path: TEST } });
    expect(domain.name).toBe("cm2");
    expect(domain.train.map((t) => t.id)).toEqual(["weather-001", "shop-002"]);
    expect(domain.test.map((t) => t.id)).toEqual(["weather-003"]);
    expect(domain.environment).toBeUndefined();
    expect(domain.rehearsePrompt).toEqual({});
    expect(domain.gold!(domain.train[1]!).map((e) => e.role)).toEqual(["act", "rehearse", "rehearse", "act", "rehearse", "act"]);
    expect(domain.gold!(domain.test[0]!).map((e) => e.role)).toEqual(["act", "rehearse", "act"]);
    expect([...domain.corpus()].length).toBeGreaterThan(20);
  });

  it("cm2 without test_path: no held-out tasks", async () => {
    expect((await open({ data: { source: "cm2", path: TRAIN } })).test).toEqual([]);
  });

  it("verl: the same tasks from Parquet rows", async () => {
    const records = parseCm2Records(await readFile(TRAIN, "utf8"), TRAIN);
    const dir = await runDir();
    const path = join(dir, "train.parquet");
    const extra = records.map((r: Cm2Record) => ({
      uuid: r.uuid,
      messages: r.messages,
      tools: JSON.stringify(r.tools),
      interaction_kwargs: { name: "checklist", checklist_list: r.checklists },
    }));
    await writeFile(path, new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "extra_info", data: extra, type: "JSON" }] })));
    const domain = await open({ data: { source: "verl", path } }, dir);
    expect(domain.name).toBe("verl");
    expect(domain.train.map((t) => t.reference)).toEqual(records.map((r) => r.messages));
  });

  it("names an unset api_key_env, and a bad data file with its path", async () => {
    const judge = { base_url: server.baseURL, model: "judge-model", api_key_env: KEY_ENV };
    const unset = domainFromConfig(config({ data: { source: "cm2", path: TRAIN }, reward: { type: "checklist", judge } }), await runDir());
    await expect(unset).rejects.toThrow(`reward.judge.api_key_env: the environment variable ${KEY_ENV} is not set`);
    await expect(domainFromConfig(config({ data: { source: "verl", path: TRAIN } }), await runDir())).rejects.toThrow(
      new RegExp(`^${TRAIN}: not a Parquet file`),
    );
  });
});

describe("the checklist judge as the domain's reward", () => {
  it("scores one rollout over real HTTP, with the configured key, and caches every verdict in the run directory", async () => {
    process.env[KEY_ENV] = "judge-secret";
    const dir = await runDir();
    const judge = { base_url: server.baseURL, model: "judge-model", api_key_env: KEY_ENV, max_retries: 0 };
    const domain = await open({ data: { source: "cm2", path: TRAIN }, reward: { type: "checklist", judge } }, dir);
    const shop = domain.train[1]!;
    answers = { [SHOP.lookup]: true, [SHOP.buy]: true, [SHOP.reply]: false };

    const verdict = await domain.reward(rolloutOf(domain, shop), shop);
    // lookup 0.3 + buy 0.3 pass; the reply (0.4) never does; one checklist, one reference turn.
    expect(verdict).toEqual({ status: "scored", value: 0.6, components: { "turn/0": 0.6 } });
    // Three items asked at each of the turn's three assistant steps.
    expect(server.requests).toHaveLength(9);
    expect(server.requests.every((r) => r.headers.authorization === "Bearer judge-secret" && (r.body as { model: string }).model === "judge-model")).toBe(true);
    const cached = (await readFile(join(dir, "judge", "verdicts.jsonl"), "utf8")).trim().split("\n");
    expect(cached).toHaveLength(9);

    server.clearRequests();
    expect(await domain.reward(rolloutOf(domain, shop), shop)).toEqual(verdict);
    expect(server.requests).toHaveLength(0);
  });

  it("masks a rollout the judge cannot score, never scoring it 0", async () => {
    const domain = await open({ data: { source: "cm2", path: TRAIN } });
    const shop = domain.train[1]!;
    answers = { [SHOP.lookup]: true, [SHOP.buy]: true };
    const verdict = await domain.reward(rolloutOf(domain, shop), shop);
    expect(verdict.status).toBe("masked");
    expect(verdict.status === "masked" && verdict.reason).toMatch(/400/);
  });

  it("replays the next reference user turn only when every required item of the turn passed", async () => {
    const domain = await open({ data: { source: "cm2", path: TRAIN } });
    const weather = domain.train[0]!;
    const firstTurn = weather.reference!.slice(0, 5);
    const context = { task: weather, messages: firstTurn, steps: [], sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 64, stop: [] } };
    answers = { "Does the assistant ask for the forecast of Paris?": true, "Does the assistant say that rain is likely in Paris?": false };
    expect(await domain.users!.next(context)).toEqual({
      kind: "message",
      step: { type: "user", source: "replay", message: { role: "user", content: "And in Atlantis?" } },
    });
    const failed = await open({ data: { source: "cm2", path: TRAIN } });
    answers = { "Does the assistant ask for the forecast of Paris?": false, "Does the assistant say that rain is likely in Paris?": true };
    expect(await failed.users!.next(context)).toEqual({ kind: "end" });
  });

  it("masks the rollout when the judge fails while gating the next user turn (later turns never reached are not scored 0)", async () => {
    const domain = await open({ data: { source: "cm2", path: TRAIN } });
    const weather = domain.train[0]!;
    const context = {
      task: weather,
      messages: weather.reference!.slice(0, 5),
      steps: [],
      sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 64, stop: [] },
    };
    // Only one of the turn's items has an answer: the judge's server answers 400 to the other.
    answers = { "Does the assistant ask for the forecast of Paris?": true };
    expect(await domain.users!.next(context)).toEqual({ kind: "end", masked: "the judge failed while gating the next user turn" });
  });
});
