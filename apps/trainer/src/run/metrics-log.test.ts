import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MetricsLog, readMetrics } from "./metrics-log.js";

function tempLog(): string {
  return join(mkdtempSync(join(tmpdir(), "envace-metrics-")), "metrics.jsonl");
}

describe("MetricsLog", () => {
  it("appends records that survive reopening", () => {
    const path = tempLog();
    const log = MetricsLog.open(path);
    log.append({ kind: "train", step: 1, reward: { act: 0.5 } });
    log.append({ kind: "train", step: 2, reward: { act: 0.75 } });
    expect(MetricsLog.open(path).all()).toEqual([
      { kind: "train", step: 1, reward: { act: 0.5 } },
      { kind: "train", step: 2, reward: { act: 0.75 } },
    ]);
  });

  it("drops a torn last line left by a crash and rewrites the file", () => {
    const path = tempLog();
    writeFileSync(path, '{"kind":"train","step":1}\n{"kind":"tra');
    expect(readMetrics(path).torn).toBe(true);
    const torn: number[] = [];
    const log = MetricsLog.open(path, { onTornLine: ({ line }) => torn.push(line) });
    expect(torn).toEqual([2]);
    expect(log.all()).toEqual([{ kind: "train", step: 1 }]);
    expect(readFileSync(path, "utf8")).toBe('{"kind":"train","step":1}\n');
  });

  it("drops records after the resumed checkpoint so redone steps are not duplicated", () => {
    const path = tempLog();
    const log = MetricsLog.open(path);
    for (const step of [1, 2, 3]) log.append({ kind: "train", step });
    const resumed = MetricsLog.open(path, { keep: (r) => r.step <= 2 });
    resumed.append({ kind: "train", step: 3, redone: true });
    expect(readMetrics(path).records.map((r) => [r.step, r.redone ?? false])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
  });

  it("refuses a corrupt line in the middle, naming the line", () => {
    const path = tempLog();
    writeFileSync(path, '{"kind":"train","step":1}\nnot json\n');
    appendFileSync(path, '{"kind":"train","step":2}\n');
    expect(() => readMetrics(path)).toThrow(/metrics\.jsonl:2: not JSON \(/);
  });

  it("refuses a record without its step, naming the line and the field", () => {
    const path = tempLog();
    writeFileSync(path, '{"kind":"train","step":1}\n{"kind":"train","step":"2"}\n');
    expect(() => MetricsLog.open(path)).toThrow(/metrics\.jsonl:2: step: /);
  });
});
