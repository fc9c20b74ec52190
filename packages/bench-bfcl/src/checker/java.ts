import { PyException, pyFloat, PyHashDict, pyInt, type PyObject } from "@envace/python-text";
import { indexBefore, lineEnd, scanTo, skipSpace } from "./scan.js";
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
  const asList = asListArguments(input);
  if (asList !== undefined) return asList.split(",").map((element) => convertItem(element.trim(), itemType));
  const block = firstFollowedBy(input, ARRAY_LIST, /\(\)\s*\{\{/y);
  if (block !== undefined) {
    // `\s*([\s\S]+?)\s*\}\}`: the text up to the first `}}` after its first character, trimmed.
    const start = skipSpace(input, block);
    const end = input.indexOf("}}", start + 1);
    // Without such a `}}` upstream's expression fails, and its next one (`new ArrayList<…>()`) answers [].
    return end === -1 ? [] : calls(input.slice(start, end).trimEnd(), "add(").map((argument) => convertItem(argument.trim(), itemType));
  }
  return firstFollowedBy(input, ARRAY_LIST, /\(\)/y) === undefined ? input : [];
}

const ARRAY_LIST = new RegExp(String.raw`new\s+ArrayList<${WORD}*>`, "gu");

/** What `new\s+ArrayList<\w*>\(Arrays\.asList\(([^\n]+?)\)\)` captures, or undefined. */
function asListArguments(input: string): string | undefined {
  let failedBefore = -1;
  ARRAY_LIST.lastIndex = 0;
  for (let match = ARRAY_LIST.exec(input); match !== null; match = ARRAY_LIST.exec(input)) {
    const start = match.index + match[0].length + "(Arrays.asList(".length;
    if (!input.startsWith("(Arrays.asList(", match.index + match[0].length) || start < failedBefore) continue;
    const line = lineEnd(input, start);
    const end = indexBefore(input, "))", start + 1, line);
    if (end !== -1) return input.slice(start, end);
    // Every later start on this line meets the same line without a `))`.
    failedBefore = line;
  }
  return undefined;
}

/** Where `rest` (sticky) ends after the first match of `head` it follows, or undefined. */
function firstFollowedBy(input: string, head: RegExp, rest: RegExp): number | undefined {
  head.lastIndex = 0;
  for (let match = head.exec(input); match !== null; match = head.exec(input)) {
    rest.lastIndex = match.index + match[0].length;
    if (rest.test(input)) return rest.lastIndex;
  }
  return undefined;
}

/** The arguments `/name([^\n]+?)\)/g` finds: each runs to the first `)` of its line after its first character. */
function calls(text: string, name: string): string[] {
  const found: string[] = [];
  let at = 0;
  for (let open = text.indexOf(name, at); open !== -1; open = text.indexOf(name, at)) {
    const start = open + name.length;
    if (start >= text.length || text[start] === "\n") {
      at = open + 1;
      continue;
    }
    const end = scanTo(text, ")", start + 1);
    if (text[end] === ")") found.push(text.slice(start, end));
    // A start with no `)` later on its line fails, and so does every other start before that line's end.
    at = end + 1;
  }
  return found;
}

const ARRAY = new RegExp(String.raw`new\s+${WORD}+\[\]\s*\{`, "gu");

function parseArray(input: string, itemType: string | undefined): PyObject {
  // `new\s+\w+\[\]\s*\{([^\n]*?)\}`: the first opening whose line has a `}` after it.
  let failedBefore = -1;
  ARRAY.lastIndex = 0;
  for (let match = ARRAY.exec(input); match !== null; match = ARRAY.exec(input)) {
    const start = match.index + match[0].length;
    if (start < failedBefore) continue;
    const line = lineEnd(input, start);
    const end = indexBefore(input, "}", start, line);
    if (end === -1) {
      failedBefore = line;
      continue;
    }
    return input
      .slice(start, end)
      .split(",")
      .filter((element) => element.trim() !== "")
      .map((element) => (itemType ? convertJava(element.trim(), itemType) : parseJavaValue(element.trim())));
  }
  return input;
}

const HASH_MAP = /new\s+HashMap</g;

function parseHashMap(input: string): PyObject {
  // `new\s+HashMap<[\s\S]*?>\s*\(\)\s*\{\s*\{?\s*([\s\S]*?)\s*\}?\s*\}`: after the first
  // `new HashMap<`, the first `>` followed by `()` and `{`, an optional second `{`, and the text
  // up to the next `}`, trimmed; a later `new HashMap<` would find the same `>` or none.
  HASH_MAP.lastIndex = 0;
  const head = HASH_MAP.exec(input);
  if (head !== null) {
    const open = /\s*\(\)\s*\{/y;
    let braces = -1;
    for (let close = input.indexOf(">", HASH_MAP.lastIndex); close !== -1 && braces === -1; close = input.indexOf(">", close + 1)) {
      open.lastIndex = close + 1;
      if (open.test(input)) braces = open.lastIndex;
    }
    if (braces !== -1) {
      let start = skipSpace(input, braces);
      if (input[start] === "{") start = skipSpace(input, start + 1);
      const end = input.indexOf("}", start);
      if (end !== -1) return puts(input.slice(start, end).trimEnd());
    }
  }
  return emptyHashMap(input) ? new PyHashDict() : input;
}

/** The dict of `put("key", value)` calls as upstream's `/put\("([^\n]*?)",\s*([^\n]*?)\)/g` reads them. */
function puts(text: string): PyHashDict {
  const dict = new PyHashDict();
  // closes[i]: the first `)` at or after i on its line; keyEnds[i]: the first `",` at or after i on
  // its line from which `\s*([^\n]*?)\)` succeeds. Both -1 for none, filled from the right.
  const closes = new Int32Array(text.length + 1).fill(-1);
  const keyEnds = new Int32Array(text.length + 1).fill(-1);
  const valueEnd = (keyEnd: number): number => closes[skipSpace(text, keyEnd + 2)]!;
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] !== "\n") closes[i] = text[i] === ")" ? i : closes[i + 1]!;
  }
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] !== "\n") keyEnds[i] = text.startsWith('",', i) && valueEnd(i) !== -1 ? i : keyEnds[i + 1]!;
  }
  let at = 0;
  for (let open = text.indexOf('put("', at); open !== -1; open = text.indexOf('put("', at)) {
    const keyEnd = keyEnds[open + 5]!;
    if (keyEnd === -1) {
      at = open + 1;
      continue;
    }
    const end = valueEnd(keyEnd);
    dict.set(text.slice(open + 5, keyEnd), parseJavaValue(text.slice(skipSpace(text, keyEnd + 2), end).trim()));
    at = end + 1;
  }
  return dict;
}

/** Whether `/new\s+HashMap<[^\n]*?>\s*\(\)/` matches: a `>` on the opening's line followed by `()`. */
function emptyHashMap(input: string): boolean {
  const call = /\s*\(\)/y;
  let failedBefore = -1;
  HASH_MAP.lastIndex = 0;
  for (let head = HASH_MAP.exec(input); head !== null; head = HASH_MAP.exec(input)) {
    const start = HASH_MAP.lastIndex;
    if (start < failedBefore) continue;
    const line = lineEnd(input, start);
    for (let close = indexBefore(input, ">", start, line); close !== -1; close = indexBefore(input, ">", close + 1, line)) {
      call.lastIndex = close + 1;
      if (call.test(input)) return true;
    }
    failedBefore = line;
  }
  return false;
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
