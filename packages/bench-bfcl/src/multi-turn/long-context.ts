import type { PyObject } from "@envace/python-text";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { InputError } from "@envace/protocol";
import { evaluate } from "../py/evaluate.js";
import { parseExpression } from "../py/syntax.js";
import type { LongContextFiller } from "./environment.js";

/** The names of the extensions the environments read in long-context runs. */
export const FILLER_NAMES = [
  "FILE_CONTENT_EXTENSION",
  "FILES_TAIL_USED",
  "POPULATE_FILE_EXTENSION",
  "MA_5_EXTENSION",
  "MA_20_EXTENSION",
  "ORDER_DETAIL_EXTENSION",
  "TECHNOLOGY_EXTENSION",
  "AUTOMOBILE_EXTENSION",
  "TRANSACTION_HISTORY_EXTENSION",
  "WATCH_LIST_EXTENSION",
  "CREDIT_CARD_EXTENSION",
  "BOOKING_RECORD_EXTENSION",
  "CAR_STATUS_METADATA_EXTENSION",
  "INTERMEDIARY_CITIES",
  "LONG_WEATHER_EXTENSION",
  "PARKING_BRAKE_INSTRUCTION",
] as const;

/**
 * Read the long-context filler from upstream's `long_context.py` (a module of literal
 * assignments): the extra files, records and text that `multi_turn_long_context` entries
 * bury the relevant data in. The filler is upstream's content and is read from the user's copy
 * of the repository rather than shipped here.
 */
export function parseLongContextModule(source: string, file = "long_context.py"): Map<string, PyObject> {
  const filler = new Map<string, PyObject>();
  const starts = [...source.matchAll(/^([A-Za-z_]\w*)\s*=/gm)];
  starts.forEach((match, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.index : source.length;
    const text = source.slice(match.index + match[0].length, end);
    try {
      filler.set(match[1]!, evaluate(parseExpression(text)));
    } catch (error) {
      throw new InputError(`${file}: cannot read ${match[1]!}: ${(error as Error).message}`, { cause: error });
    }
  });
  const missing = FILLER_NAMES.filter((name) => !filler.has(name));
  if (missing.length > 0) throw new InputError(`${file}: missing ${missing.join(", ")}`);
  return filler;
}

/**
 * Where upstream keeps `long_context.py` relative to its data folder
 * (`bfcl_eval/data` → `bfcl_eval/eval_checker/multi_turn_eval/func_source_code`).
 */
export function defaultLongContextSource(dataDir: string): string | undefined {
  const candidate = resolve(dataDir, "..", "eval_checker", "multi_turn_eval", "func_source_code", "long_context.py");
  if (existsSync(candidate)) return candidate;
  const inside = join(dataDir, "long_context.py");
  return existsSync(inside) ? inside : undefined;
}

export async function loadLongContextFiller(file: string): Promise<LongContextFiller> {
  return parseLongContextModule(await readFile(file, "utf8"), file);
}
