import { readFileSync } from "node:fs";
import { InvariantError } from "@envace/errors";
import { HttpError } from "@envace/http";
import { RecordError } from "@envace/protocol";
import { TinkerTimeoutError } from "@envace/tinker";
import { CheckpointError } from "@envace/training";
import { describe, expect, it } from "vitest";
import { ConfigError } from "@envace/config";
import { DataError } from "./data/errors.js";
import { describeFault, UsageError } from "./faults.js";

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("nothing thrown");
}

describe("describeFault", () => {
  it.each([
    ["a config error", new ConfigError("run.yaml:3: rollout.rollouts_per_task: Invalid input"), "run.yaml:3: rollout.rollouts_per_task: Invalid input"],
    ["a bad record", new RecordError({ file: "train.jsonl", line: 4 }, [{ path: "messages", message: "Required" }]), "train.jsonl:4: messages: Required"],
    [
      "a server that does not answer",
      new HttpError("connection", "http://127.0.0.1:9/v1/models", "connection failed (fetch failed)"),
      "http://127.0.0.1:9/v1/models: connection failed (fetch failed)",
    ],
    [
      "Tinker giving up",
      new TinkerTimeoutError("http://127.0.0.1:9/api/v1/client/config: gave up after 3 attempts"),
      "http://127.0.0.1:9/api/v1/client/config: gave up after 3 attempts",
    ],
    ["a missing file", thrownBy(() => readFileSync("/nonexistent/envace.yaml")), "ENOENT: no such file or directory, open '/nonexistent/envace.yaml'"],
    [
      "a refused fetch",
      new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) }),
      "fetch failed (ECONNREFUSED)",
    ],
    [
      "a checkpoint it cannot use (an EnvaceError of another package)",
      new CheckpointError("runs/x/policy: no model.safetensors"),
      "runs/x/policy: no model.safetensors",
    ],
    ["a timed-out fetch", new DOMException("The operation was aborted due to timeout", "TimeoutError"), "The operation was aborted due to timeout"],
  ])("%s is the user's: its message alone, exit 1", (_, error, message) => {
    expect(describeFault("eval bfcl", error, false)).toEqual({ lines: [`envace eval bfcl: ${message}`], exitCode: 1 });
  });

  it("keeps every line of a config with several bad keys, without a stack", () => {
    const error = new DataError([
      new RecordError({ file: "a.jsonl", line: 1 }, [{ path: "uuid", message: "Required" }]),
      new RecordError({ file: "a.jsonl", line: 2 }, [{ path: "tools", message: "Required" }]),
    ]);
    expect(describeFault("train", error, false)).toEqual({
      lines: ["envace train: 2 bad records:\na.jsonl:1: uuid: Required\na.jsonl:2: tools: Required"],
      exitCode: 1,
    });
  });

  it("a usage error found by the command: its line, where to read the usage, exit 2", () => {
    expect(describeFault("eval bfcl", new UsageError('--category: unknown BFCL category "x"'), false)).toEqual({
      lines: ['envace eval bfcl: --category: unknown BFCL category "x"', "(see envace eval bfcl --help)"],
      exitCode: 2,
    });
  });

  it("a bug: its first line and how to see the stack; debug prints it", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'steps')\nmore detail");
    expect(describeFault("train", bug, false)).toEqual({
      lines: ["envace train: Cannot read properties of undefined (reading 'steps')", "(run with --log-level debug for the stack trace)"],
      exitCode: 1,
    });
    const debug = describeFault("train", bug, true);
    expect(debug.exitCode).toBe(1);
    expect(debug.lines[0]).toBe("envace train: Cannot read properties of undefined (reading 'steps')");
    expect(debug.lines[1]).toMatch(/^TypeError: Cannot read properties[\s\S]*\n\s+at .*faults\.test\.ts/);
  });

  it("a failed internal check (InvariantError) is a bug, though it is an EnvaceError", () => {
    expect(describeFault("train", new InvariantError("unreachable: a role without rows"), false)).toEqual({
      lines: ["envace train: unreachable: a role without rows", "(run with --log-level debug for the stack trace)"],
      exitCode: 1,
    });
  });

  it("a value that is not an Error is a bug too", () => {
    expect(describeFault("demo", "boom", false)).toEqual({ lines: ["envace demo: boom", "(run with --log-level debug for the stack trace)"], exitCode: 1 });
  });
});
