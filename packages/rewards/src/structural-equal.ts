import type { JsonObject, JsonValue } from "@envace/protocol";

type Container = JsonObject | JsonValue[];

const isContainer = (value: JsonValue | undefined): value is Container => typeof value === "object" && value !== null;

/**
 * Equality of JSON values: arrays item by item, objects key by key (their order ignored), and
 * anything else by `leaf`, which is where the checks that share this walk differ.
 */
export function structuralEqual(
  a: JsonValue | undefined,
  b: JsonValue | undefined,
  leaf: (a: JsonValue | undefined, b: JsonValue | undefined) => boolean,
): boolean {
  if (!isContainer(a) || !isContainer(b)) return leaf(a, b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => structuralEqual(v, b[i], leaf));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && structuralEqual(a[key], b[key], leaf));
}
