import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson } from "@envace/python-text";
import { reply, type RecordedRequest, type Reply } from "@envace/scripted-server";
import { describe, expect, it } from "vitest";
import { NlJudge } from "./judge.js";
import { loadSimulations, rescore } from "./rescore.js";
import { formatSummary, readEntries, runTau2, type RunTau2Options } from "./run.js";
import type { Tau2Task } from "./task.js";
import { writeMockData } from "./testing/mock-fixture.js";
import { onLoopback } from "./testing/loopback.js";
import { sharedDataOrSkip } from "./testing/shared-data.js";

interface Body {
  messages: { role: string; content: string | null }[];
  seed?: number;
  response_format?: unknown;
}

/**
 * A scripted model that plays both sides: as the agent it calls a task's gold actions one per
 * turn and then says it is done; as the user it names its ticket, then stops. With seed 101
 * (the second trial) it leaves out the last gold action of the tasks in `flaky`.
 */
function playTasks(tasks: readonly Tau2Task[], flaky: ReadonlySet<string>): (request: RecordedRequest) => Reply {
  return (request) => {
    const body = request.body as Body;
    const system = body.messages[0]?.content ?? "";
    if (system.includes("<scenario>")) {
      const last = body.messages[body.messages.length - 1]!;
      if (last.content === "All done.") return reply.text("Thank you. ###STOP###");
      const task = tasks.find((candidate) => system.includes(scenarioText(candidate)));
      return reply.text(`Ticket ${task?.id ?? "?"}: please help.`);
    }
    const ticket = /Ticket (\S+):/.exec(body.messages.find((m) => m.role === "user")?.content ?? "")?.[1];
    const task = tasks.find((candidate) => candidate.id === ticket)!;
    const actions = task.evaluation_criteria!.actions!.slice(0, body.seed === 101 && flaky.has(task.id) ? -1 : undefined);
    const done = body.messages.filter((m) => m.role === "tool").length;
    const next = actions[done];
    if (next === undefined) return reply.text("All done.");
    return reply.toolCalls([{ id: `call_${done}`, name: next.name, arguments: toJson(next.arguments) as Record<string, unknown> }]);
  };
}

function scenarioText(task: Tau2Task): string {
  const instructions = task.user_scenario.instructions;
  return typeof instructions === "string" ? instructions : instructions.reason_for_call.split("\n")[0]!;
}

const data = sharedDataOrSkip("the end-to-end retail run");

describe.skipIf(data === undefined)("an end-to-end retail run against an OpenAI-compatible server on loopback", () => {
  const ids = ["0", "1", "6"];
  const loop = onLoopback(
    "retail",
    () => ({ data: join(data!, "tau2") }),
    (domain) =>
      playTasks(
        ids.map((id) => domain.tasks.find((task) => task.id === id)!),
        new Set(["1"]),
      ),
  );

  it("runs agent and user simulator through the server, scores every trial and writes the run directory", async () => {
    const { domain, guidelines, server, policy } = loop;
    const out = mkdtempSync(join(tmpdir(), "tau2-run-"));
    const progress: number[] = [];
    /** Both sides on the loopback policy, the three tasks twice each, seed 100, into `out`. */
    const runRetail = (options: Partial<RunTau2Options> = {}) =>
      runTau2({ domain, guidelines, participants: { agent: policy, user: policy }, taskIds: ids, trials: 2, seed: 100, out, ...options });
    const run = await runRetail({ onProgress: ({ done }) => progress.push(done) });

    expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
    expect(run.entries.map((entry) => [entry.id, entry.trial, entry.reward])).toEqual([
      ["0", 0, 1],
      ["0", 1, 1],
      ["1", 0, 1],
      ["1", 1, 0],
      ["6", 0, 1],
      ["6", 1, 1],
    ]);
    expect(run.summary).toMatchObject({ tasks: 3, trials: 2, scored: 6, successes: 5, terminations: { user_stop: 6 } });
    expect(run.summary.pass_hat_k["pass^1"]).toBeCloseTo((1 + 0.5 + 1) / 3, 12);
    expect(run.summary.pass_hat_k["pass^2"]).toBeCloseTo(2 / 3, 12);
    expect(formatSummary(run.summary)).toContain("pass^1 83.3%  pass^2 66.7%");

    // The agent's requests carried the policy and the retail tools; the user's, the guidelines.
    const agentRequest = server.scripted.find((request) => ((request.body as Body).messages[0]?.content ?? "").includes("<policy>"))!;
    expect((agentRequest.body as { tools: unknown[] }).tools).toHaveLength(16);
    expect(server.scripted.some((request) => ((request.body as Body).messages[0]?.content ?? "").includes("simulate realistic customer interactions"))).toBe(
      true,
    );

    // The run directory: entries as they finished, the conversations, the summary.
    const entries = readEntries(join(out, "entries.jsonl"));
    expect(entries.map((entry) => `${entry.id}/${entry.trial}`).sort()).toEqual(["0/0", "0/1", "1/0", "1/1", "6/0", "6/1"]);
    expect(entries[0]).toMatchObject({
      calls: expect.arrayContaining([expect.objectContaining({ name: "find_user_id_by_name_zip", content: "yusuf_rossi_9620", error: false })]) as unknown,
    });
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))).toEqual(run.summary);
    expect(JSON.parse(readFileSync(join(out, "options.json"), "utf8"))).toMatchObject({ benchmark: "tau2", domain: "retail", judge: false });

    // Saved conversations score the same when read back.
    const again = await rescore(domain, await loadSimulations(join(out, "simulations.jsonl")));
    expect(again.entries.map((entry) => [entry.id, entry.trial, entry.reward, entry.db_hash]).sort()).toEqual(
      run.entries.map((entry) => [entry.id, entry.trial, entry.reward, entry.db_hash]).sort(),
    );

    // A second run on the same directory has nothing left to do.
    const before = server.scripted.length;
    const notices: string[] = [];
    const resumed = await runRetail({ notify: (line) => notices.push(line) });
    expect(server.scripted.length).toBe(before);
    expect(resumed.summary).toEqual(run.summary);
    expect(notices).toEqual([`${out} already holds the 6 entries asked for: nothing left to run; the summary is made again from them`]);
    // Another seed would mix trials of two samplings: refused, naming it.
    await expect(runRetail({ seed: 7 })).rejects.toThrow(`${out} holds a run with other options (seed: 100 → 7)`);
  });
});

describe("an end-to-end run whose reward needs the NL judge", () => {
  const loop = onLoopback(
    "mock",
    () => ({ data: writeMockData() }),
    (domain) => {
      const play = playTasks(domain.tasks, new Set());
      let judged = 0;
      return (request) => {
        const body = request.body as Body;
        if (body.response_format === undefined) return play(request);
        // The judge: the first verdict is yes; later ones fail outright, to be masked.
        judged++;
        if (judged > 1) return reply.error(400, "bad request");
        const verdict = {
          high_level_understanding_of_the_question: "q",
          analysis_of_if_focus_on: "f",
          analysis_of_pass_condition: "The agent created it.",
          analysis_of_failure_examples: "none",
          answer: true,
        };
        return reply.text(JSON.stringify(verdict));
      };
    },
  );

  it("scores with the judge's verdict, and masks the trial when the judge cannot answer", async () => {
    const { domain, guidelines, server, policy } = loop;
    const judge = NlJudge.fromServer(server.baseURL, "scripted-model", { retry: { maxRetries: 0 } });
    const run = await runTau2({ domain, guidelines, participants: { agent: policy, user: policy }, taskIds: ["create"], trials: 2, judge });
    expect(run.entries.map((entry) => [entry.reward, entry.components])).toEqual([
      [1, { DB: 1, ACTION: 1, NL_ASSERTION: 1 }],
      [null, { DB: 1, ACTION: 1 }],
    ]);
    expect(run.entries[1]!.masked).toMatch(/^NL_ASSERTION judge failed: no verdict for "The agent says the task exists.": judge HTTP 400/);
    expect(run.summary).toMatchObject({ scored: 1, masked: 1, successes: 1 });
    const prompt = (server.scripted.find((request) => (request.body as Body).response_format !== undefined)!.body as Body).messages[0]!.content!;
    expect(prompt).toContain("Expected outcome:\nThe agent says the task exists.");
    expect(prompt).toContain('agent calls create_task({"user_id": "user_1", "title": "Plan"})');
  });
});
