import { operator, PyException, PyHashDict, type PyObject, pyRepr, pyStr, PyTuple, strip } from "@envace/python-text";
import { EnvaceError } from "@envace/errors";
import { parsePyJson } from "./py/json.js";
import { parseExpression } from "./py/syntax.js";
import type { Expr } from "./py/syntax.js";
import { unparse } from "./py/unparse.js";

/**
 * One decoded call as BFCL's checkers see it: `{name: {arg: value}}`. Arguments are keyword
 * arguments only; upstream's decoder drops positional ones.
 */
export interface DecodedCall {
  readonly name: string;
  readonly args: ReadonlyMap<string, PyObject>;
}

/** A model output that cannot be decoded into calls. */
export class DecodeError extends EnvaceError {
  override readonly code: "decode" | "output-format" = "decode";
}

/**
 * Upstream's decoder for prompting models' text (`default_decode_ast_prompting`, Python
 * format): strip backticks, newlines and spaces, add the list brackets if missing, parse, and
 * read each element as a call with keyword arguments.
 */
export function decodePythonCalls(text: string): DecodedCall[] {
  let body = strip(text, "`\n ");
  if (!body.startsWith("[")) body = `[${body}`;
  if (!body.endsWith("]")) body = `${body}]`;
  body = strip(strip(body), "'");
  let tree: Expr;
  try {
    tree = parseExpression(body);
  } catch (error) {
    throw new DecodeError(error instanceof PyException ? error.text : (error as Error).message);
  }
  if (tree.kind === "call") return [resolveCall(tree)];
  if (tree.kind !== "list" && tree.kind !== "tuple" && tree.kind !== "set") {
    throw new DecodeError(`expected a list of calls, got ${unparse(tree)}`);
  }
  return tree.elts.map((element) => {
    if (element.kind !== "call") throw new DecodeError(`not a function call: ${unparse(element)}`);
    return resolveCall(element);
  });
}

/** `resolve_ast_call`: the dotted name and the keyword arguments of a call node. */
function resolveCall(call: Extract<Expr, { kind: "call" }>): DecodedCall {
  const args = new Map<string, PyObject>();
  for (const keyword of call.keywords) args.set(keyword.arg, resolveValue(keyword.value));
  return { name: call.func.kind === "name" ? call.func.id : dottedName(call.func), args };
}

function dottedName(func: Expr): string {
  const parts: string[] = [];
  while (func.kind === "attribute") {
    parts.push(func.attr);
    func = func.value;
  }
  // Upstream keeps a plain name at the root of the chain and silently drops anything else.
  if (func.kind === "name") parts.push(func.id);
  return parts.reverse().join(".");
}

/**
 * `resolve_ast_by_type`: what a decoded argument value is. Its quirks are upstream's and are
 * kept: every unary operator negates its constant operand, a bare name is its own text, a
 * call without keywords is its source text, a call with keywords a nested `{name: args}`
 * dict, and arithmetic on literals is computed.
 */
export function resolveValue(expr: Expr): PyObject {
  switch (expr.kind) {
    case "constant":
      return expr.value;
    case "ellipsis":
      return "...";
    case "unary":
      if (expr.operand.kind !== "constant") throw new DecodeError(`unsupported operand: ${unparse(expr)}`);
      return negate(expr.operand.value);
    case "list":
      return expr.elts.map(resolveValue);
    case "tuple":
      return new PyTuple(expr.elts.map(resolveValue));
    case "dict":
      return guarded(() => new PyHashDict(expr.keys.map((key, i) => [resolveValue(key), resolveValue(expr.values[i]!)])));
    case "binop":
      return guarded(() => evaluateArithmetic(expr));
    case "name":
      return expr.id;
    case "call": {
      if (expr.keywords.length === 0) return unparse(expr);
      const nested = resolveCall(expr);
      return new PyHashDict([[nested.name, new PyHashDict(nested.args)]]);
    }
    case "subscript":
      return `${unparse(expr.value)}[${unparse(expr.slice)}]`;
    case "attribute":
    case "set":
    case "slice":
      throw new DecodeError(`Unsupported AST type: ${expr.kind}`);
  }
}

function negate(value: PyObject): PyObject {
  return guarded(() => operator.neg(value));
}

function guarded<T>(compute: () => T): T {
  try {
    return compute();
  } catch (error) {
    if (error instanceof PyException) throw new DecodeError(error.message);
    throw error;
  }
}

/** Compute arithmetic on literals (upstream evaluates the expression's source). */
function evaluateArithmetic(expr: Expr): PyObject {
  switch (expr.kind) {
    case "constant":
      return expr.value;
    case "list":
      return expr.elts.map(evaluateArithmetic);
    case "tuple":
      return new PyTuple(expr.elts.map(evaluateArithmetic));
    case "unary": {
      const operand = evaluateArithmetic(expr.operand);
      if (expr.op === "-") return operator.neg(operand);
      if (expr.op === "+") return operator.pos(operand);
      if (expr.op === "~") return operator.invert(operand);
      break;
    }
    case "binop": {
      const op = operator.BINARY[expr.op];
      if (op) return op(evaluateArithmetic(expr.left), evaluateArithmetic(expr.right));
      break;
    }
    default:
      break;
  }
  throw new DecodeError(`cannot compute ${unparse(expr)} without evaluating code`);
}

/**
 * Upstream's `parse_nested_value`: how a decoded value is written back into an executable
 * call string. A dict whose values are all dicts is written as a nested call (an empty dict
 * therefore fails to decode), any other dict with quoted keys, everything else by `repr`.
 */
function nestedValueSource(value: PyObject): string {
  if (value instanceof PyHashDict) {
    const entries = [...value];
    if (entries.every(([, v]) => v instanceof PyHashDict)) {
      const first = entries[0];
      if (first === undefined) throw new DecodeError("IndexError: list index out of range");
      const [name, args] = first as [PyObject, PyHashDict];
      return `${pyStr(name)}(${[...args].map(([k, v]) => `${pyStr(k)}=${nestedValueSource(v)}`).join(", ")})`;
    }
    return `{${entries.map(([k, v]) => `'${pyStr(k)}': ${nestedValueSource(v)}`).join(", ")}}`;
  }
  return pyRepr(value);
}

/** `decoded_output_to_execution_list`: executable call strings for decoded calls. */
export function executionList(calls: readonly DecodedCall[]): string[] {
  return calls.map((call) => `${call.name}(${[...call.args].map(([k, v]) => `${k}=${nestedValueSource(v)}`).join(", ")})`);
}

/** `default_decode_execute_prompting`: call strings from a prompting model's text. */
export function decodePythonExecution(text: string): string[] {
  return executionList(decodePythonCalls(text));
}

/**
 * `convert_to_function_call`: call strings from a function-calling model's decoded calls
 * (`{name: args}` with arguments as a dict or as a JSON string already parsed).
 */
export function functionCallExecutionList(calls: readonly DecodedCall[]): string[] {
  return calls.map((call) => `${call.name}(${[...call.args].map(([k, v]) => `${k}=${pyRepr(v)}`).join(",")})`);
}

/** An output that decodes, but not into `[{name: {args}}, ...]`. */
export class OutputFormatError extends DecodeError {
  override readonly code = "output-format";
}

/**
 * Decode a saved single-turn result in any of upstream's forms: a prompting model's text
 * (Python call syntax), a function-calling model's `[{name: "<JSON arguments>"}]`, or the
 * decoded `[{name: {args}}]`. Java and JavaScript text is read by `decodeJavaLikeCalls`.
 */
export function decodeSingleTurnResult(result: PyObject, language: "python" | "java" | "javascript"): DecodedCall[] {
  if (typeof result === "string") return language === "python" ? decodePythonCalls(result) : decodeJavaLikeCalls(result, language);
  if (!Array.isArray(result)) throw new OutputFormatError(`expected a list of calls, got ${pyRepr(result)}`);
  return result.map(decodeCallObject);
}

/** One `{name: {args}}` or `{name: "<JSON arguments>"}`. */
export function decodeCallObject(item: PyObject): DecodedCall {
  if (!(item instanceof PyHashDict) || item.size !== 1) throw new OutputFormatError(`not a call of the form {name: {args}}: ${pyRepr(item)}`);
  const [name, rawArgs] = [...item][0]!;
  let args = rawArgs;
  if (typeof args === "string") {
    try {
      args = parsePyJson(args);
    } catch (error) {
      throw new DecodeError(`arguments of ${pyRepr(name)} are not JSON: ${(error as Error).message}`);
    }
  }
  if (typeof name !== "string" || !(args instanceof PyHashDict)) throw new OutputFormatError(`not a call of the form {name: {args}}: ${pyRepr(item)}`);
  const map = new Map<string, PyObject>();
  for (const [key, value] of args) {
    if (typeof key !== "string") throw new OutputFormatError(`argument names must be strings: ${pyRepr(item)}`);
    map.set(key, value);
  }
  return { name, args: map };
}

/**
 * Decode one step of a saved multi-turn result into executable call strings, as upstream's
 * `decode_execute` does: text through the Python decoder (with its nested-call quirks), a list
 * of `{name: args}` (arguments as objects or JSON strings) through the function-calling path.
 */
export function decodeMultiTurnStep(step: PyObject): string[] {
  if (typeof step === "string") return decodePythonExecution(step);
  const items = step instanceof PyHashDict ? [step] : step;
  if (!Array.isArray(items)) throw new OutputFormatError(`expected model text or a list of calls, got ${pyRepr(step)}`);
  return functionCallExecutionList(items.map(decodeCallObject));
}

/**
 * Java or JavaScript call text (`[Foo.bar(a="x", b=new int[]{1, 2})]`) as upstream's
 * tree-sitter decoders read it: only the first call counts, every argument value is its source
 * text with the quotes of a top-level string literal removed, and a repeated argument name is an
 * error. Bracket matching stands in for the grammars, so unusual code may decode where
 * tree-sitter would not (or the reverse).
 */
export function decodeJavaLikeCalls(text: string, language: "java" | "javascript"): DecodedCall[] {
  let body = strip(text, "`\n ");
  if (!body.startsWith("[")) body = `[${body}`;
  if (!body.endsWith("]")) body = `${body}]`;
  body = body.slice(1, -1).trim();
  const call = /^([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*\(/.exec(body);
  if (!call) throw new DecodeError(`Error parsing ${language} source code: no call found`);
  const close = matchingParen(body, call[0].length - 1);
  const args = new Map<string, PyObject>();
  for (const part of splitTopLevel(body.slice(call[0].length, close))) {
    const assignment = /^([A-Za-z_$][\w$]*)\s*=(?!=)([\s\S]*)$/.exec(part);
    if (!assignment) continue;
    const [, name, raw] = assignment as unknown as [string, string, string];
    if (args.has(name)) throw new DecodeError("Error: Multiple arguments with the same name are not supported.");
    args.set(name, unquote(raw.trim(), language));
  }
  return [{ name: call[1]!.replace(/\s+/g, ""), args }];
}

function unquote(value: string, language: "java" | "javascript"): string {
  const quotes = language === "java" ? ['"', "'"] : ['"', "'", "`"];
  if (value.length >= 2 && quotes.includes(value[0]!) && value.endsWith(value[0]!) && closesAtEnd(value)) return value.slice(1, -1);
  return value;
}

/** Whether the string literal opening `value` ends at its last character. */
function closesAtEnd(value: string): boolean {
  const quote = value[0]!;
  for (let i = 1; i < value.length; i++) {
    if (value[i] === "\\") i++;
    else if (value[i] === quote) return i === value.length - 1;
  }
  return false;
}

const OPENERS: Readonly<Record<string, string>> = { "(": ")", "[": "]", "{": "}" };

function matchingParen(text: string, open: number): number {
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === "`") {
      i = skipString(text, i);
      continue;
    }
    if (OPENERS[ch]) stack.push(OPENERS[ch]);
    else if (ch === ")" || ch === "]" || ch === "}") {
      if (stack.pop() !== ch) throw new DecodeError(`Error parsing source code: unbalanced '${ch}'`);
      if (stack.length === 0) {
        if (
          text
            .slice(i + 1)
            .trim()
            .replace(/^;/, "")
            .trim() !== "" &&
          !/^[,;\s]/.test(text.slice(i + 1))
        )
          throw new DecodeError("Error parsing source code: text after the call");
        return i;
      }
    }
  }
  throw new DecodeError("Error parsing source code: unclosed '('");
}

function skipString(text: string, start: number): number {
  const quote = text[start]!;
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return i;
  }
  throw new DecodeError("Error parsing source code: unterminated string");
}

/** Split at commas outside brackets, strings and generic type arguments. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let angle = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === "`") i = skipString(text, i);
    else if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") depth--;
    // `<` right after a type name opens generic arguments (`HashMap<String, Integer>`).
    else if (ch === "<" && /[\w$]$/.test(text.slice(0, i)) && /^[\s\w$?<>,.[\]]*>/.test(text.slice(i + 1))) angle++;
    else if (ch === ">" && angle > 0) angle--;
    else if (ch === "," && depth === 0 && angle === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last !== "") parts.push(last);
  return parts;
}
