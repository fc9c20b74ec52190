import { EnvaceError } from "@envace/errors";
import type { PyDict, PyValue } from "@envace/python-text";

/*
 * Reading a task's `environment` as upstream's pydantic models validate it (lax mode): ints in
 * float fields become floats, integral floats in int fields become ints, unknown keys are dropped.
 * A value pydantic would reject is a `FieldError` naming its path.
 */

/** A field of the task's environment that upstream's models would reject. */
export class FieldError extends EnvaceError {
  override readonly code = "vita-field";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** One object of the environment, read field by field. */
export class Fields {
  constructor(
    private readonly dict: PyDict,
    readonly path: string,
  ) {}

  static of(value: PyValue | undefined, path: string): Fields {
    if (!(value instanceof Map)) throw new FieldError(path, "expected an object");
    return new Fields(value, path);
  }

  at(key: string): string {
    return this.path === "" ? key : `${this.path}.${key}`;
  }

  has(key: string): boolean {
    return this.dict.has(key);
  }

  raw(key: string): PyValue | undefined {
    return this.dict.get(key);
  }

  private required(key: string): PyValue {
    const value = this.dict.get(key);
    if (value === undefined) throw new FieldError(this.at(key), "required");
    return value;
  }

  /** A field with a default: the fallback when absent (required when there is none), else read as `read` reads it. */
  private defaulted<T>(key: string, fallback: T | undefined, read: (value: PyValue, path: string) => T): T {
    if (!this.dict.has(key) && fallback !== undefined) return fallback;
    return read(this.required(key), this.at(key));
  }

  str(key: string, fallback?: string): string {
    return this.defaulted(key, fallback, readStr);
  }

  /** An `Optional[...]` field: the fallback when absent, None as null, else read as `read` reads it. */
  private optional<T>(key: string, fallback: T | null, read: (value: PyValue, path: string) => T): T | null {
    const value = this.dict.get(key);
    if (value === undefined) return fallback;
    return value === null ? null : read(value, this.at(key));
  }

  optStr(key: string, fallback: string | null): string | null {
    return this.optional(key, fallback, readStr);
  }

  float(key: string, fallback?: number): number {
    return this.defaulted(key, fallback, readFloat);
  }

  optFloat(key: string, fallback: number | null): number | null {
    return this.optional(key, fallback, readFloat);
  }

  int(key: string): bigint {
    return readInt(this.required(key), this.at(key));
  }

  optInt(key: string, fallback: bigint | null): bigint | null {
    return this.optional(key, fallback, readInt);
  }

  bool(key: string): boolean {
    const value = this.required(key);
    if (typeof value === "boolean") return value;
    if (typeof value === "bigint" && (value === 0n || value === 1n)) return value === 1n;
    throw new FieldError(this.at(key), "expected a boolean");
  }

  strList(key: string): string[] {
    return readList(this.required(key), this.at(key)).map((item, i) => readStr(item, `${this.at(key)}.${i}`));
  }

  list(key: string, fallback?: PyValue[]): PyValue[] {
    return this.defaulted(key, fallback, readList);
  }

  literal<T extends string>(key: string, allowed: readonly T[], fallback?: T): T {
    const value = this.str(key, fallback);
    if (!(allowed as readonly string[]).includes(value)) throw new FieldError(this.at(key), `expected one of ${allowed.join(", ")}`);
    return value as T;
  }
}

export function readStr(value: PyValue, path: string): string {
  if (typeof value !== "string") throw new FieldError(path, "expected a string");
  return value;
}

export function readFloat(value: PyValue, path: string): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  throw new FieldError(path, "expected a number");
}

export function readInt(value: PyValue, path: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  throw new FieldError(path, "expected an integer");
}

export function readList(value: PyValue, path: string): PyValue[] {
  if (!Array.isArray(value)) throw new FieldError(path, "expected a list");
  return value;
}

/** The entries of a dict field, each with its path. */
export function readDict(value: PyValue | undefined, path: string): [string, PyValue, string][] {
  if (!(value instanceof Map)) throw new FieldError(path, "expected an object");
  return [...value.entries()].map(([key, item]) => [key, item, `${path}.${key}`]);
}
