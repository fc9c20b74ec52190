/// <reference lib="dom" />
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Trajectory } from "@envace/protocol";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReport } from "../commands/report.js";
import { parseConfig } from "../config/load.js";
import { readKept } from "../keep/log.js";
import type { KeptEvalRecord, KeptTrainRecord } from "../keep/record.js";
import { train } from "../train.js";
import { explorerOf } from "./explorer.js";

function rollout(
  id: string,
  taskId: string,
  index: number,
  value: number | null,
  termination: Trajectory["termination"] = { reason: "agent_stop" },
): Trajectory {
  return Trajectory.parse({
    id,
    taskId,
    rollout: index,
    context: [{ role: "user", content: `please buy item ${taskId}` }],
    steps: [
      {
        type: "act",
        generation: { role: "act", text: '{"name":"buy"}', promptTokens: [], outputTokens: [1, 2, 3], logprobs: null, finishReason: "stop" },
        message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "buy", arguments: "{}" } }] },
        outcomes: [
          {
            provenance: "rehearsed",
            call: { id: "c1", name: "buy", arguments: { item: taskId } },
            result: { status: "ok", callId: "c1", name: "buy", content: { bought: taskId, left: index } },
            generation: { role: "rehearse", text: "{}", promptTokens: [], outputTokens: [4, 5], logprobs: null, finishReason: "stop" },
          },
        ],
      },
    ],
    termination,
    ...(value === null ? { reward: { status: "masked", reason: "judge unreachable" } } : { reward: { status: "scored", value } }),
  });
}

const trainRecord = (step: number, group: number, t: Trajectory): KeptTrainRecord => ({
  kind: "train",
  step,
  group,
  trajectory: t,
  advantage: { act: 0, rehearse: null },
  masked: t.reward?.status === "masked" ? t.reward.reason : null,
  memory: null,
});

describe("explorerOf", () => {
  it("makes one view per step and per evaluation setting, with each task's filter flags", () => {
    const train = [
      trainRecord(2, 0, rollout("a", "t1", 0, 1)),
      trainRecord(2, 0, rollout("b", "t1", 1, null)),
      trainRecord(1, 0, rollout("c", "t2", 0, 0, { reason: "parse_error", code: "JSON_DECODE_ERROR", detail: "x" })),
    ];
    const evaluation = (step: number, setting: string, taskId: string, success: boolean): KeptEvalRecord => ({
      kind: "eval",
      step,
      setting,
      taskId,
      success,
      verdict: { status: "scored", value: success ? 1 : 0 },
      memory: null,
      attempts: [],
      committed: null,
      predictions: [],
    });
    const explorer = explorerOf("run", {
      train,
      eval: [evaluation(2, "parallel:2", "t9", true), evaluation(2, "none", "t9", false), evaluation(0, "none", "t9", false)],
    });
    expect(explorer.views.map((v) => v.id)).toEqual(["train:1", "train:2", "eval:0:none", "eval:2:none", "eval:2:parallel:2"]);
    expect(explorer.views[1]!.tasks).toEqual([{ taskId: "t1", rollouts: 2, succeeded: true, failed: false, masked: true, parseErrors: false }]);
    expect(explorer.views[0]!.tasks).toEqual([{ taskId: "t2", rollouts: 1, succeeded: false, failed: true, masked: false, parseErrors: true }]);
    expect(explorer.views[4]!.tasks[0]!.succeeded).toBe(true);
    expect(explorer.records.map((r) => r.length)).toEqual([1, 2, 1, 1, 1]);
  });
});

/** One step of the shipped base model (it calls tools, so there are answers to imagine and to predict), evaluated on 2 tasks. */
const SHORT_RUN = `
seed: 1
data: { source: builtin, train_tasks: 12, test_tasks: 2 }
model: { type: tiny, vocab_size: 768, hidden_size: 96, intermediate_size: 256, num_hidden_layers: 3, num_attention_heads: 4, max_position_embeddings: 512, pretokenizer: isolated, initializer_range: 0.1 }
sft: { enabled: false }
rollout: { tasks_per_step: 2, rollouts_per_task: 2, max_turns: 4, concurrency: 8 }
reward: { type: consistent, rehearse_type: verifiable }
eval: { every_steps: 1, rehearsal: [none, "parallel:2"] }
trainer: { total_steps: 1, save_every: 1 }
`;

function findChromium(): string | undefined {
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const chromiumPath = findChromium();
if (!chromiumPath) console.warn("explorer browser test skipped: no `chromium` on PATH (Debian: apt-get install chromium)");
const artifacts = join(dirname(fileURLToPath(import.meta.url)), "../../test-artifacts");

describe.skipIf(!chromiumPath)("the trajectory explorer in headless Chromium", () => {
  let browser: BrowserContext;
  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    // A fresh profile every run (Playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "envace-chromium-")), {
      executablePath: chromiumPath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1400, height: 1000 },
    });
  }, 60_000);
  afterAll(async () => {
    await browser.close();
  });

  /** A page that records console errors, page errors and any request other than the file itself. */
  async function open(path: string): Promise<{ page: Page; problems: string[] }> {
    const url = pathToFileURL(path).href;
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("request", (r) => {
      if (r.url() !== url) problems.push(`request: ${r.url()}`);
    });
    await page.goto(url);
    await page.waitForSelector("body[data-explorer-ready]");
    return { page, problems };
  }

  it("over a real short run: a step, a task, a rollout with its imagined answers marked; an evaluation's real answers against their predictions", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "envace-explorer-")), "run");
    await train(parseConfig(SHORT_RUN, "short.yaml"), dir, { log: () => undefined });
    const kept = readKept(dir);
    const { page, problems } = await open(writeReport([dir]));

    // The explorer opens on the last step; pick step 1 and the task whose rollouts called tools most.
    expect(await page.$eval("#ex-detail", (d) => d.getAttribute("data-view"))).toBe("train:1");
    await page.selectOption("#ex-view", { label: "step 1" });
    const step1 = kept.train.filter((r) => r.step === 1);
    const tasks = [...new Set(step1.map((r) => r.trajectory.taskId))];
    expect(await page.$$eval("#ex-tasks li", (lis) => lis.map((li) => li.getAttribute("data-task")))).toEqual(tasks);
    const calls = (taskId: string) =>
      step1.filter((r) => r.trajectory.taskId === taskId).flatMap((r) => r.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []))).length;
    const task = [...tasks].sort((a, b) => calls(b) - calls(a))[0]!;
    await page.click(`#ex-tasks li[data-task="${task}"]`);
    const rollouts = step1.filter((r) => r.trajectory.taskId === task);
    expect(await page.$$eval("#ex-detail .ex-rollout", (cols) => cols.length)).toBe(rollouts.length);
    // Every tool answer of a self-unfolded rollout is imagined, and marked so.
    const imagined = rollouts.flatMap((r) => r.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []))).length;
    expect(imagined).toBeGreaterThan(0);
    expect(await page.$$eval('#ex-detail [data-provenance="rehearsed"] .ex-badge', (b) => b.map((x) => x.textContent))).toEqual(
      Array<string>(imagined).fill("imagined"),
    );
    expect(await page.$$eval('#ex-detail [data-provenance="grounded"]', (b) => b.length)).toBe(0);
    // Keyboard: l moves to the next rollout.
    await page.keyboard.press("l");
    expect(await page.$eval("#ex-detail", (d) => d.getAttribute("data-rollout"))).toBe("1");
    await page.$eval("#explorer", (e) => e.scrollIntoView());
    await page.screenshot({ path: join(artifacts, "explorer-step.png"), fullPage: false });

    // The headline's parallel:2 number links to its evaluation.
    await page.click('#runs a[href*="parallel"]');
    await page.waitForFunction(() => document.querySelector("#ex-detail")?.getAttribute("data-view") === "eval:1:parallel:2");
    // The task whose committed run made the most real calls.
    const record = kept.eval.filter((r) => r.step === 1 && r.setting === "parallel:2").sort((a, b) => b.predictions.length - a.predictions.length)[0]!;
    await page.click(`#ex-tasks li[data-task="${record.taskId}"]`);
    expect(await page.$eval("#ex-detail .ex-memory", (m) => m.textContent)).toBe(`memory the committed run acted on:\n${record.memory}`);
    expect(await page.$$eval("#ex-detail .ex-attempt", (a) => a.length)).toBe(2);
    expect(await page.$$eval("#ex-detail .ex-committed [data-provenance=grounded]", (a) => a.length)).toBe(record.predictions.length);
    expect(record.predictions.length).toBeGreaterThan(0);
    const rows = await page.$$eval("#ex-detail tr[data-prediction]", (trs) => trs.map((tr) => [tr.children[1]!.textContent, tr.children[2]!.textContent]));
    const shown = (r: KeptEvalRecord["predictions"][number]["real"]) => `${JSON.stringify(r.status === "ok" ? r.content : { error: r.error }, null, 2)}\n`;
    expect(rows).toEqual(record.predictions.map((p) => [shown(p.real), p.predicted === null ? `(${p.answer})\n` : shown(p.predicted)]));
    // A prediction that is not exact has its differing lines highlighted.
    const inexact = record.predictions.filter((p) => !p.exact).length;
    if (inexact > 0) expect(await page.$$eval("#ex-detail tr[data-prediction] .ex-diff", (d) => d.length)).toBeGreaterThan(0);
    await page.screenshot({ path: join(artifacts, "explorer-eval.png"), fullPage: false });

    // Filters and search narrow the task list to what the records say.
    await page.selectOption("#ex-status", "failed");
    const failed = kept.eval.filter((r) => r.step === 1 && r.setting === "parallel:2" && !r.success).map((r) => r.taskId);
    expect(await page.$$eval("#ex-tasks li", (lis) => lis.map((li) => li.getAttribute("data-task")))).toEqual(failed);
    await page.selectOption("#ex-status", "all");
    await page.fill("#ex-search", "no-such-text-anywhere");
    expect(await page.$$eval("#ex-tasks li", (lis) => lis.length)).toBe(0);
    expect(problems).toEqual([]);
  }, 240_000);

  it("opens in under 2 s with 10,000 kept trajectories", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "envace-explorer-big-")), "big");
    mkdirSync(join(dir, "rollouts"), { recursive: true });
    // 625 steps × 2 groups × 8 rollouts.
    const lines: string[] = [];
    const metrics: string[] = [];
    for (let step = 1; step <= 625; step++) {
      metrics.push(JSON.stringify({ kind: "train", step, reward: { act: 0.5 }, loss: 0.1 }));
      for (let group = 0; group < 2; group++) {
        for (let i = 0; i < 8; i++)
          lines.push(JSON.stringify(trainRecord(step, group, rollout(`s${step}-g${group}-r${i}`, `task-${(step * 2 + group) % 97}`, i, i % 3 === 0 ? 1 : 0))));
      }
    }
    expect(lines).toHaveLength(10_000);
    writeFileSync(join(dir, "rollouts", "train.jsonl"), `${lines.join("\n")}\n`);
    writeFileSync(join(dir, "metrics.jsonl"), `${metrics.join("\n")}\n`);
    const { page, problems } = await open(writeReport([dir]));
    // Milliseconds from the start of navigation to the explorer showing its first task.
    const ready = Number(await page.$eval("body", (b) => b.getAttribute("data-explorer-ready")));
    const timing = await page.evaluate(() => {
      const n = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      return { responseEnd: n.responseEnd, interactive: n.domInteractive, size: document.documentElement.outerHTML.length };
    });
    console.log(`explorer ready ${ready} ms after navigation with 10,000 kept trajectories`, timing);
    expect(ready).toBeLessThan(2000);
    expect(await page.$$eval("#ex-view option", (o) => o.length)).toBe(625);
    expect(await page.$$eval("#ex-detail .ex-rollout", (c) => c.length)).toBe(8);
    // Only the open task is drawn.
    expect(await page.$$eval(".ex-rollout", (c) => c.length)).toBe(8);
    await page.$eval("#explorer", (e) => e.scrollIntoView());
    await page.screenshot({ path: join(artifacts, "explorer-10k.png"), fullPage: false });
    expect(problems).toEqual([]);
  }, 120_000);
});
