import { EnvaceError } from "@envace/errors";
import { DepthLimitError } from "./errors.js";
import { PyHashDict } from "./objects.js";
import type { PyObject } from "./value.js";

/**
 * Python's `json.loads`: the grammar, the number rule and the errors are Python's; how ints,
 * floats and dicts are represented is the caller's choice (a `JsonModel`), since JavaScript has
 * no single form for them.
 */

/** A JSON text Python's `json.loads` rejects: Python's `JSONDecodeError`, with its message. */
export class JsonDecodeError extends EnvaceError {
  override readonly code = "json-decode";
  /** 1-based line of the error. */
  readonly line: number;
  /** 1-based column of the error in its line, in code points as Python counts. */
  readonly column: number;

  constructor(
    /** Python's `msg`, such as `Expecting ',' delimiter`. */
    readonly reason: string,
    text: string,
    /** Where in `text` the error is, in UTF-16 units (a JavaScript string index). */
    readonly offset: number,
  ) {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < offset; i++) {
      if (text.charCodeAt(i) === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    const column = codePointCount(text, lineStart, offset) + 1;
    super(`${reason}: line ${line} column ${column} (char ${codePointCount(text, 0, offset)})`);
    this.line = line;
    this.column = column;
  }
}

/** Code points in `text[from, to)`: Python counts a character beyond U+FFFF once. */
function codePointCount(text: string, from: number, to: number): number {
  let count = to - from;
  for (let i = from + 1; i < to; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xdc00 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) count--;
  }
  return count;
}

/** The JSON values every model shares: `None`, `True`/`False` and `str`. */
export type JsonScalar = null | boolean | string;

/**
 * How `jsonLoads` represents the Python values JavaScript has no single form for. `V` is the
 * model's value type: it includes `null`, booleans and strings, and what the hooks return.
 */
export interface JsonModel<V, D extends V = V> {
  /** An `int`, from its literal as written (`"-12"`, `"123456789012345678901234567890"`). */
  int(literal: string): V;
  /** A `float`: a number written with a fraction or an exponent (`1.0`, `1e2`), or `NaN`, `Infinity`, `-Infinity`. */
  float(value: number): V;
  /** A new, empty `dict`. */
  dict(): D;
  /** `dict[key] = value`, in file order; for a repeated key Python keeps the first position and the last value. */
  set(dict: D, key: string, value: V): void;
  /** A `list`, from its items. */
  list(items: V[]): V;
}

/** The default model's values: ints as `bigint`, floats as `number`, lists as arrays, dicts as `Map`s. */
export type PyJson = JsonScalar | bigint | number | PyJson[] | Map<string, PyJson>;

/**
 * The default model: an `int` is a `bigint` (exact at any size, and `2` stays apart from `2.0`),
 * a `float` a `number`, a `dict` a `Map` (file order, even for keys that look like numbers, which
 * a plain object would move to the front).
 */
export const bigintModel: JsonModel<PyJson, Map<string, PyJson>> = {
  int: (literal) => BigInt(literal),
  float: (value) => value,
  dict: () => new Map(),
  set: (dict, key, value) => dict.set(key, value),
  list: (items) => items,
};

/**
 * Parse JSON as Python's `json.loads` does: objects become dicts in file order, a number with a
 * fraction or an exponent is a float even when integral, other numbers are ints of any size,
 * `NaN`, `Infinity` and `-Infinity` are accepted, and a leading byte order mark is refused.
 * Errors are `JsonDecodeError`s with Python's messages and positions.
 */
export function jsonLoads(text: string): PyJson;
export function jsonLoads<V, D extends V | JsonScalar>(text: string, model: JsonModel<V | JsonScalar, D>): V | JsonScalar;
export function jsonLoads<V, D extends V | JsonScalar>(text: string, model?: JsonModel<V | JsonScalar, D>): V | JsonScalar | PyJson {
  if (model === undefined) return nativeLoads(text, bigintModel) ?? new Parser(text, bigintModel).document();
  return nativeLoads(text, model) ?? new Parser(text, model).document();
}

// JSON.parse makes a number of every literal, so an int and an integral float (`1.0`, `2.5e1`)
// look alike, an int beyond a double's exact range loses digits, and `-0` would reach the model
// as `0`: such a text goes the slow way. Every number literal of a JSON text stands between
// separators, never next to a letter, digit or dot; matches inside strings only send a text the
// slow way.
const LONG_DIGITS_OR_MINUS_ZERO = /\d{16}|-0(?![\d.eE])/;
const FLOAT_LITERAL = /(?<![\w.])\d+(?:\.\d+(?:[eE][+-]?\d+)?|[eE][+-]?\d+)(?![\w.])/g;
// A key JavaScript would move ahead of the others (an array index); Python keeps file order.
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;
const KEY_ORDER_LOST = new Error("a key JavaScript would reorder");

function ambiguousNumbers(text: string): boolean {
  if (LONG_DIGITS_OR_MINUS_ZERO.test(text)) return true;
  for (const [literal] of text.matchAll(FLOAT_LITERAL)) if (Number.isInteger(Number(literal))) return true;
  return false;
}

/**
 * The same value through the native JSON.parse, several times faster than `Parser` on a cold
 * start, or `undefined` where it could differ: a text JSON.parse refuses (`Parser` then gives
 * Python's error, or accepts `NaN`), an ambiguous number, or an index-like key.
 */
function nativeLoads<V, D extends V | JsonScalar>(text: string, model: JsonModel<V | JsonScalar, D>): V | JsonScalar | undefined {
  if (ambiguousNumbers(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  try {
    return fromNative(parsed, model);
  } catch (error) {
    if (error === KEY_ORDER_LOST) return undefined;
    throw error;
  }
}

function fromNative<V, D extends V | JsonScalar>(value: unknown, model: JsonModel<V | JsonScalar, D>, depth = 0): V | JsonScalar {
  if (typeof value === "number") return Number.isInteger(value) ? model.int(String(value)) : model.float(value);
  if (value === null || typeof value !== "object") return value as JsonScalar;
  if (depth >= JSON_DEPTH_LIMIT) throw new DepthLimitError(JSON_DEPTH_LIMIT, "the JSON text");
  if (Array.isArray(value)) return model.list(value.map((item) => fromNative(item, model, depth + 1)));
  const dict = model.dict();
  for (const key of Object.keys(value)) {
    if (INDEX_KEY.test(key)) throw KEY_ORDER_LOST;
    model.set(dict, key, fromNative((value as Record<string, unknown>)[key], model, depth + 1));
  }
  return dict;
}

/**
 * The deepest nesting of arrays and objects `jsonLoads` reads; deeper text is a `DepthLimitError`
 * (Python's own `json.loads` gives up near its recursion limit, 1,000, as well).
 */
export const JSON_DEPTH_LIMIT = 1000;

class Parser<V, D extends V | JsonScalar> {
  private pos = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly model: JsonModel<V | JsonScalar, D>,
  ) {}

  private fail(reason: string, at: number): never {
    throw new JsonDecodeError(reason, this.text, at);
  }

  document(): V | JsonScalar {
    if (this.text.charCodeAt(0) === 0xfeff) this.fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
    this.skipSpace();
    const value = this.value();
    this.skipSpace();
    if (this.pos < this.text.length) this.fail("Extra data", this.pos);
    return value;
  }

  private skipSpace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else break;
    }
    this.pos = pos;
  }

  private value(): V | JsonScalar {
    switch (this.text.charCodeAt(this.pos)) {
      case 0x7b: // {
        return this.object();
      case 0x5b: // [
        return this.array();
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal("true", true);
      case 0x66: // f
        return this.literal("false", false);
      case 0x6e: // n
        return this.literal("null", null);
      case 0x4e: // N
        return this.literal("NaN", this.model.float(NaN));
      case 0x49: // I
        return this.literal("Infinity", this.model.float(Infinity));
      case 0x2d: // -
        if (this.text.startsWith("-Infinity", this.pos)) return this.literal("-Infinity", this.model.float(-Infinity));
        return this.number();
      default:
        return this.number();
    }
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail("Expecting value", this.pos);
    this.pos += word.length;
    return value;
  }

  /** Enters an array or object; the matching `leave` comes when it closes (an error ends the parse). */
  private enter(): void {
    if (++this.depth > JSON_DEPTH_LIMIT) throw new DepthLimitError(JSON_DEPTH_LIMIT, "the JSON text");
  }

  private object(): D {
    this.enter();
    const dict = this.model.dict();
    this.pos++;
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      this.depth--;
      return dict;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail("Expecting property name enclosed in double quotes", this.pos);
      const key = this.string();
      this.skipSpace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("Expecting ':' delimiter", this.pos);
      this.pos++;
      this.skipSpace();
      this.model.set(dict, key, this.value());
      this.skipSpace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x7d) {
        this.pos++;
        this.depth--;
        return dict;
      }
      if (c !== 0x2c) this.fail("Expecting ',' delimiter", this.pos);
      this.pos++;
      this.skipSpace();
    }
  }

  private array(): V | JsonScalar {
    this.enter();
    const items: (V | JsonScalar)[] = [];
    this.pos++;
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      this.depth--;
      return this.model.list(items);
    }
    for (;;) {
      items.push(this.value());
      this.skipSpace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x5d) {
        this.pos++;
        this.depth--;
        return this.model.list(items);
      }
      if (c !== 0x2c) this.fail("Expecting ',' delimiter", this.pos);
      this.pos++;
      this.skipSpace();
    }
  }

  private string(): string {
    const text = this.text;
    const quote = this.pos;
    let pos = quote + 1;
    let chunk = pos;
    let out = "";
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x22) break;
      if (c === 0x5c) {
        out += text.slice(chunk, pos) + this.escape(quote, pos);
        pos += text.charCodeAt(pos + 1) === 0x75 ? 6 : 2;
        chunk = pos;
      } else if (c >= 0x20) pos++;
      else if (Number.isNaN(c)) this.fail("Unterminated string starting at", quote);
      else this.fail("Invalid control character at", pos);
    }
    this.pos = pos + 1;
    return out + text.slice(chunk, pos);
  }

  /** The character the escape at `pos` (a backslash) stands for. */
  private escape(quote: number, pos: number): string {
    const text = this.text;
    switch (text.charCodeAt(pos + 1)) {
      case 0x22:
        return '"';
      case 0x5c:
        return "\\";
      case 0x2f:
        return "/";
      case 0x62:
        return "\b";
      case 0x66:
        return "\f";
      case 0x6e:
        return "\n";
      case 0x72:
        return "\r";
      case 0x74:
        return "\t";
      case 0x75: {
        const digits = text.slice(pos + 2, pos + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(digits)) this.fail("Invalid \\uXXXX escape", pos + 1);
        // A surrogate pair written as two escapes joins into one character by concatenation.
        return String.fromCharCode(parseInt(digits, 16));
      }
      default:
        if (pos + 1 >= text.length) this.fail("Unterminated string starting at", quote);
        return this.fail("Invalid \\escape", pos);
    }
  }

  private number(): V | JsonScalar {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    if (text.charCodeAt(pos) === 0x2d) pos++;
    const first = text.charCodeAt(pos);
    if (first === 0x30) pos++;
    else if (first >= 0x31 && first <= 0x39) pos = this.digits(pos + 1);
    else this.fail("Expecting value", start);
    let float = false;
    if (text.charCodeAt(pos) === 0x2e && isDigit(text.charCodeAt(pos + 1))) {
      float = true;
      pos = this.digits(pos + 1);
    }
    const e = text.charCodeAt(pos);
    if (e === 0x65 || e === 0x45) {
      let exponent = pos + 1;
      const sign = text.charCodeAt(exponent);
      if (sign === 0x2b || sign === 0x2d) exponent++;
      if (isDigit(text.charCodeAt(exponent))) {
        float = true;
        pos = this.digits(exponent);
      }
    }
    this.pos = pos;
    const literal = text.slice(start, pos);
    return float ? this.model.float(Number(literal)) : this.model.int(literal);
  }

  private digits(pos: number): number {
    while (isDigit(this.text.charCodeAt(pos))) pos++;
    return pos;
  }
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/**
 * A model for code that may later give a dict keys other than `str` (Python code does): ints as
 * `bigint`, floats as `number`, dicts as `PyHashDict`s (file order kept).
 */
export const hashDictModel: JsonModel<PyObject, PyHashDict> = {
  int: (literal) => BigInt(literal),
  float: (value) => value,
  dict: () => new PyHashDict(),
  set: (dict, key, value) => dict.set(key, value),
  list: (items) => items,
};
