import type { PyHashDict } from "@envace/python-text";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCategory } from "../data.js";
import type { SingleTurnEntry } from "../data.js";
import { decodeSingleTurnResult, DecodeError } from "../decode.js";
import { parsePyJson } from "../py/json.js";
import { missingDataNote, sharedDataDir } from "../shared-data.js";
import { checkAst, languageOf } from "./ast.js";

const data = sharedDataDir();
if (!data) console.warn(missingDataNote("BFCL AST conformance"));
const verdictsDir = data ? join(data, "bfcl-verdicts") : "";
const categories = data
  ? readdirSync(verdictsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
  : [];

function jsonLines(file: string): PyHashDict[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => parsePyJson(line) as PyHashDict);
}

describe.skipIf(!data)("agreement with the upstream AST checker's verdicts", () => {
  for (const category of categories) {
    describe(category, async () => {
      const entries = new Map((await loadCategory(join(data!, "bfcl"), category)).map((e) => [e.id, e as SingleTurnEntry]));
      const variants = readdirSync(join(verdictsDir, category))
        .filter((f) => f.endsWith(".expected.jsonl"))
        .map((f) => f.replace(".expected.jsonl", ""));
      it.each(variants)("%s", (variant) => {
        const outputs = jsonLines(join(verdictsDir, category, `${variant}.jsonl`));
        const expected = new Map(
          jsonLines(join(verdictsDir, category, `${variant}.expected.jsonl`)).map((d) => [d.get("id") as string, d.get("valid") as boolean]),
        );
        const disagreements: string[] = [];
        for (const output of outputs) {
          const id = output.get("id") as string;
          const entry = entries.get(id)!;
          let valid: boolean;
          try {
            const calls = decodeSingleTurnResult(output.get("result")!, languageOf(category));
            valid = checkAst({ category, functions: entry.functions, output: calls, answer: entry.answer! }).valid;
          } catch (error) {
            if (!(error instanceof DecodeError)) throw error;
            valid = false;
          }
          if (valid !== expected.get(id)) disagreements.push(`${id}: upstream ${expected.get(id)}, ours ${valid}`);
        }
        expect(outputs.length).toBe(expected.size);
        expect(disagreements).toEqual([]);
      });
    });
  }
});
