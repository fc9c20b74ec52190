// `pnpm bench`: what Python's exact text forms cost next to JavaScript's native ones, measured in
// the same run on the same inputs: jsonLoads vs JSON.parse, jsonString vs JSON.stringify,
// floatRepr vs String.
import { floatRepr } from "./float.js";
import { jsonString } from "./json.js";
import { jsonLoads } from "./json-loads.js";

/** Run `body` for at least `minMs` after a warm-up and return the best time of one call, in ms. */
function best(body: () => unknown, minMs = 500): number {
  body();
  let fastest = Infinity;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    const t = performance.now();
    body();
    fastest = Math.min(fastest, performance.now() - t);
  }
  return fastest;
}

// A database-like document: 5,000 records of ids, names (some non-ASCII), prices, counts, lists
// and nested dicts, as benchmark environments load them.
let seed = 1;
const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
const records: Record<string, unknown> = {};
for (let i = 0; i < 5000; i++) {
  records[String(1_000_000_000 + i * 7919)] = {
    name: i % 10 === 0 ? `Zoë Müller ${i}` : `customer ${i}`,
    price: Math.round(random() * 100_000) / 100,
    count: Math.floor(random() * 1000),
    tags: ["a", "b", String(i % 13)],
    address: { city: "Paris", zip: String(75000 + (i % 20)), active: i % 3 === 0, note: null },
  };
}
const text = JSON.stringify(records, null, 2);
const strings = Object.values(records).map((r) => (r as { name: string }).name);
const floats = Array.from({ length: 20_000 }, () => random() * 10 ** Math.floor(random() * 30 - 10));

const rows: [string, number, string, number][] = [
  [`jsonLoads (${(text.length / 1e6).toFixed(1)} MB)`, best(() => jsonLoads(text)), "JSON.parse", best(() => JSON.parse(text))],
  [`jsonString × ${strings.length}`, best(() => strings.map(jsonString)), "JSON.stringify", best(() => strings.map((s) => JSON.stringify(s)))],
  [`floatRepr × ${floats.length}`, best(() => floats.map(floatRepr)), "String", best(() => floats.map(String))],
];
console.log("python-text: Python's text forms next to JavaScript's native ones (best of repeated runs)");
for (const [ours, oursMs, native, nativeMs] of rows) {
  console.log(
    `  ${ours.padEnd(26)} ${oursMs.toFixed(2).padStart(8)} ms   ${native.padEnd(15)} ${nativeMs.toFixed(2).padStart(8)} ms   ×${(oursMs / nativeMs).toFixed(2)}`,
  );
}
