import type { BarSeriesOption, EChartsOption, LineSeriesOption } from "echarts";
import type { Chart, HistogramChart, LineChart, Series } from "./model.js";

// Past eight series the colours come round again with dashed, then dotted lines, so no two
// series of a chart look alike.
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];
const LINE_TYPES = ["solid", "dashed", "dotted"] as const;

const colorOf = (i: number): string => COLORS[i % COLORS.length]!;
const lineTypeOf = (i: number): (typeof LINE_TYPES)[number] => LINE_TYPES[Math.floor(i / COLORS.length) % LINE_TYPES.length]!;

/** The id suffixes of the two stacked series that draw an interval band (lower edge, then width). */
export const BAND_SUFFIXES = ["-band-low", "-band"] as const;

/** The parts every chart shares: legend, tooltip, zoom along x. Values are formatted by the page. */
function frame(xName: string, yName: string, category?: string[]): EChartsOption {
  return {
    animation: false,
    color: COLORS,
    legend: { type: "scroll", top: 0 },
    tooltip: { trigger: "axis", confine: true, ...(category ? { axisPointer: { type: "shadow" } } : {}) },
    grid: { top: 40, bottom: 72, left: 64, right: 24 },
    xAxis: category
      ? { type: "category", name: xName, nameLocation: "middle", nameGap: 26, data: category }
      : // Steps are whole numbers: the tooltip's heading shows `3`, not `3.00`.
        { type: "value", name: xName, nameLocation: "middle", nameGap: 26, minInterval: 1, scale: true, axisPointer: { label: { precision: 0 } } },
    yAxis: { type: "value", name: yName, nameLocation: "middle", nameGap: 44, scale: !category },
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
function lineSeries(series: Series, i: number, yName: string): LineSeriesOption[] {
  const color = colorOf(i);
  const id = `s${i}`;
  const curve: LineSeriesOption = {
    id,
    name: series.label,
    type: "line",
    color,
    lineStyle: { width: 2, type: lineTypeOf(i) },
    symbolSize: 5,
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
    { ...edge, id: `${id}${BAND_SUFFIXES[1]}`, lineStyle: { opacity: 0 }, areaStyle: { color, opacity: 0.15 }, data: band.map(([x, low, high]) => [x, high - low]) },
  ];
}

function lineOption(chart: LineChart): EChartsOption {
  return { ...frame("step", chart.yLabel), series: chart.series.flatMap((s, i) => lineSeries(s, i, chart.yLabel)) };
}

/** `[-1, 0)`: a bin's label; the last bin is closed. */
function binLabel(edges: readonly number[], i: number): string {
  return `[${edges[i]}, ${edges[i + 1]}${i === edges.length - 2 ? "]" : ")"}`;
}

function histogramOption(chart: HistogramChart): EChartsOption {
  const bins = chart.edges.slice(0, -1).map((_, i) => binLabel(chart.edges, i));
  const series = chart.series.map(
    (s, i): BarSeriesOption => ({
      id: `s${i}`,
      name: s.label,
      type: "bar",
      color: colorOf(i),
      ...(lineTypeOf(i) === "solid" ? {} : { itemStyle: { opacity: 0.5 } }),
      data: s.counts.slice(0, bins.length),
    }),
  );
  return { ...frame("advantage", "rows", bins), series };
}

/** The ECharts option of one chart: plain JSON, so the page can carry it inline. */
export function chartOption(chart: Chart): EChartsOption {
  return chart.type === "line" ? lineOption(chart) : histogramOption(chart);
}
