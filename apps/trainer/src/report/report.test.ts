/// <reference lib="dom" />
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { writeReport } from "../commands/report.js";
import type { MetricsRecord } from "../run/metrics-log.js";
import { buildReport } from "./build.js";
import { escapeHtml, renderReportHtml } from "./html.js";
import type { HistogramChart, LineChart } from "./model.js";

const edges = [-1, 0, 1];

function fixtureRecords(offset: number): MetricsRecord[] {
  return [
    { kind: "sft", step: 1, loss: 3.2 - offset, loss_act: 3.0, loss_rehearse: 3.4 },
    { kind: "sft", step: 2, loss: 2.1 - offset },
    ...[1, 2, 3].map((step) => ({
      kind: "train",
      step,
      elapsed_s: 10 * step,
      reward: { act: 0.2 * step + offset, rehearse: 0.1 * step + offset },
      length: { act: 30 + step, rehearse: 20 + step },
      loss: 0.5 / step,
      ref_kl: 0.01 * step,
      entropy: 1.5 - 0.1 * step,
      clip_fraction: 0.05,
      advantage_hist: { edges, act: [step, 2], rehearse: [1, step] },
      parse_errors: { total: 3 - step, JSON_DECODE_ERROR: 3 - step },
      env_calls: 0,
    })),
    { kind: "eval", step: 0, rehearsal: "none", success_rate: 0.1 },
    { kind: "eval", step: 3, rehearsal: "none", success_rate: 0.3 + offset },
    { kind: "eval", step: 3, rehearsal: "parallel:2", success_rate: 0.4 + offset, elapsed_s: 42 },
  ];
}

function writeRun(root: string, name: string, offset: number, mode: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ mode, environment: "self" }));
  writeFileSync(join(dir, "metrics.jsonl"), fixtureRecords(offset).map((r) => `${JSON.stringify(r)}\n`).join(""));
  return dir;
}

describe("buildReport", () => {
  const runs = [
    { name: "a", config: { mode: "envace", environment: "self" }, records: fixtureRecords(0) },
    { name: "b", config: { mode: "grpo", environment: "simulator" }, records: fixtureRecords(0.05) },
  ];
  const report = buildReport(runs, new Date("2026-01-01T00:00:00Z"));

  it("draws reward curves per run and role, sorted by step", () => {
    const reward = report.charts.find((c) => c.id === "reward") as LineChart;
    expect(reward.series.map((s) => s.label)).toEqual(["a · act", "a · rehearse", "b · act", "b · rehearse"]);
    expect(reward.series[0]!.points).toEqual([
      [1, 0.2],
      [2, 0.4],
      [3, 0.2 * 3],
    ]);
  });

  it("keeps one eval curve per rehearsal setting", () => {
    const evalChart = report.charts.find((c) => c.id === "eval") as LineChart;
    expect(evalChart.series.map((s) => [s.label, s.points.length])).toEqual([
      ["a · rehearsal none", 2],
      ["a · rehearsal parallel:2", 1],
      ["b · rehearsal none", 2],
      ["b · rehearsal parallel:2", 1],
    ]);
  });

  it("sums advantage histograms over steps", () => {
    const hist = report.charts.find((c) => c.id === "advantages") as HistogramChart;
    expect(hist.edges).toEqual(edges);
    // act: [1,2] + [2,2] + [3,2]; rehearse: [1,1] + [1,2] + [1,3]
    expect(hist.series[0]).toEqual({ label: "a · act", counts: [6, 6] });
    expect(hist.series[1]).toEqual({ label: "a · rehearse", counts: [3, 6] });
  });

  it("tabulates the final eval per setting and training totals", () => {
    expect(report.columns).toContain("success (rehearsal parallel:2)");
    expect(report.rows[1]).toEqual({
      name: "b",
      cells: {
        mode: "grpo",
        environment: "simulator",
        steps: "3",
        "success (rehearsal none)": "0.350",
        "success (rehearsal parallel:2)": "0.450",
        "env calls in training": "0",
        "parse errors": "3",
        "wall time (s)": "42",
      },
    });
  });

  it("shows a final success rate with its 95% interval when the eval record has one", () => {
    const records = [...fixtureRecords(0), { kind: "eval", step: 3, rehearsal: "none", success_rate: 0.25, success_ci95: [0.1903, 0.3211] }];
    expect(buildReport([{ name: "c", config: {}, records }]).rows[0]!.cells["success (rehearsal none)"]).toBe("0.250 [0.190, 0.321]");
  });

  it("escapes run names and cannot be broken out of by data", () => {
    const html = renderReportHtml(buildReport([{ name: "<script>x</script>", config: {}, records: fixtureRecords(0) }]));
    expect(html).not.toContain("<script>x</script>");
    expect(html).toContain(escapeHtml("<script>x</script>"));
  });
});

function findChromium(): string | undefined {
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const chromiumPath = findChromium();
if (!chromiumPath) console.warn("report browser test skipped: no `chromium` on PATH (Debian: apt-get install chromium)");

describe.skipIf(!chromiumPath)("the HTML report in headless Chromium", () => {
  it("renders every chart without console errors", async () => {
    const root = mkdtempSync(join(tmpdir(), "envace-report-"));
    const out = writeReport([writeRun(root, "envace", 0, "envace"), writeRun(root, "grpo-sim", 0.05, "grpo")], join(root, "report.html"));
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
      const problems: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") problems.push(`${message.type()}: ${message.text()}`);
      });
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
      page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()}`));
      await page.goto(`file://${out}`);
      await page.waitForSelector("body[data-charts-drawn]");
      const figures = await page.$$eval("#charts figure", (nodes) =>
        nodes.map((n) => ({ id: n.id, marks: n.querySelectorAll(".series").length, legend: n.querySelectorAll(".legend li").length })),
      );
      expect(figures.map((f) => f.id)).toEqual([
        "chart-reward",
        "chart-eval",
        "chart-advantages",
        "chart-length",
        "chart-loss",
        "chart-diagnostics",
        "chart-sft",
        "chart-errors",
      ]);
      for (const figure of figures) {
        expect(figure.marks, figure.id).toBeGreaterThan(0);
        expect(figure.legend, figure.id).toBeGreaterThan(0);
      }
      expect(await page.$$eval("#runs tbody tr", (rows) => rows.length)).toBe(2);
      const artifacts = join(dirname(fileURLToPath(import.meta.url)), "../../test-artifacts");
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, "report.png"), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
