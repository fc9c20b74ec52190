import { describe, expect, it } from "vitest";
import { EnvaceError, InvariantError, isRetryableStatus, LocatedError } from "./envace-error.js";

// Two unrelated kinds, as two packages would declare them.
class CheckpointError extends EnvaceError {
  override readonly code = "checkpoint";
}

class RateLimitError extends EnvaceError {
  override readonly code = "rate-limit";
  override readonly isRetryable = true;
}

/** A kind about one file, named first in the message. */
class ManifestError extends LocatedError {
  override readonly code = "manifest";
}

/** One kind whose retryability depends on the reply. */
class StatusError extends EnvaceError {
  override readonly code = "http-status";
  override readonly isRetryable: boolean;
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
    this.isRetryable = isRetryableStatus(status);
  }
}

describe("EnvaceError", () => {
  it("carries each subclass's code and keeps the message as given", () => {
    const error = new CheckpointError("runs/a: not a checkpoint");
    expect(error.code).toBe("checkpoint");
    expect(error.message).toBe("runs/a: not a checkpoint");
    expect(new InvariantError("unreachable").code).toBe("invariant");
  });

  it("is an Error and an EnvaceError, and only an instance of its own subclass", () => {
    const error: unknown = new CheckpointError("x");
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(EnvaceError);
    expect(error).toBeInstanceOf(CheckpointError);
    expect(error).not.toBeInstanceOf(RateLimitError);
    expect(error).not.toBeInstanceOf(InvariantError);
    expect(new Error("plain")).not.toBeInstanceOf(EnvaceError);
  });

  it("names the subclass, so a stack trace or String(error) says which kind", () => {
    expect(new CheckpointError("bad").name).toBe("CheckpointError");
    expect(String(new InvariantError("unreachable"))).toBe("InvariantError: unreachable");
  });

  it("is not retryable unless the kind says so", () => {
    expect(new CheckpointError("x").isRetryable).toBe(false);
    expect(new InvariantError("x").isRetryable).toBe(false);
    expect(new RateLimitError("slow down").isRetryable).toBe(true);
    expect(new StatusError(503).isRetryable).toBe(true);
    expect(new StatusError(404).isRetryable).toBe(false);
  });

  it("keeps the cause it was given", () => {
    const cause = new Error("ENOENT: no such file");
    const error = new CheckpointError("runs/a: cannot read", { cause });
    expect(error.cause).toBe(cause);
    expect(new CheckpointError("no cause").cause).toBeUndefined();
  });
});

describe("LocatedError", () => {
  it("names its place first in the message and keeps it apart, with the subclass's code and the cause", () => {
    const cause = new Error("ENOENT: no such file");
    const error = new ManifestError("runs/a/manifest.json", "cannot read", { cause });
    expect(error.message).toBe("runs/a/manifest.json: cannot read");
    expect(error.where).toBe("runs/a/manifest.json");
    expect(error.code).toBe("manifest");
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(EnvaceError);
    expect(String(error)).toBe("ManifestError: runs/a/manifest.json: cannot read");
  });
});

describe("isRetryableStatus", () => {
  it("retries 408, 409, 429 and 5xx, and nothing else", () => {
    expect([408, 409, 429, 500, 502, 503, 599].map(isRetryableStatus)).toEqual([true, true, true, true, true, true, true]);
    expect([200, 400, 401, 403, 404, 422].map(isRetryableStatus)).toEqual([false, false, false, false, false, false]);
  });
});
