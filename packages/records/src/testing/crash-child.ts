// A writer for the fault-injection test: it runs one durable write and, at the crash point named
// on its command line, says so on stdout and waits to be killed (SIGKILL) by the test.
//
//   crash-child <file|dir|jsonl|torn> <path> <point>[#occurrence]
import { appendFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { replaceDirectory, writeFileAtomically } from "../atomic.js";
import { crashPoint, onCrashPoint } from "../crash-points.js";
import { checkpointFiles, fileContents, lineOf } from "./crash-fixtures.js";

const [scenario, path, target] = process.argv.slice(2);
if (scenario === undefined || path === undefined || target === undefined)
  throw new Error("usage: crash-child <file|dir|jsonl|torn> <path> <point>[#occurrence]");
const [targetPoint, occurrence = "1"] = target.split("#");
const seen = new Map<string, number>();
const stop = new Int32Array(new SharedArrayBuffer(4));
onCrashPoint((point) => {
  const count = (seen.get(point) ?? 0) + 1;
  seen.set(point, count);
  if (point !== targetPoint || String(count) !== occurrence) return;
  writeSync(1, `at ${target}\n`);
  // Block here, in the middle of the write, until the test's SIGKILL lands.
  Atomics.wait(stop, 0, 0, 30_000);
  throw new Error(`not killed at ${target}`);
});

switch (scenario) {
  case "file":
    writeFileAtomically(path, fileContents(2));
    break;
  case "dir":
    await replaceDirectory(path, async (dir) => {
      const [first, second] = checkpointFiles(2);
      writeFileAtomically(join(dir, first.name), first.data);
      crashPoint("fill:half");
      writeFileAtomically(join(dir, second.name), second.data);
      await Promise.resolve();
    });
    break;
  case "jsonl": {
    // Loaded only here: a child that writes whole files starts faster without the schema library.
    const { JsonLinesFile, Line } = await jsonLines();
    const file = JsonLinesFile.open(path, Line, { durable: true });
    for (let n = file.records.length + 1; n <= 4; n++) file.append({ n, text: lineOf(n) });
    break;
  }
  case "torn": {
    // What a write cut short by the kernel leaves: part of a record's line, without its newline.
    const { JsonLinesFile, Line } = await jsonLines();
    const file = JsonLinesFile.open(path, Line, { durable: true });
    file.append({ n: 1, text: lineOf(1) });
    const whole = `${JSON.stringify({ n: 2, text: lineOf(2) })}\n`;
    appendFileSync(path, whole.slice(0, Math.floor(whole.length / 2)));
    crashPoint("torn");
    break;
  }
  default:
    throw new Error(`unknown scenario ${scenario}`);
}
writeSync(1, "finished\n");

async function jsonLines() {
  const [{ JsonLinesFile }, { z }] = await Promise.all([import("../json-lines.js"), import("zod")]);
  return { JsonLinesFile, Line: z.object({ n: z.number().int(), text: z.string() }) };
}
