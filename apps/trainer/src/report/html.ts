import type { ReportData } from "./model.js";

/** Escape text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** JSON that is safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

// The page draws its charts itself (inline SVG, no external assets), so the file is self-contained.
const CLIENT = String.raw`
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];
  // Past eight series the colours come round again, dashed (lines) or paler (bars), so that no
  // two series of a chart look alike.
  var DASHES = ["", "6 3", "2 3"];
  function colorOf(i) { return COLORS[i % COLORS.length]; }
  function cycleOf(i) { return Math.floor(i / COLORS.length) % DASHES.length; }
  var W = 640, H = 300, M = { left: 56, right: 16, top: 16, bottom: 40 };

  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (parent) parent.appendChild(node);
    return node;
  }
  function text(parent, x, y, str, anchor, cls) {
    var t = el("text", { x: x, y: y, "text-anchor": anchor || "middle", class: cls || "tick" }, parent);
    t.textContent = str;
    return t;
  }
  function niceTicks(lo, hi, n, integers) {
    if (lo === hi) { lo -= 1; hi += 1; }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var err = (hi - lo) / n / step;
    step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
    if (integers) step = Math.max(1, Math.round(step));
    var decimals = Math.max(0, -Math.floor(Math.log10(step)));
    var ticks = [];
    for (var k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) ticks.push(Number((k * step).toFixed(decimals)));
    return ticks;
  }
  function fmt(v) { return Math.abs(v) >= 1000 || (v !== 0 && Math.abs(v) < 0.01) ? v.toExponential(1) : String(Number(v.toFixed(3))); }
  function axes(svg, xs, ys, yLabel, xLabel) {
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    var sx = function (v) { return M.left + ((v - x0) / (x1 - x0)) * (W - M.left - M.right); };
    var sy = function (v) { return H - M.bottom - ((v - y0) / (y1 - y0)) * (H - M.top - M.bottom); };
    niceTicks(y0, y1, 5, false).forEach(function (t) {
      el("line", { x1: M.left, x2: W - M.right, y1: sy(t), y2: sy(t), class: "grid" }, svg);
      text(svg, M.left - 6, sy(t) + 4, fmt(t), "end");
    });
    var integerX = xs.every(function (v) { return Math.floor(v) === v; });
    niceTicks(x0, x1, 6, integerX).forEach(function (t) { text(svg, sx(t), H - M.bottom + 16, fmt(t)); });
    el("line", { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, class: "axis" }, svg);
    el("line", { x1: M.left, x2: M.left, y1: M.top, y2: H - M.bottom, class: "axis" }, svg);
    text(svg, (W + M.left) / 2, H - 6, xLabel, "middle", "label");
    var yl = text(svg, 14, H / 2, yLabel, "middle", "label");
    yl.setAttribute("transform", "rotate(-90 14 " + H / 2 + ")");
    return { sx: sx, sy: sy };
  }
  function legend(figure, labels) {
    var list = document.createElement("ul");
    list.className = "legend";
    labels.forEach(function (label, i) {
      var item = document.createElement("li");
      var swatch = document.createElement("span");
      swatch.className = "swatch";
      var cycle = cycleOf(i);
      swatch.style.background = cycle === 0 ? colorOf(i) : "repeating-linear-gradient(90deg, " + colorOf(i) + " 0 " + (cycle === 1 ? 4 : 2) + "px, transparent 0 6px)";
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(label));
      list.appendChild(item);
    });
    figure.appendChild(list);
  }
  function drawLine(svg, chart) {
    var xs = [], ys = [];
    chart.series.forEach(function (s) { s.points.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); }); });
    if (xs.length === 0) return;
    var s = axes(svg, xs, ys, chart.yLabel, "step");
    chart.series.forEach(function (series, i) {
      var color = colorOf(i);
      var d = series.points.map(function (p, j) { return (j ? "L" : "M") + s.sx(p[0]).toFixed(1) + "," + s.sy(p[1]).toFixed(1); }).join(" ");
      var line = { d: d, fill: "none", stroke: color, "stroke-width": 2, class: "series" };
      if (cycleOf(i) > 0) line["stroke-dasharray"] = DASHES[cycleOf(i)];
      el("path", line, svg);
      series.points.forEach(function (p) {
        var dot = el("circle", { cx: s.sx(p[0]), cy: s.sy(p[1]), r: 2.5, fill: color }, svg);
        el("title", {}, dot).textContent = series.label + ": step " + p[0] + ", " + fmt(p[1]);
      });
    });
  }
  function drawHistogram(svg, chart) {
    var edges = chart.edges, bins = edges.length - 1;
    var maxCount = 0;
    chart.series.forEach(function (s) { s.counts.forEach(function (c) { maxCount = Math.max(maxCount, c); }); });
    var s = axes(svg, [edges[0], edges[bins]], [0, maxCount || 1], "rows", "advantage");
    var groupWidth = (s.sx(edges[1]) - s.sx(edges[0])) * 0.9;
    var barWidth = groupWidth / chart.series.length;
    chart.series.forEach(function (series, k) {
      series.counts.forEach(function (c, i) {
        if (i >= bins) return;
        var x = s.sx(edges[i]) + k * barWidth;
        var bar = el("rect", { x: x, y: s.sy(c), width: Math.max(barWidth - 1, 1), height: s.sy(0) - s.sy(c), fill: colorOf(k), "fill-opacity": cycleOf(k) === 0 ? 1 : 0.5, class: "series" }, svg);
        el("title", {}, bar).textContent = series.label + ": [" + fmt(edges[i]) + ", " + fmt(edges[i + 1]) + ") " + c;
      });
    });
  }
  var container = document.getElementById("charts");
  data.charts.forEach(function (chart) {
    var figure = document.createElement("figure");
    figure.id = "chart-" + chart.id;
    var caption = document.createElement("figcaption");
    caption.textContent = chart.title;
    figure.appendChild(caption);
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": chart.title }, figure);
    if (chart.type === "line") drawLine(svg, chart); else drawHistogram(svg, chart);
    legend(figure, chart.series.map(function (s) { return s.label; }));
    container.appendChild(figure);
  });
  document.body.setAttribute("data-charts-drawn", String(data.charts.length));
})();
`;

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1360px; color: #111827; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } .meta { color: #6b7280; margin: 0 0 20px; }
table { border-collapse: collapse; margin: 0 0 24px; } th, td { border: 1px solid #e5e7eb; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; } thead th { background: #f9fafb; }
#charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
figure { margin: 0; border: 1px solid #e5e7eb; border-radius: 6px; padding: 8px 12px; }
figcaption { font-weight: 600; margin-bottom: 4px; } svg { width: 100%; height: auto; }
.grid { stroke: #f3f4f6; } .axis { stroke: #9ca3af; } .tick { font-size: 11px; fill: #6b7280; } .label { font-size: 12px; fill: #374151; }
.legend { list-style: none; padding: 0; margin: 4px 0 0; display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; }
`;

/** A self-contained HTML page: inline styles, inline data, a small inline script that draws the charts. */
export function renderReportHtml(report: ReportData): string {
  const head = report.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join("");
  const body = report.rows
    .map((row) => `<tr><td>${escapeHtml(row.name)}</td>${report.columns.map((c) => `<td>${escapeHtml(row.cells[c] ?? "–")}</td>`).join("")}</tr>`)
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(report.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(report.title)}</h1>
<p class="meta">Generated ${escapeHtml(report.generatedAt)}</p>
<table id="runs"><thead><tr><th>run</th>${head}</tr></thead><tbody>
${body}
</tbody></table>
<div id="charts"></div>
<script type="application/json" id="report-data">${scriptJson(report)}</script>
<script>${CLIENT}</script>
</body>
</html>
`;
}
