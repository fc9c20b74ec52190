import type { JsonObject } from "@envace/protocol";

/** Parse JSON without throwing. */
export function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `"array"`, `"null"`, `"object"`, `"string"`, … as a reader would name the JSON type. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * The first number in `value` that JSON cannot carry (`1e999` parses to `Infinity`, which
 * re-serialises as `null`), searched without recursion so deep nesting cannot overflow the stack.
 */
export function findNonFinite(value: unknown): number | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return item;
    } else if (Array.isArray(item)) {
      for (const element of item) stack.push(element);
    } else if (typeof item === "object" && item !== null) {
      for (const element of Object.values(item)) stack.push(element);
    }
  }
  return undefined;
}

/** `JSON.stringify` that reports failure (pathologically deep values) instead of throwing. */
export function tryStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** A short, single-line excerpt of model output for error details. */
export function excerpt(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
