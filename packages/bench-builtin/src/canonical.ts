import type { JsonValue } from "@envace/protocol";

/**
 * JSON with object keys sorted at every level, so two equal states serialise to the same string
 * whatever order their keys were inserted in. Arrays keep their order: it is meaningful.
 */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** FNV-1a over the UTF-16 code units of `text`: a tiny, stable 32-bit content hash. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
