import { PyException, pyFloat, PyHashDict, pyInt, type PyObject } from "@envace/python-text";
import { intFloatOrText, JAVA_TYPES } from "./types.js";

/**
 * Upstream's conversion of Java-syntax argument strings (`"3.14f"`, `"new int[]{1, 2}"`,
 * `new HashMap<…>() {{ put("k", v); }}`) into Python values before type and value checks.
 * A string that does not look like the declared type stays a string. The regular
 * expressions follow upstream's exactly (Python's `$` also matches before a final newline,
 * and `.` stops only at `\n`), including the ones that can never match (`char`).
 */
const END = String.raw`\n?$`;
const INTEGER = new RegExp(String.raw`^-?\d+${END}`);
const FLOAT = new RegExp(String.raw`^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]${END}`);
const DOUBLE = new RegExp(String.raw`^-?\d+(\.\d+)?([eE][+-]?\d+)?${END}`);
const LONG = new RegExp(String.raw`^-?\d+[lL]${END}`);
const WORD = String.raw`[\p{L}\p{N}_]`;

export function convertJava(value: string, type: string, itemType?: string): PyObject {
  if (!Object.hasOwn(JAVA_TYPES, type)) throw new PyException("ValueError", `Unsupported type: ${type}`);
  switch (type) {
    case "byte":
    case "short":
    case "integer":
      return INTEGER.test(value) ? pyInt(value) : value;
    case "float":
      return FLOAT.test(value) ? pyFloat(value.replace(/[fF](?=\n?$)/, "")) : value;
    case "double":
      return DOUBLE.test(value) ? pyFloat(value) : value;
    case "long":
      return LONG.test(value) ? pyInt(value.replace(/[lL](?=\n?$)/, "")) : value;
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "char":
      return value;
    case "Array":
      return parseArray(value, itemType);
    case "ArrayList":
      return parseArrayList(value, itemType);
    case "HashMap":
      return parseHashMap(value);
    case "String":
    case "any":
      return value;
    case "Set":
    case "Hashtable":
      throw new PyException("NotImplementedError", "Set conversion is not implemented");
    default:
      throw new PyException("NotImplementedError", `${type} conversion is not implemented`);
  }
}

function convertItem(text: string, itemType: string | undefined): PyObject {
  if (itemType === "char" || itemType === "String") return text.slice(1, -1);
  return itemType ? convertJava(text, itemType) : parseJavaValue(text);
}

function parseArrayList(input: string, itemType: string | undefined): PyObject {
  const asList = new RegExp(String.raw`new\s+ArrayList<${WORD}*>\(Arrays\.asList\(([^\n]+?)\)\)`, "u").exec(input);
  if (asList) return asList[1]!.split(",").map((element) => convertItem(element.trim(), itemType));
  const adds = new RegExp(String.raw`new\s+ArrayList<${WORD}*>\(\)\s*\{\{\s*([\s\S]+?)\s*\}\}`, "u").exec(input);
  if (adds) return [...adds[1]!.matchAll(/add\(([^\n]+?)\)/g)].map((m) => convertItem(m[1]!.trim(), itemType));
  if (new RegExp(String.raw`new\s+ArrayList<${WORD}*>\(\)`, "u").test(input)) return [];
  return input;
}

function parseArray(input: string, itemType: string | undefined): PyObject {
  const match = new RegExp(String.raw`new\s+${WORD}+\[\]\s*\{([^\n]*?)\}`, "u").exec(input);
  if (!match) return input;
  return match[1]!
    .split(",")
    .filter((element) => element.trim() !== "")
    .map((element) => (itemType ? convertJava(element.trim(), itemType) : parseJavaValue(element.trim())));
}

function parseHashMap(input: string): PyObject {
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

/** A Java literal read without knowing its declared type. */
export function parseJavaValue(text: string): PyObject {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text.startsWith('"') && text.endsWith('"')) return text.slice(1, -1);
  if (LONG.test(text)) return pyInt(text.slice(0, -1));
  if (FLOAT.test(text)) return pyFloat(text.replace(/[fF](?=\n?$)/, ""));
  return intFloatOrText(text);
}
