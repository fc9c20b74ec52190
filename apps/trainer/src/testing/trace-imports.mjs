// `node --import ./trace-imports.mjs …` appends the URL of every module the program loads, one a
// line, to the file named by ENVACE_TRACE_IMPORTS: what a test of lazy loading reads. The same
// file is the hooks module, so it registers itself only on the main thread.
import { appendFileSync } from "node:fs";
import { register } from "node:module";
import { isMainThread } from "node:worker_threads";

if (isMainThread) register(import.meta.url);

export async function load(url, context, nextLoad) {
  if (process.env.ENVACE_TRACE_IMPORTS) appendFileSync(process.env.ENVACE_TRACE_IMPORTS, `${url}\n`);
  return nextLoad(url, context);
}
