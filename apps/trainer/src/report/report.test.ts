/// <reference lib="dom" />
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { writeReport } from "../commands/report.js";
import type { MetricsRecord } from "../run/metrics-log.js";
import { buildReport } from "./build.js";
import { chartLibrary, escapeHtml, renderReportHtml } from "./html.js";
import type { HistogramChart, LineChart } from "./model.js";
import { BAND_SUFFIXES } from "./options.js";

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
    {
      kind: "eval",
      step: 0,
      rehearsal: "none",
      success_rate: 0.1,
      success_ci95: [0.02, 0.4],
      fidelity: { compared: 4, exact: 0.25, keys: 0.5, status: 0.75, failures: 2, failure_recall: 0 },
    },
    {
      kind: "eval",
      step: 3,
      rehearsal: "none",
      success_rate: 0.3 + offset,
      success_ci95: [0.1, 0.6],
      fidelity: { compared: 4, exact: 0.5, keys: 0.75, status: 1, failures: 1, failure_recall: 1 },
    },
    // No interval and no fidelity: the chart draws the curve alone.
    { kind: "eval", step: 3, rehearsal: "parallel:2", success_rate: 0.4 + offset, elapsed_s: 42 },
  ];
}

function writeRun(root: string, name: string, offset: number, mode: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ mode, environment: "self" }));
  writeFileSync(
    join(dir, "metrics.jsonl"),
    fixtureRecords(offset)
      .map((r) => `${JSON.stringify(r)}\n`)
      .join(""),
  );
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

  it("draws the 95% interval band of each eval curve that has one", () => {
    const evalChart = report.charts.find((c) => c.id === "eval") as LineChart;
    expect(evalChart.series[0]!.band).toEqual([
      [0, 0.02, 0.4],
      [3, 0.1, 0.6],
    ]);
    expect(evalChart.series[1]!.band).toBeUndefined();
  });

  it("draws rehearsal fidelity per measure and setting, where the eval records carry it", () => {
    const fidelity = report.charts.find((c) => c.id === "fidelity") as LineChart;
    expect(fidelity.series.map((s) => s.label)).toEqual([
      "a · exact (rehearsal none)",
      "a · same keys (rehearsal none)",
      "a · same status (rehearsal none)",
      "a · failures predicted (rehearsal none)",
      "b · exact (rehearsal none)",
      "b · same keys (rehearsal none)",
      "b · same status (rehearsal none)",
      "b · failures predicted (rehearsal none)",
    ]);
    expect(fidelity.series[1]!.points).toEqual([
      [0, 0.5],
      [3, 0.75],
    ]);
    expect(fidelity.series[3]!.points).toEqual([
      [0, 0],
      [3, 1],
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
        "success (rehearsal none)": "0.350 [0.100, 0.600]",
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

describe("renderReportHtml", () => {
  it("carries the chart library inline and loads nothing from elsewhere", () => {
    const html = renderReportHtml(buildReport([{ name: "a", config: {}, records: fixtureRecords(0) }]));
    // Compared as booleans: a failure would otherwise print the megabyte of library.
    expect(html.includes(chartLibrary())).toBe(true);
    expect(html.replace(chartLibrary(), "")).not.toMatch(/\s(src|href)=/i);
  });
});

/** A field at a dotted path, read here without the report's own helpers. */
function fieldAt(record: MetricsRecord, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split(".")) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** `[series name, points]` of one chart: for each run and each metric, the records that carry a number there. */
function expectedSeries(
  runs: readonly (readonly [string, MetricsRecord[]])[],
  kind: string,
  metrics: readonly (readonly [string, string, ((r: MetricsRecord) => boolean)?])[],
): [string, number][] {
  return runs
    .flatMap(([run, records]) =>
      metrics.map(([label, path, keep]): [string, number] => [
        `${run} · ${label}`,
        records.filter((r) => r.kind === kind && (keep?.(r) ?? true) && typeof fieldAt(r, path) === "number").length,
      ]),
    )
    .filter(([, points]) => points > 0);
}

function findChromium(): string | undefined {
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** What the page's ECharts instance of one figure holds after drawing. */
interface DrawnChart {
  id: string;
  instance: boolean;
  legends: number;
  dataZooms: number;
  series: { id: string; name: string; points: number }[];
}

/** The slice of the ECharts API the test reads in the page. */
interface PageECharts {
  getInstanceByDom(dom: Element):
    | {
        getOption(): { legend?: unknown[]; dataZoom?: unknown[] };
        getModel(): { getSeries(): { id: string; name: string; getData(): { count(): number } }[] };
        dispatchAction(action: Record<string, unknown>): void;
      }
    | undefined;
}

const chromiumPath = findChromium();
if (!chromiumPath) console.warn("report browser test skipped: no `chromium` on PATH (Debian: apt-get install chromium)");

describe.skipIf(!chromiumPath)("the HTML report in headless Chromium", () => {
  it("draws every chart with ECharts, one series per run and metric with a point per record, offline and without console errors", async () => {
    const root = mkdtempSync(join(tmpdir(), "envace-report-"));
    const runs = [
      ["envace", fixtureRecords(0)],
      ["grpo-sim", fixtureRecords(0.05)],
    ] as const;
    const out = writeReport([writeRun(root, "envace", 0, "envace"), writeRun(root, "grpo-sim", 0.05, "grpo")], join(root, "report.html"));
    const url = pathToFileURL(out).href;
    const setting = (name: string) => (r: MetricsRecord) => r.rehearsal === name;
    const roles = (path: string) => (["act", "rehearse"] as const).map((role) => [role, `${path}.${role}`] as const);
    const expected: Record<string, [string, number][]> = {
      reward: expectedSeries(runs, "train", roles("reward")),
      eval: expectedSeries(runs, "eval", [
        ["rehearsal none", "success_rate", setting("none")],
        ["rehearsal parallel:2", "success_rate", setting("parallel:2")],
      ]),
      fidelity: expectedSeries(
        runs,
        "eval",
        [
          ["exact", "fidelity.exact"],
          ["same keys", "fidelity.keys"],
          ["same status", "fidelity.status"],
          ["failures predicted", "fidelity.failure_recall"],
        ].flatMap(([label, path]) => ["none", "parallel:2"].map((s) => [`${label} (rehearsal ${s})`, path!, setting(s)] as const)),
      ),
      // One bar per bin of the fixture's edges, per run and role.
      advantages: runs.flatMap(([run]) => ["act", "rehearse"].map((role): [string, number] => [`${run} · ${role}`, edges.length - 1])),
      length: expectedSeries(runs, "train", roles("length")),
      loss: expectedSeries(runs, "train", [["loss", "loss"]]),
      diagnostics: expectedSeries(runs, "train", [
        ["clip fraction", "clip_fraction"],
        ["KL to the reference", "ref_kl"],
        ["sampler–learner KL", "sampler_kl"],
        ["entropy", "entropy"],
      ]),
      sft: expectedSeries(runs, "sft", [
        ["loss", "loss"],
        ["loss (act)", "loss_act"],
        ["loss (rehearse)", "loss_rehearse"],
      ]),
      errors: expectedSeries(runs, "train", [
        ["parse errors", "parse_errors.total"],
        ["environment calls", "env_calls"],
      ]),
    };
    // The band of an eval curve: a lower edge and a width, one point per record with an interval.
    const bands = expectedSeries(runs, "eval", [
      ["rehearsal none", "success_ci95.0", setting("none")],
      ["rehearsal parallel:2", "success_ci95.0", setting("parallel:2")],
    ]);

    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
      page.setDefaultTimeout(120_000);
      const problems: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") problems.push(`${message.type()}: ${message.text()}`);
      });
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
      page.on("request", (request) => {
        if (request.url() !== url) problems.push(`request: ${request.url()}`);
      });
      await page.goto(url);
      await page.waitForSelector("body[data-charts-drawn]");
      await page.waitForFunction(() => document.querySelectorAll("#charts figure:not([data-rendered])").length === 0);
      const drawn = await page.$$eval("#charts figure", (nodes): DrawnChart[] =>
        nodes.map((node) => {
          const instance = (window as unknown as { echarts: PageECharts }).echarts.getInstanceByDom(node.querySelector(".chart")!);
          const option = instance?.getOption();
          return {
            id: node.id,
            instance: instance !== undefined,
            legends: option?.legend?.length ?? 0,
            dataZooms: option?.dataZoom?.length ?? 0,
            series:
              instance
                ?.getModel()
                .getSeries()
                .map((s) => ({ id: s.id, name: s.name, points: s.getData().count() })) ?? [],
          };
        }),
      );
      expect(drawn.map((c) => c.id)).toEqual(Object.keys(expected).map((id) => `chart-${id}`));
      for (const chart of drawn) {
        const id = chart.id.replace(/^chart-/, "");
        expect(chart.instance, chart.id).toBe(true);
        expect(chart.legends, chart.id).toBe(1);
        expect(chart.dataZooms, chart.id).toBe(2);
        const curves = chart.series.filter((s) => !BAND_SUFFIXES.some((suffix) => s.id.endsWith(suffix)));
        expect(
          curves.map((s) => [s.name, s.points]),
          chart.id,
        ).toEqual(expected[id]);
        const bandSeries = chart.series.filter((s) => s.id.endsWith(BAND_SUFFIXES[1]));
        expect(
          bandSeries.map((s) => [s.name, s.points]),
          chart.id,
        ).toEqual(id === "eval" ? bands : []);
        expect(chart.series.filter((s) => s.id.endsWith(BAND_SUFFIXES[0])).length, chart.id).toBe(bandSeries.length);
      }

      // Hovering the first eval point shows its value and interval in the tooltip.
      await page.evaluate(() => {
        const echarts = (window as unknown as { echarts: PageECharts }).echarts;
        echarts.getInstanceByDom(document.querySelector("#chart-eval .chart")!)!.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: 0 });
      });
      await expect.poll(() => page.$eval("#chart-eval", (node) => node.textContent)).toContain("95% high");

      expect(await page.$$eval("#runs tbody tr", (rows) => rows.length)).toBe(2);
      const artifacts = join(dirname(fileURLToPath(import.meta.url)), "../../test-artifacts");
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, "report.png"), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
    // Chromium's start and a megabyte of script take seconds, and minutes on a loaded machine.
  }, 240_000);
});
