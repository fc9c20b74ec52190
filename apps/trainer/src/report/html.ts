import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ReportData, RunRow } from "./model.js";
import { chartExponent, chartHeight, chartOption } from "./options.js";
import { EXPLORER_CLIENT, EXPLORER_STYLE } from "./explorer-client.js";
import { EnvaceError } from "@envace/errors";

/** Escape text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** JSON that is safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

let library: string | undefined;

/** The library could not be read or cannot be inlined: the installation is broken. */
export class ReportAssetError extends EnvaceError {
  override readonly code = "report-asset";
}

/** The chart library's minified browser build, inlined so the page needs no network (read once). */
export function chartLibrary(): string {
  if (library !== undefined) return library;
  let source: string;
  try {
    source = readFileSync(createRequire(import.meta.url).resolve("echarts/dist/echarts.min.js"), "utf8");
  } catch (error) {
    throw new ReportAssetError(`cannot read echarts/dist/echarts.min.js (${(error as Error).message}); reinstall @envace/trainer's dependencies`);
  }
  // Either sequence would end or derail the inline <script> element; escaping could change code.
  if (/<\/script|<!--/i.test(source)) throw new ReportAssetError("echarts.min.js contains </script or <!-- and cannot be inlined");
  library = source;
  return source;
}

// Builds one ECharts instance per chart from the inline options; the figure is marked once drawn.
const CLIENT = String.raw`
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  function fmt(v) {
    if (typeof v !== "number") return v == null ? "–" : String(v);
    return Math.abs(v) >= 1000 || (v !== 0 && Math.abs(v) < 0.01) ? v.toExponential(2) : String(Number(v.toFixed(3)));
  }
  var container = document.getElementById("charts");
  var instances = data.charts.map(function (chart) {
    var figure = document.createElement("figure");
    figure.id = "chart-" + chart.id;
    var caption = document.createElement("figcaption");
    caption.textContent = chart.title;
    figure.appendChild(caption);
    var box = document.createElement("div");
    box.className = "chart";
    box.setAttribute("role", "img");
    box.setAttribute("aria-label", chart.title);
    box.style.height = chart.height + "px";
    figure.appendChild(box);
    container.appendChild(figure);
    var instance = echarts.init(box);
    instance.on("finished", function () { figure.setAttribute("data-rendered", ""); });
    chart.option.tooltip.valueFormatter = fmt;
    if (chart.exponent !== 0) {
      var unit = Math.pow(10, chart.exponent);
      chart.option.yAxis.axisLabel = { formatter: function (v) { return String(Number((v / unit).toPrecision(3))); } };
    }
    instance.setOption(chart.option);
    return instance;
  });
  window.addEventListener("resize", function () { instances.forEach(function (i) { i.resize(); }); });
  document.body.setAttribute("data-charts-drawn", String(instances.length));
})();
`;

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1360px; color: #111827; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } .meta { color: #6b7280; margin: 0 0 20px; }
table { border-collapse: collapse; margin: 0 0 24px; } th, td { border: 1px solid #e5e7eb; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; } thead th { background: #f9fafb; }
#charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
figure { margin: 0; border: 1px solid #e5e7eb; border-radius: 6px; padding: 8px 12px; min-width: 0; }
figcaption { font-weight: 600; margin-bottom: 4px; } .chart { width: 100%; }
`;

/**
 * A self-contained HTML page: inline styles, the tables, each chart's ECharts option as inline
 * JSON, and the chart library itself inline, so the file opens offline.
 */
export function renderReportHtml(report: ReportData): string {
  const charts = report.charts.map((chart) => ({
    id: chart.id,
    title: chart.title,
    option: chartOption(chart),
    exponent: chartExponent(chart),
    height: chartHeight(chart),
  }));
  const head = report.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join("");
  const cell = (row: RunRow, runIndex: number, column: string): string => {
    const text = escapeHtml(row.cells[column] ?? "–");
    const view = row.links?.[column];
    return view === undefined
      ? `<td>${text}</td>`
      : `<td><a href="#explore=${runIndex}/${escapeHtml(encodeURIComponent(view))}" title="open this evaluation in the trajectory explorer">${text}</a></td>`;
  };
  const body = report.rows.map((row, i) => `<tr><td>${escapeHtml(row.name)}</td>${report.columns.map((c) => cell(row, i, c)).join("")}</tr>`).join("\n");
  const explorers = report.explorers.filter((e) => e.views.length > 0);
  // The explorer's index up front; each view's records in an element of their own, parsed when opened.
  const kept = report.explorers
    .flatMap((e, r) => e.records.map((records, v) => `<script type="application/json" id="kept-${r}-${v}">${scriptJson(records)}</script>`))
    .join("\n");
  const explorer =
    explorers.length === 0
      ? ""
      : `<section id="explorer"><h2>Trajectories</h2>
<div class="ex-controls"><select id="ex-run" aria-label="run"></select><select id="ex-view" aria-label="step or evaluation"></select>
<select id="ex-setting" aria-label="rehearsal setting"></select>
<select id="ex-status" aria-label="outcome"><option value="all">all tasks</option><option value="succeeded">some rollout succeeded</option><option value="failed">some rollout failed</option></select>
<label><input type="checkbox" id="ex-masked"> masked</label><label><input type="checkbox" id="ex-parse"> parse errors</label>
<input type="search" id="ex-search" placeholder="search tool names and text" aria-label="search"><span class="ex-keys">keys: j/k next/previous task · l/h next/previous rollout</span></div>
<div class="ex-body"><ul id="ex-tasks" aria-label="tasks"></ul><div id="ex-detail"></div></div></section>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(report.title)}</title>
<style>${STYLE}${EXPLORER_STYLE}</style>
</head>
<body>
<h1>${escapeHtml(report.title)}</h1>
<p class="meta">Generated ${escapeHtml(report.generatedAt)}</p>
<table id="runs"><thead><tr><th>run</th>${head}</tr></thead><tbody>
${body}
</tbody></table>
<div id="charts"></div>
${explorer}
<script type="application/json" id="report-data">${scriptJson({ charts })}</script>
<script type="application/json" id="explorer-index">${scriptJson(report.explorers.map((e) => ({ name: e.name, views: e.views })))}</script>
${kept}
<script>${chartLibrary()}</script>
<script>${CLIENT}</script>
<script>${EXPLORER_CLIENT}</script>
</body>
</html>
`;
}
