import type { BarSeriesOption, LineSeriesOption } from "echarts";
import { describe, expect, it } from "vitest";
import type { HistogramChart, LineChart } from "./model.js";
import { axisExponent, chartExponent, chartHeight, chartOption, legendRows, scaledName } from "./options.js";

const line: LineChart = {
  type: "line",
  id: "eval",
  title: "success",
  yLabel: "success rate",
  series: [
    {
      label: "rehearsal none",
      points: [
        [0, 0.1],
        [3, 0.3],
      ],
      band: [
        [0, 0.02, 0.4],
        [3, 0.1, 0.6],
      ],
    },
    { label: "rehearsal parallel:2", points: [[3, 0.4]] },
  ],
};

describe("chartOption", () => {
  it("is plain JSON, so the page can carry it inline", () => {
    const option = chartOption(line);
    expect(JSON.parse(JSON.stringify(option))).toEqual(option);
  });

  it("draws a band as a hidden lower edge and the interval's width stacked on it, both named after the curve", () => {
    const series = chartOption(line).series as LineSeriesOption[];
    expect(series.map((s) => [s.id, s.name])).toEqual([
      ["s0", "rehearsal none"],
      ["s0-band-low", "rehearsal none"],
      ["s0-band", "rehearsal none"],
      ["s1", "rehearsal parallel:2"],
    ]);
    // The curve's rows carry the interval for the tooltip: [step, rate, low, high].
    expect(series[0]!.data).toEqual([
      [0, 0.1, 0.02, 0.4],
      [3, 0.3, 0.1, 0.6],
    ]);
    expect(series[1]!.data).toEqual([
      [0, 0.02],
      [3, 0.1],
    ]);
    // Widths 0.4 − 0.02 and 0.6 − 0.1.
    const widths = (series[2]!.data as [number, number][]).map(([x, w]) => [x, Number(w.toFixed(12))]);
    expect(widths).toEqual([
      [0, 0.38],
      [3, 0.5],
    ]);
    expect(series[1]!.stack).toBe(series[2]!.stack);
    expect(series[3]!.data).toEqual([[3, 0.4]]);
  });

  it("tells series apart past the eighth colour by their line style, and every series by its marker and width", () => {
    const many: LineChart = { ...line, series: Array.from({ length: 10 }, (_, i) => ({ label: `s${i}`, points: [[1, 0.5]] })) };
    const series = chartOption(many).series as LineSeriesOption[];
    const types = series.map((s) => (s.lineStyle as { type: string }).type);
    expect(types).toEqual([...Array<string>(8).fill("solid"), "dashed", "dashed"]);
    // Seven markers, then round again; widths from 4 px down to 1.5 px (4 − 2.5·i/9).
    expect(series.slice(0, 8).map((s) => s.symbol)).toEqual(["circle", "rect", "triangle", "diamond", "roundRect", "pin", "arrow", "circle"]);
    expect(series.map((s) => Number((s.lineStyle as { width: number }).width.toFixed(3)))).toEqual([
      4, 3.722, 3.444, 3.167, 2.889, 2.611, 2.333, 2.056, 1.778, 1.5,
    ]);
  });

  it("shows every legend entry: a plain legend that wraps, with the plot pushed below its rows", () => {
    // 35 + 7·len px an entry in 520 px: "exact (rehearsal none)" is 22 chars → 189 px; two fit a row, not three.
    expect(legendRows(["exact (rehearsal none)"])).toBe(1);
    expect(legendRows(Array<string>(2).fill("exact (rehearsal none)"))).toBe(1);
    expect(legendRows(Array<string>(3).fill("exact (rehearsal none)"))).toBe(2);
    expect(legendRows(Array<string>(8).fill("exact (rehearsal none)"))).toBe(4);
    const eight: LineChart = { ...line, series: Array.from({ length: 8 }, () => ({ label: "exact (rehearsal none)", points: [[1, 0.5]] })) };
    const option = chartOption(eight);
    expect((option.legend as { type: string }).type).toBe("plain");
    expect((option.grid as { top: number }).top).toBe(18 + 22 * 4);
    expect(chartHeight(eight)).toBe(300 + 18 + 22 * 4);
  });

  it("labels a tiny or huge y axis in a power of ten that is a multiple of 3, and a readable one as it is", () => {
    expect(axisExponent([6e-9, 2e-9])).toBe(-9);
    expect(axisExponent([0.005])).toBe(-3);
    expect(axisExponent([-0.004, 0.001])).toBe(-3);
    expect(axisExponent([50_000])).toBe(3);
    expect(axisExponent([0.01, 0.5])).toBe(0);
    expect(axisExponent([9999])).toBe(0);
    expect(axisExponent([0, 0])).toBe(0);
    expect(scaledName("loss", -9)).toBe("loss (×10⁻⁹)");
    expect(scaledName("loss", 3)).toBe("loss (×10³)");
    const loss: LineChart = { type: "line", id: "loss", title: "loss", yLabel: "loss", series: [{ label: "loss", points: [[1, 6e-9]] }] };
    expect((chartOption(loss).yAxis as { name: string }).name).toBe("loss (×10⁻⁹)");
    expect(chartExponent(loss)).toBe(-9);
  });

  it("gives count axes whole-number ticks only", () => {
    const counts: LineChart = {
      type: "line",
      id: "errors",
      title: "errors",
      yLabel: "count",
      integer: true,
      series: [{ label: "parse errors", points: [[1, 2]] }],
    };
    expect((chartOption(counts).yAxis as { minInterval?: number }).minInterval).toBe(1);
    expect((chartOption(line).yAxis as { minInterval?: number }).minInterval).toBeUndefined();
  });

  it("labels histogram bins by their edges, the last one closed", () => {
    const hist: HistogramChart = {
      type: "histogram",
      id: "advantages",
      title: "advantages",
      edges: [-1, 0, 1],
      series: [{ label: "act", counts: [6, 6] }],
    };
    const option = chartOption(hist);
    expect((option.xAxis as { data: string[] }).data).toEqual(["[-1, 0)", "[0, 1]"]);
    expect((option.series as BarSeriesOption[])[0]!.data).toEqual([6, 6]);
    expect((option.yAxis as { minInterval?: number }).minInterval).toBe(1);
  });
});
