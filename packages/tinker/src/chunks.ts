import type { Datum } from "@envace/training";

/**
 * Split datums into requests of at most `maxDatums` datums and about `maxBytes` of JSON each, the
 * way the Python SDK does. Each chunk is a range [start, end) of the input.
 */
export function chunkRanges(data: readonly Datum[], maxDatums: number, maxBytes: number): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 0;
  let bytes = 0;
  data.forEach((datum, i) => {
    // About 20 bytes per number in JSON, for the tokens and up to five per-token tensors.
    const size = datum.tokens.length * 6 * 20;
    if (i > start && (i - start >= maxDatums || bytes + size > maxBytes)) {
      ranges.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += size;
  });
  if (data.length > start) ranges.push([start, data.length]);
  return ranges;
}

/**
 * Merge the metrics of several chunks by each key's `name:reduction` suffix: `sum` adds, `mean`
 * weighs by datums, `min`/`max` keep the extreme. Other suffixes are dropped, as the SDK does.
 * Names come from the server: the result has no prototype, so every name is data and no other is present.
 */
export function mergeMetrics(parts: readonly { metrics: Record<string, number>; datums: number }[]): Record<string, number> {
  const merged = Object.create(null) as Record<string, number>;
  if (parts.length === 1) return Object.assign(merged, parts[0]!.metrics);
  const totalDatums = parts.reduce((s, p) => s + p.datums, 0);
  for (const { metrics, datums } of parts) {
    for (const [key, value] of Object.entries(metrics)) {
      const reduction = key.split(":")[1];
      const previous = merged[key];
      switch (reduction) {
        case "sum":
          merged[key] = (previous ?? 0) + value;
          break;
        case "mean":
          merged[key] = (previous ?? 0) + (value * datums) / totalDatums;
          break;
        case "min":
          merged[key] = Math.min(previous ?? Infinity, value);
          break;
        case "max":
          merged[key] = Math.max(previous ?? -Infinity, value);
          break;
        default:
          break;
      }
    }
  }
  return merged;
}
