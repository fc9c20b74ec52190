import { float, int, PyDict } from "./value.js";
import type { Py } from "./value.js";

/** A JSON syntax error with the character offset it was found at. */
export class JsonSyntaxError extends Error {
  override readonly name = "JsonSyntaxError";
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

/**
 * Parse JSON as Python's `json.loads` does: a number with a fraction or an exponent is a
 * `float` even when integral (`1.0`), integers are exact at any size, `NaN`, `Infinity` and
 * `-Infinity` are accepted, and objects become insertion-ordered dicts.
 */
export function parsePyJson(text: string): Py {
  const parser = new Parser(text);
  parser.skipSpace();
  const value = parser.value();
  parser.skipSpace();
  if (parser.pos !== text.length) throw new JsonSyntaxError("Extra data", parser.pos);
  return value;
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  value(): Py {
    const t = this.text;
    const c = t[this.pos];
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
        return this.literal("NaN", float(NaN));
      case "I":
        return this.literal("Infinity", float(Infinity));
      default:
        if (c === "-" && t.startsWith("-Infinity", this.pos)) return this.literal("-Infinity", float(-Infinity));
        if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
        throw new JsonSyntaxError("Expecting value", this.pos);
    }
  }

  private literal(word: string, value: Py): Py {
    if (!this.text.startsWith(word, this.pos)) throw new JsonSyntaxError("Expecting value", this.pos);
    this.pos += word.length;
    return value;
  }

  private number(): Py {
    const t = this.text;
    const start = this.pos;
    if (t[this.pos] === "-") this.pos++;
    if (t[this.pos] === "0") this.pos++;
    else if (isDigit(t[this.pos])) while (isDigit(t[this.pos])) this.pos++;
    else throw new JsonSyntaxError("Expecting value", start);
    let isFloat = false;
    if (t[this.pos] === "." && isDigit(t[this.pos + 1])) {
      isFloat = true;
      this.pos++;
      while (isDigit(t[this.pos])) this.pos++;
    }
    if ((t[this.pos] === "e" || t[this.pos] === "E") && (isDigit(t[this.pos + 1]) || ((t[this.pos + 1] === "+" || t[this.pos + 1] === "-") && isDigit(t[this.pos + 2])))) {
      isFloat = true;
      this.pos += 2;
      while (isDigit(t[this.pos])) this.pos++;
    }
    const text = t.slice(start, this.pos);
    if (isFloat) return float(Number(text));
    const n = Number(text);
    return Number.isSafeInteger(n) ? int(n) : int(BigInt(text));
  }

  private string(): string {
    const t = this.text;
    this.pos++;
    let out = "";
    let chunk = this.pos;
    for (;;) {
      if (this.pos >= t.length) throw new JsonSyntaxError("Unterminated string", chunk - 1);
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        out += t.slice(chunk, this.pos);
        this.pos++;
        return out;
      }
      if (c === 0x5c) {
        out += t.slice(chunk, this.pos);
        out += this.escape();
        chunk = this.pos;
        continue;
      }
      if (c < 0x20) throw new JsonSyntaxError("Invalid control character", this.pos);
      this.pos++;
    }
  }

  private escape(): string {
    const t = this.text;
    const e = t[this.pos + 1];
    this.pos += 2;
    switch (e) {
      case '"':
        return '"';
      case "\\":
        return "\\";
      case "/":
        return "/";
      case "b":
        return "\b";
      case "f":
        return "\f";
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case "u": {
        const hex = t.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError("Invalid \\uXXXX escape", this.pos - 2);
        this.pos += 4;
        return String.fromCharCode(parseInt(hex, 16));
      }
      default:
        throw new JsonSyntaxError("Invalid \\escape", this.pos - 2);
    }
  }

  private array(): Py[] {
    this.pos++;
    const items: Py[] = [];
    this.skipSpace();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return items;
    }
    for (;;) {
      this.skipSpace();
      items.push(this.value());
      this.skipSpace();
      const c = this.text[this.pos];
      this.pos++;
      if (c === "]") return items;
      if (c !== ",") throw new JsonSyntaxError("Expecting ',' delimiter", this.pos - 1);
    }
  }

  private object(): PyDict {
    this.pos++;
    const dict = new PyDict();
    this.skipSpace();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return dict;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') throw new JsonSyntaxError("Expecting property name enclosed in double quotes", this.pos);
      const key = this.string();
      this.skipSpace();
      if (this.text[this.pos] !== ":") throw new JsonSyntaxError("Expecting ':' delimiter", this.pos);
      this.pos++;
      this.skipSpace();
      dict.set(key, this.value());
      this.skipSpace();
      const c = this.text[this.pos];
      this.pos++;
      if (c === "}") return dict;
      if (c !== ",") throw new JsonSyntaxError("Expecting ',' delimiter", this.pos - 1);
    }
  }
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}
