import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth and no whitespace, so equal values always give
 * equal text whatever order their keys were built in. `undefined` object members are dropped
 * (as `JSON.stringify` does); non-finite numbers, which JSON cannot carry, are rejected.
 */
export function canonicalJson(value: unknown): string {
  return write(value, "$");
}

function write(value: unknown, path: string): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${path} is ${value}, which JSON cannot represent`);
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map((v, i) => write(v ?? null, `${path}[${i}]`)).join(",")}]`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${write(record[key], `${path}.${key}`)}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonicalJson: ${path} is a ${typeof value}, which JSON cannot represent`);
  }
}

/** Hex SHA-256 of a string (UTF-8). */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** A content address for any JSON value: the SHA-256 of its canonical JSON. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
