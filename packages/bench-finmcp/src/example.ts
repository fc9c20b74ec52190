import { fileURLToPath } from "node:url";
import { formatSummary, loadSamples, rescoreFile } from "@envace/bench-finmcp";

// Score recorded predictions offline: samples in the FinMCP-Bench format, one prediction a line
// ({"id", "predicted": [tool names in order]}, or "error" to drop the sample).
const fixtures = (name: string): string => fileURLToPath(new URL(`testing/fixtures/${name}`, import.meta.url));
const samples = await loadSamples(fixtures("samples.jsonl"));
const { summary } = await rescoreFile(samples, fixtures("predictions.jsonl"));
console.log(formatSummary(summary));
