import { afterEach, expect, it, vi } from "vitest";

/**
 * What a command prints, as a person would see it: console.log lines, console.error lines (its
 * one-line faults), and stderr's progress bars swallowed. Spies are restored after each test.
 */
export function captureConsole(): { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void out.push(args.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void err.push(args.join(" ")));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  return { out: () => out.join("\n"), err: () => err.join("\n") };
}

afterEach(() => vi.restoreAllMocks());

/** What went to stderr (progress bars and notices) since `captureConsole` swallowed it. */
export function stderrWritten(): string {
  return vi
    .mocked(process.stderr, true)
    .write.mock.calls.map(([chunk]) => String(chunk))
    .join("");
}

/**
 * One test per command line that `run` must refuse: its exit code (2 for a usage error, 1 for a
 * fault) and what it says on the console's error stream.
 */
export function itRefuses(run: (argv: string[]) => Promise<number>, cases: [argv: string[], code: 1 | 2, says: string][]): void {
  it.each(cases)("refuses %j: exit %i, %s", async (argv, code, says) => {
    const io = captureConsole();
    expect(await run(argv)).toBe(code);
    expect(io.err()).toContain(says);
  });
}
