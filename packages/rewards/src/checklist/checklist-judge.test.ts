import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Cm2Record, Message } from "@envace/protocol";
import { reply, type ScriptedServer, startScriptedServer } from "@envace/scripted-server";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { actStep, fixturePath, trajectory, userStep } from "../testing/fixtures.js";
import { VerdictScript, verdictReply } from "../testing/judge-script.js";
import { JudgeCallLog, judgeCallLogPath } from "./call-log.js";
import { ChecklistJudge, type ChecklistJudgeOptions } from "./checklist-judge.js";
import { cm2ToTask, loadCm2Records } from "./cm2.js";
import { predicates } from "./predicates.js";
import { verdictCachePath } from "./verdict-cache.js";

const FAST_RETRY = { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 };

let server: ScriptedServer;
let client: OpenAI;
let flight: Cm2Record;
let weather: Cm2Record;
const dirs: string[] = [];

beforeAll(async () => {
  server = await startScriptedServer();
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "test" });
  [flight, weather] = (await loadCm2Records(fixturePath("cm2", "records.json"))) as [Cm2Record, Cm2Record];
});
afterAll(async () => {
  await server.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
afterEach(() => server.clearRequests());

async function runDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "envace-judge-"));
  dirs.push(dir);
  return dir;
}

function judge(options: Partial<ChecklistJudgeOptions> = {}): ChecklistJudge {
  return new ChecklistJudge({ client, model: "judge-model", retry: FAST_RETRY, timeoutMs: 2_000, ...options });
}

function script(answers: Record<string, readonly boolean[]>, latencyMs = 0): VerdictScript {
  const verdicts = new VerdictScript([flight, weather], answers, latencyMs);
  server.setScript(verdicts.handle);
  return verdicts;
}

// The flight record's reference dialogue has two user turns of two assistant steps each.
// Turn 0: the search passes (0.5), its result never does (0.25), the offer passes at step 1 (0.25)
// but depends on the result. Turn 1: everything passes.
const FLIGHT_ANSWERS = {
  "0/t0-search": [true, false],
  "0/t0-result": [false, false],
  "0/t0-offer": [false, true],
  "1/t1-book": [true, false],
  "1/t1-confirmed": [true, false],
  "1/t1-tell": [false, true],
};

describe("episode scores of hand-built CM2 records", () => {
  it("scores (0.75 + 1) / (1 checklist × 2 turns) = 0.875 without dependence", async () => {
    const verdicts = script(FLIGHT_ANSWERS);
    const result = await judge().score(flight.messages, cm2ToTask(flight));
    expect(result.verdict).toEqual({ status: "scored", value: 0.875, components: { "turn/0": 0.75, "turn/1": 1 } });
    expect(result.stats).toEqual({ judgeCalls: 12, cacheHits: 0, programmatic: 0, invalidCalls: 0 });
    expect(verdicts.calls).toHaveLength(12);
  });

  it("scores (0.5 + 1) / 2 = 0.75 when an item counts only with its dependencies", async () => {
    script(FLIGHT_ANSWERS);
    const result = await judge({ dependence: "turn" }).score(flight.messages, cm2ToTask(flight));
    expect(result.verdict).toMatchObject({ status: "scored", value: 0.75 });
    const offer = result.turns[0]!.status === "judged" ? result.turns[0]!.checklists[0]!.items[2] : undefined;
    expect(offer).toEqual({ id: "t0-offer", weight: 0.25, required: false, steps: [false, true], countedAt: null });
  });

  it("separates `turn` from `ordered` dependence when the evidence comes after the claim", async () => {
    // Turn 1: the reply claims the confirmation at step 0, the confirmation only shows at step 1.
    const answers = { ...FLIGHT_ANSWERS, "1/t1-confirmed": [false, true], "1/t1-tell": [true, false] };
    const task = cm2ToTask(flight);
    script(answers);
    expect((await judge().score(flight.messages, task)).verdict).toMatchObject({ value: 0.875 });
    script(answers);
    expect((await judge({ dependence: "turn" }).score(flight.messages, task)).verdict).toMatchObject({ value: 0.75 });
    script(answers);
    expect((await judge({ dependence: "ordered" }).score(flight.messages, task)).verdict).toMatchObject({ value: (0.5 + 0.75) / 2 });
  });

  it("stops at a turn whose required item failed, and never judges the turns after it", async () => {
    const verdicts = script({ ...FLIGHT_ANSWERS, "0/t0-search": [false, false], "0/t0-result": [true, false] });
    const result = await judge().score(flight.messages, cm2ToTask(flight));
    expect(result.verdict).toEqual({ status: "scored", value: 0.25, components: { "turn/0": 0.5 } });
    expect(verdicts.calls.every((c) => c.turn === 0)).toBe(true);
    expect(verdicts.calls).toHaveLength(6);
  });

  it("averages two checklists and lets a turn through when at most half of them fail (the reference's majority)", async () => {
    // Turn 0: checklist A scores 1 and passes its gate; checklist B scores 0.5 and fails it. Turn 1: both score 1.
    const answers = {
      "0/a-now": [true, false],
      "0/a-say": [false, true],
      "0/b-now": [false, false],
      "0/b-sky": [false, true],
      "1/a-fc": [true, false],
      "1/b-fc": [false, true],
    };
    script(answers);
    const majority = await judge().score(weather.messages, cm2ToTask(weather));
    expect(majority.verdict).toEqual({ status: "scored", value: (1.5 + 2) / (2 * 2), components: { "turn/0": 1.5, "turn/1": 2 } });
    expect(majority.turns[0]).toMatchObject({ status: "judged", gatePassed: true, checklists: [{ gatePassed: true }, { gatePassed: false }] });

    const verdicts = script(answers);
    const every = await judge({ gate: "every" }).score(weather.messages, cm2ToTask(weather));
    expect(every.verdict).toMatchObject({ value: 1.5 / 4 });
    expect(verdicts.calls).toHaveLength(8);
  });

  it("judges turns past a failed gate when asked to (for dialogues replayed without the gate)", async () => {
    script({ ...FLIGHT_ANSWERS, "0/t0-search": [false, false] });
    const result = await judge({ stopAtFailedGate: false }).score(flight.messages, cm2ToTask(flight));
    expect(result.verdict).toMatchObject({ value: (0.25 + 1) / 2 });
  });

  it("scores only completed turns: a rollout that stops mid-turn gets nothing for that turn", async () => {
    const verdicts = script(FLIGHT_ANSWERS);
    const cut = flight.messages.slice(0, 8); // turn 1 ends on a tool result, before the assistant replied
    const result = await judge().score(cut, cm2ToTask(flight));
    expect(result.verdict).toEqual({ status: "scored", value: 0.75 / 2, components: { "turn/0": 0.75 } });
    expect(verdicts.calls.every((c) => c.turn === 0)).toBe(true);
  });

  it("scores a protocol trajectory like the equivalent message list", async () => {
    script(FLIGHT_ANSWERS);
    const rollout = trajectory(flight.messages.slice(0, 2), [
      actStep("<think>I need to search flights first.</think>", [
        { name: "search_flights", arguments: { origin: "PAR", destination: "ROM", date: "2026-03-01" }, result: { flights: [{ id: "AF123", price: 120 }] } },
      ]),
      actStep("There is one direct flight: AF123 at 120 EUR."),
      userStep("Yes, book it."),
      actStep(null, [{ name: "book_flight", arguments: { flight_id: "AF123" }, result: { booking_id: "BK-9", status: "confirmed" } }]),
      actStep("Booked, confirmation BK-9."),
    ]);
    const dir = await runDir();
    const verdict = await judge({ runDir: dir }).reward(rollout, cm2ToTask(flight));
    expect(verdict).toEqual({ status: "scored", value: 0.875, components: { "turn/0": 0.75, "turn/1": 1 } });
    const { records } = await JudgeCallLog.read(judgeCallLogPath(dir));
    expect(new Set(records.map((r) => r.trajectory))).toEqual(new Set([rollout.id]));
  });
});

describe("judge requests", () => {
  it("asks with a strict JSON-schema response format, the prompt as one user message, and the sampling given", async () => {
    script(FLIGHT_ANSWERS);
    await judge({ sampling: { temperature: 0.2, max_tokens: 512 } }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    const body = server.scripted[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ model: "judge-model", temperature: 0.2, max_tokens: 512 });
    expect(body.messages).toEqual([{ role: "user", content: expect.stringContaining("# Checklist item") as string }]);
    expect(body.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "evaluation_verdict",
        strict: true,
        schema: expect.objectContaining({
          additionalProperties: false,
          required: [
            "high_level_understanding_of_the_question",
            "analysis_of_if_focus_on",
            "analysis_of_pass_condition",
            "analysis_of_failure_examples",
            "answer",
          ],
        }) as unknown,
      },
    });
  });

  it("keeps at most `concurrency` calls in flight", async () => {
    const verdicts = script(FLIGHT_ANSWERS, 40);
    await judge({ concurrency: 3 }).score(flight.messages, cm2ToTask(flight));
    expect(verdicts.maxInFlight).toBe(3);
  });

  it("makes one HTTP call for identical requests in flight at once", async () => {
    const verdicts = script(FLIGHT_ANSWERS, 10);
    const shared = judge();
    const task = cm2ToTask(flight);
    const [a, b] = await Promise.all([shared.score(flight.messages, task), shared.score(flight.messages, task)]);
    expect(a.verdict).toEqual(b.verdict);
    expect(verdicts.calls).toHaveLength(12);
  });

  it("decides programmatic items in code and mixes them with judged ones", async () => {
    const verdicts = script(FLIGHT_ANSWERS);
    const result = await judge({
      programmatic: {
        "t0-search": predicates.calledTool("search_flights", { origin: "PAR", destination: "ROM" }),
        "t1-book": predicates.calledTool("book_flight", { flight_id: "AF123" }),
      },
    }).score(flight.messages, cm2ToTask(flight));
    expect(result.verdict).toMatchObject({ value: 0.875 });
    expect(result.stats).toMatchObject({ judgeCalls: 8, programmatic: 4 });
    expect(verdicts.callsFor(0, "t0-search") + verdicts.callsFor(1, "t1-book")).toBe(0);
  });

  it("fails tool items at a step whose call was invalid, without asking the judge", async () => {
    // Step 0 calls search_flights without arguments and is rejected; step 1 searches properly; step 2 replies.
    // The judge would pass the result item at step 0 only; the rejected call fails it there first.
    const verdicts = script({ "0/t0-search": [true, true, false], "0/t0-result": [true, false, false], "0/t0-offer": [false, false, true] });
    const rollout = trajectory(flight.messages.slice(0, 2), [
      actStep(null, [{ name: "search_flights", arguments: {}, result: { error: { code: "INVALID_PARAMETERS", message: "origin is required" } } }]),
      actStep(null, [{ name: "search_flights", arguments: { origin: "PAR", destination: "ROM", date: "2026-03-01" }, result: { flights: ["AF123"] } }]),
      actStep("AF123 at 120 EUR."),
    ]);
    const result = await judge().score(rollout, cm2ToTask(flight));
    expect(result.stats).toMatchObject({ invalidCalls: 2, judgeCalls: 7 });
    expect(verdicts.calls.filter((c) => c.step === 0).map((c) => c.item)).toEqual(["t0-offer"]);
    // Turn 0 scores 0.5 + 0.25 (the result item never counts); turn 1 never happened.
    expect(result.verdict).toEqual({ status: "scored", value: 0.75 / 2, components: { "turn/0": 0.75 } });
  });
});

describe("judge failures", () => {
  const greeting = {
    uuid: "greet",
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
    ] satisfies Message[],
    tools: [],
    checklists: [
      [
        [
          {
            id: "greets",
            evidence: [],
            focus_on: "assistant.content.user_visible_reply",
            question: "Does the assistant greet the user?",
            pass_condition: "A greeting.",
            failure_examples: [],
            required_for_next_turn: false,
            dependence: [],
            weight: 1,
          },
        ],
      ],
    ],
  } satisfies Cm2Record;
  const task = cm2ToTask(greeting);

  async function scoreWith(...replies: Parameters<ScriptedServer["enqueue"]>) {
    server.setScript(replies);
    const dir = await runDir();
    const result = await judge({ runDir: dir }).score(greeting.messages, task);
    const log = await JudgeCallLog.read(judgeCallLogPath(dir));
    return { result, log: log.records, requests: server.scripted.length };
  }

  it.each([
    ["an HTTP 500", reply.error(500, "overloaded")],
    ["a 503", reply.error(503)],
    ["a dropped connection", reply.drop()],
    ["a malformed JSON body", reply.malformed()],
    ["content that is not JSON", reply.text("Yes, it greets the user.")],
    ["JSON that violates the schema", reply.text('{"answer": "yes"}')],
    ["a verdict missing its analysis", reply.text('{"answer": true}')],
    ["a truncated verdict", reply.text('{"high_level_understanding_of_the_question": "gree', { finishReason: "length" })],
  ])("retries after %s and scores the answer it then gets", async (_what, fault) => {
    const { result, log, requests } = await scoreWith(fault, verdictReply(true));
    expect(result.verdict).toEqual({ status: "scored", value: 1, components: { "turn/0": 1 } });
    expect(requests).toBe(2);
    expect(log).toMatchObject([{ source: "judge", attempts: 2, error: null, verdict: { answer: true } }]);
  });

  it("retries a timed-out call", async () => {
    server.setScript([reply.delay(1_500, verdictReply(false)), verdictReply(true)]);
    const result = await judge({ timeoutMs: 200 }).score(greeting.messages, task);
    expect(result.verdict).toMatchObject({ status: "scored", value: 1 });
    expect(server.scripted).toHaveLength(2);
  });

  it("waits at least as long as a 429 asks before retrying, up to the cap", async () => {
    server.setScript([reply.rateLimited(120), verdictReply(true)]);
    const started = performance.now();
    const result = await judge({ retry: { ...FAST_RETRY, maxDelayMs: 1_000 } }).score(greeting.messages, task);
    expect(result.verdict).toMatchObject({ value: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  it("masks the rollout, never scores it 0, when every attempt fails", async () => {
    const { result, log, requests } = await scoreWith(reply.error(500), reply.text("nope"), reply.error(502));
    expect(result.verdict.status).toBe("masked");
    expect(result.verdict).toEqual({
      status: "masked",
      reason: expect.stringMatching(/^judge failed on item "greets" \(checklist 0, turn 0, step 0\): judge HTTP 502: .* after 3 attempts$/) as string,
    });
    expect(requests).toBe(FAST_RETRY.maxRetries + 1);
    expect(log).toMatchObject([{ source: "judge", attempts: 3, verdict: null, error: expect.stringContaining("HTTP 502") as string }]);
  });

  it("does not retry a request the server rejects as invalid, and masks it", async () => {
    const { result, requests } = await scoreWith(reply.error(400, "response_format json_schema is not supported"));
    expect(result.verdict).toEqual({ status: "masked", reason: expect.stringContaining("(not retried)") as string });
    expect(requests).toBe(1);
  });

  it("masks a whole multi-turn rollout when one lookup fails, and does not cache the failure", async () => {
    const verdicts = script(FLIGHT_ANSWERS);
    verdicts.faults.set("1/t1-tell/1", [reply.error(500), reply.error(500), reply.error(500)]);
    const dir = await runDir();
    const failing = await judge({ runDir: dir }).score(flight.messages, cm2ToTask(flight));
    expect(failing.verdict).toMatchObject({ status: "masked", reason: expect.stringContaining('item "t1-tell" (checklist 0, turn 1, step 1)') as string });
    expect(failing.turns.map((t) => t.status)).toEqual(["judged", "masked"]);

    // The judge recovers: only the failed lookup is asked again.
    const before = verdicts.calls.length;
    const recovered = await judge({ runDir: dir }).score(flight.messages, cm2ToTask(flight));
    expect(recovered.verdict).toMatchObject({ status: "scored", value: 0.875 });
    expect(verdicts.calls.slice(before)).toEqual([{ turn: 1, item: "t1-tell", step: 1 }]);
  });

  it("rejects, rather than masks, when the caller cancels", async () => {
    server.setScript([reply.delay(2_000, verdictReply(true))]);
    const controller = new AbortController();
    const scoring = judge().score(greeting.messages, task, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("shutting down")), 50);
    await expect(scoring).rejects.toThrow("shutting down");
  });

  it("rejects with an AbortError, whatever the abort's reason, like every other cancelled wait", async () => {
    server.setScript([reply.delay(2_000, verdictReply(true))]);
    const controller = new AbortController();
    const scoring = judge().score(greeting.messages, task, { signal: controller.signal });
    setTimeout(() => controller.abort("shutting down"), 50);
    await expect(scoring).rejects.toMatchObject({ name: "AbortError", cause: "shutting down" });
  });

  it("cancels calls in flight on close", async () => {
    server.setScript([reply.delay(2_000, verdictReply(true))]);
    const closing = judge();
    const scoring = closing.score(greeting.messages, task);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await closing.close();
    await expect(scoring).rejects.toThrow("the checklist judge was closed");
  });
});

describe("the verdict cache and the call record", () => {
  it("re-scores a run from its directory without a single HTTP call", async () => {
    const dir = await runDir();
    script(FLIGHT_ANSWERS);
    const first = await judge({ runDir: dir }).score(flight.messages, cm2ToTask(flight));
    const requestsAfterFirst = server.requests.length;

    const again = await judge({ runDir: dir }).score(flight.messages, cm2ToTask(flight));
    expect(server.requests.length).toBe(requestsAfterFirst);
    expect(again.verdict).toEqual(first.verdict);
    expect(again.stats).toEqual({ judgeCalls: 0, cacheHits: 12, programmatic: 0, invalidCalls: 0 });

    const { records, skipped } = await JudgeCallLog.read(judgeCallLogPath(dir));
    expect(skipped).toBe(0);
    expect(records.map((r) => r.source)).toEqual([...Array<string>(12).fill("judge"), ...Array<string>(12).fill("cache")]);
    expect(new Set(records.slice(12).map((r) => r.key))).toEqual(new Set(records.slice(0, 12).map((r) => r.key)));
    expect(records[0]).toMatchObject({ model: "judge-model", task: "cm2-flight-001", checklist: 0, attempts: 1, error: null });
  });

  it("keys verdicts by model and sampling as well as by prompt", async () => {
    const dir = await runDir();
    const verdicts = script(FLIGHT_ANSWERS);
    await judge({ runDir: dir }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    await judge({ runDir: dir, model: "other-judge" }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    await judge({ runDir: dir, sampling: { temperature: 0.7 } }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    await judge({ runDir: dir }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    expect(verdicts.calls).toHaveLength(18);
  });

  it("survives a verdict line torn by a crash: earlier verdicts are kept, the torn one is asked again", async () => {
    const dir = await runDir();
    const verdicts = script(FLIGHT_ANSWERS);
    await judge({ runDir: dir }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    const path = verdictCachePath(dir);
    const text = await readFile(path, "utf8");
    const lines = text.trimEnd().split("\n");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(path, `${lines.slice(0, -1).join("\n")}\n${lines.at(-1)!.slice(0, 40)}`);

    const before = verdicts.calls.length;
    const result = await judge({ runDir: dir }).judgeTurn(flight.messages, cm2ToTask(flight), 0);
    expect(result.status).toBe("judged");
    expect(verdicts.calls.length - before).toBe(1);
    // The torn line is cut off the file, and the verdict asked again takes its place.
    const after = (await readFile(path, "utf8")).split("\n");
    expect(after.slice(0, lines.length - 1)).toEqual(lines.slice(0, -1));
    expect(after[lines.length - 1]).toMatch(/^\{"key":.*\}$/);
    expect(after.slice(lines.length)).toEqual([""]);
  });
});

describe("the replay gate for the rollout engine", () => {
  it("replays the next reference user turn when every required item passed", async () => {
    const verdicts = script(FLIGHT_ANSWERS);
    const shared = judge();
    const decision = await shared.mayReplayNextTurn(flight.messages.slice(0, 5), cm2ToTask(flight));
    expect(decision).toMatchObject({ replay: true, reason: "passed", next: { role: "user", content: "Yes, book it." } });
    expect(verdicts.calls).toHaveLength(6);

    // Scoring the finished rollout later reuses the verdicts of the turn already judged.
    const result = await shared.score(flight.messages, cm2ToTask(flight));
    expect(result.stats).toMatchObject({ cacheHits: 6, judgeCalls: 6 });
  });

  it("refuses when a required item failed, when the judge failed, and after the last reference turn", async () => {
    script({ ...FLIGHT_ANSWERS, "0/t0-search": [false, false] });
    const task = cm2ToTask(flight);
    expect(await judge().mayReplayNextTurn(flight.messages.slice(0, 5), task)).toMatchObject({ replay: false, reason: "required_item_failed" });

    const verdicts = script(FLIGHT_ANSWERS);
    verdicts.faults.set("0/t0-result/1", [reply.error(503), reply.error(503), reply.error(503)]);
    expect(await judge().mayReplayNextTurn(flight.messages.slice(0, 5), task)).toMatchObject({ replay: false, reason: "judge_failed" });

    script(FLIGHT_ANSWERS);
    expect(await judge().mayReplayNextTurn(flight.messages, task)).toMatchObject({ replay: false, reason: "no_more_reference_turns" });
  });

  it("takes a trajectory still unfolding, before it has a termination", async () => {
    script(FLIGHT_ANSWERS);
    const unfolding = {
      context: flight.messages.slice(0, 2),
      steps: [
        actStep("<think>search</think>", [
          { name: "search_flights", arguments: { origin: "PAR", destination: "ROM", date: "2026-03-01" }, result: { flights: ["AF123"] } },
        ]),
        actStep("AF123 at 120 EUR. Book it?"),
      ],
    };
    expect(await judge().mayReplayNextTurn(unfolding, cm2ToTask(flight))).toMatchObject({ replay: true, next: { content: "Yes, book it." } });
  });

  it("asks nothing while the assistant has not replied yet", async () => {
    const verdicts = script(FLIGHT_ANSWERS);
    expect(await judge().mayReplayNextTurn(flight.messages.slice(0, 4), cm2ToTask(flight))).toEqual({ replay: false, reason: "turn_incomplete" });
    expect(verdicts.calls).toHaveLength(0);
  });
});

describe("tasks the judge cannot score", () => {
  it("rejects a task without checklists", async () => {
    const { checklists: _none, ...bare } = cm2ToTask(flight);
    await expect(judge().score(flight.messages, bare)).rejects.toThrow('task "cm2-flight-001" has no checklists to judge');
  });
});
