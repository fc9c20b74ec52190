import { floatRepr, type PyDict, type PyValue } from "./value.js";

/** A JSON text that Python's `json.loads` would reject, with the 1-based line and column. */
export class PyJsonSyntaxError extends Error {
  override readonly name = "PyJsonSyntaxError";
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} at line ${line} column ${column}`);
  }
}

/**
 * Parse JSON the way Python's `json.loads` does: objects become `Map`s in file order (a plain
 * JavaScript object would move keys such as `"1151293680"` to the front), numbers written
 * with a fraction or exponent become floats and the rest ints (`bigint`), a repeated key keeps
 * its first position and its last value, and `NaN`/`Infinity` are accepted.
 */
export function parsePyJson(text: string): PyValue {
  const parser = new Parser(text);
  parser.skipSpace();
  const value = parser.value();
  parser.skipSpace();
  if (parser.pos < text.length) parser.fail("Extra data");
  return value;
}

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(reason: string, at = this.pos): never {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at; i++) {
      if (this.text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    throw new PyJsonSyntaxError(reason, line, at - lineStart + 1);
  }

  skipSpace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++;
      else break;
    }
    this.pos = pos;
  }

  value(): PyValue {
    const c = this.text[this.pos];
    switch (c) {
      case "{":
        return this.object();
      case "[":
        return this.array();
      case '"':
        return this.string();
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "n":
        return this.literal("null", null);
      case "N":
        return this.literal("NaN", NaN);
      case "I":
        return this.literal("Infinity", Infinity);
      default:
        if (c === "-" && this.text.startsWith("-Infinity", this.pos)) return this.literal("-Infinity", -Infinity);
        return this.number();
    }
  }

  literal<T extends PyValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail("Expecting value");
    this.pos += word.length;
    return value;
  }

  object(): PyDict {
    const dict: PyDict = new Map();
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return dict;
    }
    for (;;) {
      if (this.text[this.pos] !== '"') this.fail("Expecting property name enclosed in double quotes");
      const key = this.string();
      this.skipSpace();
      if (this.text[this.pos] !== ":") this.fail("Expecting ':' delimiter");
      this.pos++;
      this.skipSpace();
      dict.set(key, this.value());
      this.skipSpace();
      const c = this.text[this.pos];
      if (c === "}") {
        this.pos++;
        return dict;
      }
      if (c !== ",") this.fail("Expecting ',' delimiter");
      this.pos++;
      this.skipSpace();
    }
  }

  array(): PyValue[] {
    const list: PyValue[] = [];
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return list;
    }
    for (;;) {
      list.push(this.value());
      this.skipSpace();
      const c = this.text[this.pos];
      if (c === "]") {
        this.pos++;
        return list;
      }
      if (c !== ",") this.fail("Expecting ',' delimiter");
      this.pos++;
      this.skipSpace();
    }
  }

  string(): string {
    const text = this.text;
    const start = ++this.pos;
    // Fast path: no escapes.
    let end = start;
    for (;;) {
      const c = text.charCodeAt(end);
      if (Number.isNaN(c)) this.fail("Unterminated string starting", start - 1);
      if (c === 34) {
        this.pos = end + 1;
        return text.slice(start, end);
      }
      if (c === 92 || c < 32) break;
      end++;
    }
    let out = text.slice(start, end);
    let pos = end;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (Number.isNaN(c)) this.fail("Unterminated string starting", start - 1);
      if (c === 34) break;
      if (c < 32) this.fail("Invalid control character", pos);
      if (c !== 92) {
        out += text.charAt(pos);
        pos++;
        continue;
      }
      const escape = text[pos + 1];
      pos += 2;
      switch (escape) {
        case '"':
        case "\\":
        case "/":
          out += escape;
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "n":
          out += "\n";
          break;
        case "r":
          out += "\r";
          break;
        case "t":
          out += "\t";
          break;
        case "u": {
          const digits = text.slice(pos, pos + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(digits)) this.fail("Invalid \\uXXXX escape", pos - 1);
          out += String.fromCharCode(parseInt(digits, 16));
          pos += 4;
          break;
        }
        default:
          this.fail("Invalid \\escape", pos - 2);
      }
    }
    this.pos = pos + 1;
    return out;
  }

  number(): PyValue {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    if (text.charCodeAt(pos) === 45) pos++;
    const first = text.charCodeAt(pos);
    if (first === 48) pos++;
    else if (first >= 49 && first <= 57) pos = this.digits(pos);
    else this.fail("Expecting value", start);
    let float = false;
    if (text.charCodeAt(pos) === 46 && isDigit(text.charCodeAt(pos + 1))) {
      float = true;
      pos = this.digits(pos + 1);
    }
    const e = text.charCodeAt(pos);
    if (e === 101 || e === 69) {
      let exponent = pos + 1;
      const sign = text.charCodeAt(exponent);
      if (sign === 43 || sign === 45) exponent++;
      if (isDigit(text.charCodeAt(exponent))) {
        float = true;
        pos = this.digits(exponent);
      }
    }
    this.pos = pos;
    const literal = text.slice(start, pos);
    return float ? Number(literal) : BigInt(literal);
  }

  private digits(pos: number): number {
    while (isDigit(this.text.charCodeAt(pos))) pos++;
    return pos;
  }
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export interface PyDumpsOptions {
  /** `sort_keys=True`. */
  sortKeys?: boolean;
}

/**
 * Python's `json.dumps(value)` with its defaults: `", "` and `": "` separators, every
 * non-ASCII character escaped as `\uXXXX`, floats as Python prints them (`1.0`, `1e-05`),
 * `NaN`/`Infinity` for non-finite floats. With `sortKeys`, keys are sorted by code point.
 */
export function pyDumps(value: PyValue, options: PyDumpsOptions = {}): string {
  return dumpValue(value, options.sortKeys === true);
}

/** The `json.dumps` text of one value (string concatenation is V8's fastest builder here). */
export function dumpValue(value: PyValue, sortKeys: boolean): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return encodeString(value);
    case "bigint":
      return value.toString();
    case "number":
      return floatJson(value);
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ", " : "") + dumpValue(value[i]!, sortKeys);
    return `${out}]`;
  }
  let out = "{";
  let first = true;
  if (value instanceof Map) {
    const keys = sortKeys ? sortCodePoints([...value.keys()]) : value.keys();
    for (const key of keys) {
      out += `${first ? "" : ", "}${encodeString(key)}: ${dumpValue(value.get(key)!, sortKeys)}`;
      first = false;
    }
  } else {
    const keys = sortKeys ? sortCodePoints(Object.keys(value)) : Object.keys(value);
    for (const key of keys) {
      out += `${first ? "" : ", "}${encodeString(key)}: ${dumpValue(value[key]!, sortKeys)}`;
      first = false;
    }
  }
  return `${out}}`;
}

/** Sort strings as Python does (by code point), in place. */
export function sortCodePoints(keys: string[]): string[] {
  // Without surrogates, UTF-16 order is code point order and the default sort is faster.
  return keys.some((key) => SURROGATE.test(key)) ? keys.sort(compareCodePoints) : keys.sort();
}

const SURROGATE = /[\ud800-\udfff]/;

/** Python compares strings by code point; JavaScript's default sort compares UTF-16 units. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate starts a code point above U+FFFF, which outranks every other UTF-16 unit.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

function floatJson(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "Infinity";
  if (value === -Infinity) return "-Infinity";
  return floatRepr(value);
}

const NEEDS_ESCAPE = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/;

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

/** Python's `py_encode_basestring_ascii`: printable ASCII stays, everything else is escaped. */
export function encodeString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    const code = text.charCodeAt(i);
    if (code >= 0x20 && code <= 0x7e && char !== '"' && char !== "\\") out += char;
    else out += ESCAPES[char] ?? `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return out + '"';
}
