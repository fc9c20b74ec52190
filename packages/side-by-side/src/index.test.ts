import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { compareSideBySide, median, pythonHelpers, warmAndSteady, type SideFigures } from "./index.js";
import { reportPasses } from "./worker.js";

describe("the pass figures", () => {
  it("takes the median of an odd and an even number of values", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 10])).toBe(3.5);
  });

  it("reads warm as passes 2–6 and steady as the second half", () => {
    // Passes 2–6 are 9, 8, 7, 6, 5 (median 7); the second half of ten is 5, 4, 3, 2, 1 (median 3).
    expect(warmAndSteady([100, 9, 8, 7, 6, 5, 4, 3, 2, 1])).toEqual({ warm: 7, steady: 3 });
  });
});

describe("our side's report", () => {
  afterEach(() => vi.restoreAllMocks());

  it("prints one JSON line with every pass, the fewest agreeing and the total", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    const agreeing = [3, 2, 3];
    let pass = 0;
    await reportPasses(
      12,
      3,
      () => ["a", "b", "c"],
      () => agreeing[pass++]!,
      (items) => items.length,
    );
    const figures = JSON.parse(lines[0]!) as SideFigures;
    expect(lines).toHaveLength(1);
    expect({ importMs: figures.importMs, agree: figures.agree, total: figures.total, passes: figures.passMs.length }).toEqual({
      importMs: 12,
      agree: 2,
      total: 3,
      passes: 3,
    });
    expect(figures.maxRssKiB).toBeGreaterThan(0);
  });
});

const python = spawnSync("python3", ["-c", "print(1)"]).status === 0 ? "python3" : undefined;
if (python === undefined) console.log("skipping the Python driver helper's test: python3 not found");

describe.skipIf(python === undefined)("upstream's side (side_by_side.py)", () => {
  it("stands in for a missing module, times the passes and prints the same figures", () => {
    const dir = mkdtempSync(join(tmpdir(), "side-by-side-"));
    try {
      const driver = join(dir, "driver.py");
      writeFileSync(
        driver,
        [
          "import side_by_side",
          'side_by_side.stand_in({"no_such_package_here"})',
          "from no_such_package_here.client import Client",
          "class Sub(Client): pass",
          "side_by_side.imported()",
          "counts = [4, 3, 4, 4]",
          "side_by_side.report(lambda i: counts[i], 4, 5)",
        ].join("\n"),
      );
      const child = spawnSync(python!, ["-S", driver], { encoding: "utf8", env: { ...process.env, PYTHONPATH: pythonHelpers } });
      expect(child.stderr).toBe("");
      const figures = JSON.parse(child.stdout) as SideFigures;
      expect({ agree: figures.agree, total: figures.total, passes: figures.passMs.length, stoodIn: figures.stoodIn }).toEqual({
        agree: 3,
        total: 5,
        passes: 4,
        stoodIn: ["no_such_package_here"],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("compareSideBySide", () => {
  it("refuses fewer than 6 passes, or a fraction of one, with a RangeError before bundling anything", async () => {
    const comparison = {
      title: "t",
      worker: join(tmpdir(), "no-such-worker.bench.ts"),
      upstream: { driver: "driver.py", checkoutVariable: "X", pythonVariable: "Y", what: "x" },
      workloads: [],
      runs: 1,
    };
    await expect(compareSideBySide({ ...comparison, passes: 5 })).rejects.toThrow(new RangeError("passes: 5 is not a whole number of passes ≥ 6"));
    await expect(compareSideBySide({ ...comparison, passes: 6.5 })).rejects.toBeInstanceOf(RangeError);
  });
});
