// Upstream's converters as regular expressions, verbatim: the reference the scanners in
// ../javascript.ts and ../java.ts are compared with on short inputs, where backtracking is cheap.
import { PyException, PyHashDict, type PyObject } from "@envace/python-text";
import { parseJavaValue } from "../java.js";
import { convertJavaScript, parseJavaScriptValue } from "../javascript.js";

/* eslint-disable regexp/no-super-linear-backtracking, regexp/no-super-linear-move -- the reference, run only on short inputs */

const ARRAY_2D = /^(?:\[\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\]|\bnew\s+Array\(\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\))/;
const ARRAY = /^(?:\[([^\n]*?)\]|\bnew\s+Array\(([^\n]*?)\))/;

export function javaScriptArray(code: string, itemType: string | undefined): PyObject {
  try {
    const nested = ARRAY_2D.exec(code);
    if (nested) {
      return [...nested[0].matchAll(/\[([^\n]*?)\]/g)].map((inner, index) => {
        let text = inner[1]!.trim();
        if (index === 0 && text.startsWith("[")) text = text.slice(1);
        return text.split(",").map((element) => parseJavaScriptValue(element.trim()));
      });
    }
    const flat = ARRAY.exec(code);
    if (!flat) return code;
    const body = (flat[1] ?? flat[2] ?? "").trim();
    const elements = body === "" ? [] : body.split(",");
    return elements.map((element) => {
      const text = element.trim();
      if (itemType === undefined) return parseJavaScriptValue(text);
      return text.startsWith("'") || text.startsWith('"') ? convertJavaScript(text, itemType, "String") : convertJavaScript(text, itemType);
    });
  } catch (error) {
    if (error instanceof PyException) return code;
    throw error;
  }
}

export function javaScriptDict(code: string): PyObject {
  if (code === "{}") return new PyHashDict();
  const match = /^\{([^\n]*?)\}/.exec(code);
  if (!match) return code;
  const dict = new PyHashDict();
  for (const pair of match[1]!.matchAll(/([^:]+):\s*([^\n]*?)(?:,\s*(?=[^,]+:)|$)/g)) {
    const key = stripChars(pair[1]!.trim(), "'\"");
    const value = pair[2]!.trim();
    if (value.startsWith("[") && value.endsWith("]")) dict.set(key, javaScriptArray(value, undefined));
    else if (value.startsWith("{") && value.endsWith("}")) dict.set(key, javaScriptDict(value));
    else dict.set(key, parseJavaScriptValue(stripChars(value, "'\"")));
  }
  return dict;
}

function stripChars(text: string, chars: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text[start]!)) start++;
  while (end > start && chars.includes(text[end - 1]!)) end--;
  return text.slice(start, end);
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
