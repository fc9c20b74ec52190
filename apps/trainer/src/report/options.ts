import type { BarSeriesOption, EChartsOption, LineSeriesOption } from "echarts";
import type { Chart, HistogramChart, LineChart, Series } from "./model.js";

// Past eight series the colours come round again with dashed, then dotted lines, so no two
// series of a chart look alike.
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];
const LINE_TYPES = ["solid", "dashed", "dotted"] as const;

// Each series also gets its own marker, and earlier series are drawn wider: a line that lies
// exactly on another (three fidelity rates all at 1.0) leaves the one under it visible as a rim.
const SYMBOLS = ["circle", "rect", "triangle", "diamond", "roundRect", "pin", "arrow"] as const;

const colorOf = (i: number): string => COLORS[i % COLORS.length]!;
const lineTypeOf = (i: number): (typeof LINE_TYPES)[number] => LINE_TYPES[Math.floor(i / COLORS.length) % LINE_TYPES.length]!;
export const symbolOf = (i: number): (typeof SYMBOLS)[number] => SYMBOLS[i % SYMBOLS.length]!;
/** Line width of series `i` of `n`: 4 px for the first, down to 1.5 px for the last. */
export const widthOf = (i: number, n: number): number => (n <= 1 ? 2 : 4 - (2.5 * i) / (n - 1));

/** Legend rows of a chart about 520 px wide: each entry is its marker (35 px) and ~7 px a character. */
export function legendRows(labels: readonly string[], width = 520): number {
  let rows = 1;
  let used = 0;
  for (const label of labels) {
    const w = 35 + 7 * label.length;
    if (used > 0 && used + w > width) {
      rows += 1;
      used = 0;
    }
    used += w;
  }
  return rows;
}

/**
 * The power of ten (a multiple of 3) the y axis is labelled in, so a loss of 6e-9 reads `6` on an
 * axis named `loss (×10⁻⁹)`; 0 when the largest magnitude is already readable (0.01 to 10,000).
 */
export function axisExponent(values: readonly number[]): number {
  const max = values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  if (max === 0 || (max >= 0.01 && max < 10_000)) return 0;
  return Math.floor(Math.log10(max) / 3) * 3;
}

const SUPERSCRIPT: Record<string, string> = { "-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };

/** `loss (×10⁻⁹)`: an axis name with its power of ten. */
export function scaledName(name: string, exponent: number): string {
  return exponent === 0 ? name : `${name} (×10${String(exponent).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]!)})`;
}

/** The power of ten a chart's y axis is labelled in (see `axisExponent`). */
export function chartExponent(chart: Chart): number {
  return chart.type === "line"
    ? axisExponent(chart.series.flatMap((s) => [...s.points.map(([, y]) => y), ...(s.band ?? []).flatMap(([, lo, hi]) => [lo, hi])]))
    : 0;
}

/** The id suffixes of the two stacked series that draw an interval band (lower edge, then width). */
export const BAND_SUFFIXES = ["-band-low", "-band"] as const;

/** Height in px of a chart's plot area; the legend's rows come on top of it. */
export const PLOT_HEIGHT = 300;

/**
 * The parts every chart shares: legend, tooltip, zoom along x. Values are formatted by the page.
 * The legend is plain and wraps onto as many rows as its entries need: a paged legend hides
 * series behind its arrows.
 */
function frame(xName: string, yName: string, labels: readonly string[], options: { category?: string[]; integer?: boolean } = {}): EChartsOption {
  const { category, integer = false } = options;
  return {
    animation: false,
    color: COLORS,
    legend: { type: "plain", top: 0, left: 8, right: 8 },
    tooltip: { trigger: "axis", confine: true, ...(category ? { axisPointer: { type: "shadow" } } : {}) },
    grid: { top: legendTop(labels), bottom: 72, left: 64, right: 24 },
    xAxis: category
      ? { type: "category", name: xName, nameLocation: "middle", nameGap: 26, data: category }
      : // Steps are whole numbers: the tooltip's heading shows `3`, not `3.00`.
        { type: "value", name: xName, nameLocation: "middle", nameGap: 26, minInterval: 1, scale: true, axisPointer: { label: { precision: 0 } } },
    yAxis: { type: "value", name: yName, nameLocation: "middle", nameGap: 44, scale: !category, ...(integer ? { minInterval: 1 } : {}) },
    // filterMode "none": zooming in keeps the line segments that cross the window's edges.
    dataZoom: [
      { type: "inside", xAxisIndex: 0, filterMode: "none" },
      { type: "slider", xAxisIndex: 0, filterMode: "none", height: 16, bottom: 8 },
    ],
  };
}

/**
 * A curve, and when it has one its 95% band as two stacked lines: the lower edge (invisible) and
 * the width on top of it (filled). They share the curve's name, so its legend entry hides both,
 * and stay out of the tooltip, where the curve itself lists the interval.
 */
function lineSeries(series: Series, i: number, n: number, yName: string): LineSeriesOption[] {
  const color = colorOf(i);
  const id = `s${i}`;
  const curve: LineSeriesOption = {
    id,
    name: series.label,
    type: "line",
    color,
    lineStyle: { width: widthOf(i, n), type: lineTypeOf(i) },
    symbol: symbolOf(i),
    symbolSize: 7,
    showSymbol: true,
    emphasis: { focus: "series" },
  };
  const band = series.band;
  if (band === undefined) return [{ ...curve, data: series.points }];
  const interval = new Map(band.map(([x, low, high]) => [x, [low, high]]));
  const rows = series.points.map(([x, y]) => [x, y, ...(interval.get(x) ?? [null, null])]);
  const edge = { type: "line" as const, name: series.label, stack: `${id}-band`, symbol: "none", silent: true, tooltip: { show: false }, color };
  return [
    { ...curve, dimensions: ["step", yName, "95% low", "95% high"], encode: { x: 0, y: 1, tooltip: [1, 2, 3] }, data: rows },
    { ...edge, id: `${id}${BAND_SUFFIXES[0]}`, lineStyle: { opacity: 0 }, data: band.map(([x, low]) => [x, low]) },
    {
      ...edge,
      id: `${id}${BAND_SUFFIXES[1]}`,
      lineStyle: { opacity: 0 },
      areaStyle: { color, opacity: 0.15 },
      data: band.map(([x, low, high]) => [x, high - low]),
    },
  ];
}

/** The grid's top edge: below the legend's rows. */
function legendTop(labels: readonly string[]): number {
  return 18 + 22 * legendRows(labels);
}

/** The height in px a chart's box needs: its plot area and its legend. */
export function chartHeight(chart: Chart): number {
  return PLOT_HEIGHT + legendTop(chart.series.map((s) => s.label));
}

function lineOption(chart: LineChart): EChartsOption {
  const yName = scaledName(chart.yLabel, chartExponent(chart));
  const n = chart.series.length;
  return {
    ...frame(
      "step",
      yName,
      chart.series.map((s) => s.label),
      { integer: chart.integer === true },
    ),
    series: chart.series.flatMap((s, i) => lineSeries(s, i, n, yName)),
  };
}

/** `[-1, 0)`: a bin's label; the last bin is closed. */
function binLabel(edges: readonly number[], i: number): string {
  return `[${edges[i]}, ${edges[i + 1]}${i === edges.length - 2 ? "]" : ")"}`;
}

function histogramOption(chart: HistogramChart): EChartsOption {
  const bins = chart.edges.slice(0, -1).map((_, i) => binLabel(chart.edges, i));
  const series = chart.series.map((s, i): BarSeriesOption => ({
    id: `s${i}`,
    name: s.label,
    type: "bar",
    color: colorOf(i),
    ...(lineTypeOf(i) === "solid" ? {} : { itemStyle: { opacity: 0.5 } }),
    data: s.counts.slice(0, bins.length),
  }));
  return {
    ...frame(
      "advantage",
      "rows",
      chart.series.map((s) => s.label),
      { category: bins, integer: true },
    ),
    series,
  };
}

/** The ECharts option of one chart: plain JSON, so the page can carry it inline. */
export function chartOption(chart: Chart): EChartsOption {
  return chart.type === "line" ? lineOption(chart) : histogramOption(chart);
}
