import { spawnSync } from "node:child_process";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { formatDuration, ProgressBar } from "./progress.js";

/** A stream that is not a terminal, as in CI logs, collecting what is written. */
function logStream(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe("formatDuration", () => {
  it("formats seconds, minutes and hours, and has no estimate for what cannot be estimated", () => {
    expect(formatDuration(12.4)).toBe("12s");
    expect(formatDuration(185)).toBe("3m05s");
    expect(formatDuration(3720)).toBe("1h02m");
    expect(formatDuration(Number.NaN)).toBe("?");
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe("?");
  });
});

describe("ProgressBar", () => {
  it("prints whole lines off a terminal: one at the start and one when done", () => {
    const log = logStream();
    const bar = new ProgressBar("eval", 4, log.stream, 60_000);
    bar.tick();
    bar.tick("reward 0.40", 3);
    const lines = log
      .text()
      .split("\n")
      .filter((line) => line.length > 0);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^eval \[-{24}\] 0\/4 0% 0s ETA \? $/);
    expect(lines[1]).toMatch(/^eval \[#{24}\] 4\/4 100% \d+s ETA 0s reward 0\.40$/);
  });

  it("does not keep a command alive that stops before the end", () => {
    const script = `import { ProgressBar } from ${JSON.stringify(fileURLToPath(new URL("./progress.ts", import.meta.url)))};
new ProgressBar("train", 10, process.stderr, 50).tick();`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { timeout: 20_000, encoding: "utf8" });
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
    expect(child.stderr).toMatch(/^train \[-{24}\] 0\/10 0% /);
  });
});
