// Upstream's converters' regular expressions, verbatim: the reference the scanners in
// ../javascript.ts and ../java.ts are compared with on short inputs, where backtracking is cheap.
// This is our own earlier implementation (a port of upstream's Python, before the scanners replaced
// its expressions), not upstream's code; the JavaScript side shares the conversion around the
// matches with ../javascript.ts and differs only in how the matches are found.
import { PyHashDict, type PyObject } from "@envace/python-text";
import { parseJavaValue } from "../java.js";
import { type JavaScriptPatterns, parseArray, parseDict } from "../javascript.js";

/* eslint-disable regexp/no-super-linear-backtracking, regexp/no-super-linear-move -- the reference, run only on short inputs */

const ARRAY_2D = /^(?:\[\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\]|\bnew\s+Array\(\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\))/;
const ARRAY = /^(?:\[([^\n]*?)\]|\bnew\s+Array\(([^\n]*?)\))/;

const UPSTREAM: JavaScriptPatterns = {
  arrayRows: (code) => {
    const nested = ARRAY_2D.exec(code);
    return nested ? [...nested[0].matchAll(/\[([^\n]*?)\]/g)].map((inner) => inner[1]!) : undefined;
  },
  arrayBody: (code) => {
    const flat = ARRAY.exec(code);
    return flat ? (flat[1] ?? flat[2] ?? "") : undefined;
  },
  dictPairs: (code) => {
    const match = /^\{([^\n]*?)\}/.exec(code);
    return match ? [...match[1]!.matchAll(/([^:]+):\s*([^\n]*?)(?:,\s*(?=[^,]+:)|$)/g)].map((pair) => [pair[1]!, pair[2]!]) : undefined;
  },
};

export function javaScriptArray(code: string, itemType: string | undefined): PyObject {
  return parseArray(code, itemType, UPSTREAM);
}

export function javaScriptDict(code: string): PyObject {
  return parseDict(code, UPSTREAM);
}

const WORD = String.raw`[\p{L}\p{N}_]`;

/** Items are read without a declared type here, as `convertJava(…, "ArrayList")` does. */
export function javaArrayList(input: string): PyObject {
  const asList = new RegExp(String.raw`new\s+ArrayList<${WORD}*>\(Arrays\.asList\(([^\n]+?)\)\)`, "u").exec(input);
  if (asList) return asList[1]!.split(",").map((element) => parseJavaValue(element.trim()));
  const adds = new RegExp(String.raw`new\s+ArrayList<${WORD}*>\(\)\s*\{\{\s*([\s\S]+?)\s*\}\}`, "u").exec(input);
  if (adds) return [...adds[1]!.matchAll(/add\(([^\n]+?)\)/g)].map((m) => parseJavaValue(m[1]!.trim()));
  if (new RegExp(String.raw`new\s+ArrayList<${WORD}*>\(\)`, "u").test(input)) return [];
  return input;
}

export function javaArray(input: string): PyObject {
  const match = new RegExp(String.raw`new\s+${WORD}+\[\]\s*\{([^\n]*?)\}`, "u").exec(input);
  if (!match) return input;
  return match[1]!
    .split(",")
    .filter((element) => element.trim() !== "")
    .map((element) => parseJavaValue(element.trim()));
}

export function javaHashMap(input: string): PyObject {
  const match = /new\s+HashMap<[\s\S]*?>\s*\(\)\s*\{\s*\{?\s*([\s\S]*?)\s*\}?\s*\}/.exec(input);
  if (match) {
    const dict = new PyHashDict();
    const puts = match[1]!;
    if (puts.trim() !== "") {
      for (const put of puts.matchAll(/put\("([^\n]*?)",\s*([^\n]*?)\)/g)) dict.set(put[1]!, parseJavaValue(put[2]!.trim()));
    }
    return dict;
  }
  if (/new\s+HashMap<[^\n]*?>\s*\(\)/.test(input)) return new PyHashDict();
  return input;
}
