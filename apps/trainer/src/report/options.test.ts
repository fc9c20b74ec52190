import type { BarSeriesOption, LineSeriesOption } from "echarts";
import { describe, expect, it } from "vitest";
import type { HistogramChart, LineChart } from "./model.js";
import { chartOption } from "./options.js";

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

  it("tells series apart past the eighth colour by their line style", () => {
    const many: LineChart = { ...line, series: Array.from({ length: 10 }, (_, i) => ({ label: `s${i}`, points: [[1, i]] })) };
    const types = (chartOption(many).series as LineSeriesOption[]).map((s) => (s.lineStyle as { type: string }).type);
    expect(types).toEqual([...Array<string>(8).fill("solid"), "dashed", "dashed"]);
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
  });
});
