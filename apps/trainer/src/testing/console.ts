import { afterEach, vi } from "vitest";

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
