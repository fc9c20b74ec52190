import { PyException, pyFloat, PyHashDict, pyInt, type PyObject } from "@envace/python-text";
import { intFloatOrText, JAVASCRIPT_TYPES } from "./types.js";

/**
 * Upstream's conversion of JavaScript-syntax argument strings (`"'abc'"`, `"[1, 2]"`,
 * `"{key: 'v'}"`, `"12n"`) into Python values before type and value checks. Anything that does
 * not look like the declared type stays a string; the regular expressions follow upstream's.
 */
const END = String.raw`\n?$`;
const INTEGER = new RegExp(String.raw`^-?\d+${END}`);
const FLOAT = new RegExp(String.raw`^-?\d+(\.\d+)?${END}`);
const BIGINT = new RegExp(String.raw`^-?\d+n${END}`);

export function convertJavaScript(value: string, type: string, itemType?: string): PyObject {
  if (!Object.hasOwn(JAVASCRIPT_TYPES, type)) throw new PyException("ValueError", `Unsupported type: ${type}`);
  switch (type) {
    case "String":
      return isQuoted(value) ? value.slice(1, -1) : value;
    case "integer":
      return INTEGER.test(value) ? pyInt(value) : value;
    case "float":
      return FLOAT.test(value) ? pyFloat(value) : value;
    case "Bigint":
      return BIGINT.test(value) ? pyInt(value.slice(0, -1)) : value;
    case "Boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "dict":
      return parseDict(value.trim());
    case "array":
      return parseArray(value.trim(), itemType);
    default:
      return value;
  }
}

function isQuoted(text: string): boolean {
  return (text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"));
}

const ARRAY_2D = /^(?:\[\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\]|\bnew\s+Array\(\s*\[[^\n]*?\]\s*(,\s*\[[^\n]*?\]\s*)*\))/;
const ARRAY = /^(?:\[([^\n]*?)\]|\bnew\s+Array\(([^\n]*?)\))/;

function parseArray(code: string, itemType: string | undefined): PyObject {
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
    // Upstream falls back to the raw text when any item fails to convert.
    if (error instanceof PyException) return code;
    throw error;
  }
}

function parseDict(code: string): PyObject {
  if (code === "{}") return new PyHashDict();
  const match = /^\{([^\n]*?)\}/.exec(code);
  if (!match) return code;
  const dict = new PyHashDict();
  for (const pair of match[1]!.matchAll(/([^:]+):\s*([^\n]*?)(?:,\s*(?=[^,]+:)|$)/g)) {
    const key = stripChars(pair[1]!.trim(), "'\"");
    const value = pair[2]!.trim();
    if (value.startsWith("[") && value.endsWith("]")) dict.set(key, parseArray(value, undefined));
    else if (value.startsWith("{") && value.endsWith("}")) dict.set(key, parseDict(value));
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

/** A JavaScript literal read without knowing its declared type. */
export function parseJavaScriptValue(input: string): PyObject {
  const text = input.trim();
  if (text === "true") return true;
  if (text === "false") return false;
  if (isQuoted(text)) return text.slice(1, -1);
  return intFloatOrText(text);
}
