import { DepthLimitError, PyException, type PyObject } from "@envace/python-text";
import { treeDepthExceeds } from "./tree-depth.js";

/**
 * A parser for the Python expressions BFCL exchanges as text: call lists such as
 * `[f(a=1, b='x'), g(2)]`, and the literals inside them. It builds a syntax tree and never
 * evaluates anything; `literal.ts` and `decode.ts` give the tree its two upstream meanings.
 */
export type Expr =
  | { kind: "constant"; value: PyObject }
  | { kind: "ellipsis" }
  | { kind: "name"; id: string }
  | { kind: "attribute"; value: Expr; attr: string }
  | { kind: "call"; func: Expr; args: Expr[]; keywords: Keyword[] }
  | { kind: "list"; elts: Expr[] }
  | { kind: "tuple"; elts: Expr[] }
  | { kind: "set"; elts: Expr[] }
  | { kind: "dict"; keys: Expr[]; values: Expr[] }
  | { kind: "unary"; op: UnaryOp; operand: Expr }
  | { kind: "binop"; op: BinaryOp; left: Expr; right: Expr }
  | { kind: "subscript"; value: Expr; slice: Expr }
  | { kind: "slice"; lower: Expr | null; upper: Expr | null; step: Expr | null };

export interface Keyword {
  arg: string;
  value: Expr;
}

export type UnaryOp = "-" | "+" | "~" | "not";
export type BinaryOp = "+" | "-" | "*" | "/" | "//" | "%" | "**" | "@" | "<<" | ">>" | "&" | "|" | "^";

/** Text that is not a Python expression of the supported kind. */
export class PySyntaxError extends PyException {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super("SyntaxError", `${message} (at offset ${offset})`);
  }
}

/**
 * One token. Every kind has every field (`text` of a name, number or operator; `value` and
 * `bytes` of a string literal), so that the parser reads tokens of one shape and V8 keeps its
 * property accesses monomorphic.
 */
interface Token {
  readonly type: "name" | "number" | "string" | "op" | "end";
  readonly text: string;
  readonly value: string;
  readonly bytes: boolean;
  readonly start: number;
  /** Just past the token's last character. */
  readonly end: number;
}

const makeToken = (type: "name" | "number" | "op" | "end", text: string, start: number): Token => ({
  type,
  text,
  value: "",
  bytes: false,
  start,
  end: start + text.length,
});

const KEYWORDS = new Set(["and", "or", "not", "in", "is", "if", "else", "lambda", "for", "await", "yield"]);
const OPERATORS = ["**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">"];
/** The operators by their first character, longest first as in `OPERATORS`: one lookup per token, not a scan. */
const OPERATORS_BY_FIRST = new Map<string, string[]>();
for (const op of OPERATORS) OPERATORS_BY_FIRST.set(op[0]!, [...(OPERATORS_BY_FIRST.get(op[0]!) ?? []), op]);
function isComparison(op: string): boolean {
  switch (op) {
    case "<":
    case ">":
    case "<=":
    case ">=":
    case "==":
    case "!=":
      return true;
    default:
      return false;
  }
}

/**
 * Binding power of the binary operators below `**`, loosest first: | ^ & shifts, + -, * / // % @.
 * All associate left. 0 for every other operator (`,` and `)` end most expressions).
 */
function binaryPrecedence(op: string): number {
  switch (op) {
    case "|":
      return 1;
    case "^":
      return 2;
    case "&":
      return 3;
    case "<<":
    case ">>":
      return 4;
    case "+":
    case "-":
      return 5;
    case "*":
    case "/":
    case "//":
    case "%":
    case "@":
      return 6;
    default:
      return 0;
  }
}
const NUMBER =
  /(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*\.(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*[eE][+-]?[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*)[jJ]?/y;
const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const STRING_PREFIX = /(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?(?='|")/y;

const isAsciiNameStart = (code: number): boolean => (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95;
const isAsciiNamePart = (code: number): boolean => isAsciiNameStart(code) || (code >= 48 && code <= 57);

/** The identifier at `pos`: scanned directly while it is ASCII, by the Unicode pattern otherwise. */
function nameAt(source: string, pos: number): string | undefined {
  if (!isAsciiNameStart(source.charCodeAt(pos))) return source.charCodeAt(pos) < 128 ? undefined : matchAt(NAME, source, pos);
  let end = pos + 1;
  while (end < source.length && isAsciiNamePart(source.charCodeAt(end))) end++;
  return end < source.length && source.charCodeAt(end) >= 128 ? matchAt(NAME, source, pos) : source.slice(pos, end);
}

/** Match a sticky pattern at `pos`. */
function matchAt(pattern: RegExp, source: string, pos: number): string | undefined {
  pattern.lastIndex = pos;
  return pattern.exec(source)?.[0];
}

/**
 * The punctuation of calls and literals (brackets, `,`, `=`, `.`, `:`), read by character code;
 * undefined for every other operator, which `OPERATORS_BY_FIRST` finds.
 */
function commonOperatorAt(source: string, pos: number): string | undefined {
  switch (source.charCodeAt(pos)) {
    case 0x28:
      return "(";
    case 0x29:
      return ")";
    case 0x5b:
      return "[";
    case 0x5d:
      return "]";
    case 0x7b:
      return "{";
    case 0x7d:
      return "}";
    case 0x2c:
      return ",";
    case 0x3d:
      return source.charCodeAt(pos + 1) === 0x3d ? "==" : "=";
    case 0x2e:
      return source.startsWith("...", pos) ? "..." : ".";
    case 0x3a:
      return source.charCodeAt(pos + 1) === 0x3d ? ":=" : ":";
    default:
      return undefined;
  }
}

const isQuote = (code: number): boolean => code === 0x27 || code === 0x22;
const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** Whether a string literal's prefix can start with this character (`r'…'`, `b"…"`, `f'…'`, `u'…'`, `rb'…'`). */
function isPrefixStart(code: number): boolean {
  switch (code | 0x20) {
    case 0x72: // r
    case 0x62: // b
    case 0x66: // f
    case 0x75: // u
      return true;
    default:
      return false;
  }
}

/**
 * The prefix of a string literal starting at `pos` ("" for a bare quote), or undefined when none
 * starts there: what `STRING_PREFIX` matches, without a pattern match for every name that starts
 * with one of the prefix letters.
 */
function stringPrefixAt(source: string, pos: number): string | undefined {
  const code = source.charCodeAt(pos);
  if (isQuote(code)) return "";
  if (!isPrefixStart(code)) return undefined;
  if (isQuote(source.charCodeAt(pos + 1))) return source[pos]!;
  if (!isQuote(source.charCodeAt(pos + 2))) return undefined;
  return matchAt(STRING_PREFIX, source, pos);
}

/** A run of decimal digits not followed by what would make it another kind of number, or undefined. */
function plainIntegerAt(source: string, pos: number): string | undefined {
  let end = pos;
  while (end < source.length && isDigit(source.charCodeAt(end))) end++;
  if (end === pos) return undefined;
  const next = source[end];
  if (next !== undefined && ".eEjJxXoObB_".includes(next)) return undefined;
  return source.slice(pos, end);
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < source.length) {
    const code = source.charCodeAt(pos);
    // Space, \t, \n, \v, \f, \r.
    if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) {
      pos++;
      continue;
    }
    if (code === 0x5c && (source.charCodeAt(pos + 1) === 0x0a || (source.charCodeAt(pos + 1) === 0x0d && source.charCodeAt(pos + 2) === 0x0a))) {
      pos += source.charCodeAt(pos + 1) === 0x0a ? 2 : 3;
      continue;
    }
    if (code === 0x23) {
      while (pos < source.length && source.charCodeAt(pos) !== 0x0a) pos++;
      continue;
    }
    const prefix = stringPrefixAt(source, pos);
    if (prefix !== undefined) {
      const token = readString(source, pos, prefix);
      tokens.push(token);
      pos = token.end;
      continue;
    }
    if (isDigit(code) || (code === 0x2e && isDigit(source.charCodeAt(pos + 1)))) {
      const text = plainIntegerAt(source, pos) ?? matchAt(NUMBER, source, pos)!;
      tokens.push(makeToken("number", text, pos));
      pos += text.length;
      continue;
    }
    const name = nameAt(source, pos);
    if (name !== undefined) {
      tokens.push(makeToken("name", name, pos));
      pos += name.length;
      continue;
    }
    const common = commonOperatorAt(source, pos);
    if (common !== undefined) {
      tokens.push(makeToken("op", common, pos));
      pos += common.length;
      continue;
    }
    const ch = source[pos]!;
    const op = OPERATORS_BY_FIRST.get(ch)?.find((candidate) => source.startsWith(candidate, pos));
    if (op === undefined) throw new PySyntaxError(`invalid character ${JSON.stringify(ch)}`, pos);
    tokens.push(makeToken("op", op, pos));
    pos += op.length;
  }
  tokens.push(makeToken("end", "", source.length));
  return tokens;
}

function readString(source: string, start: number, prefix: string): Token {
  let raw = false;
  let bytes = false;
  if (prefix !== "") {
    const flags = prefix.toLowerCase();
    raw = flags.includes("r");
    bytes = flags.includes("b");
    if (flags.includes("f")) throw new PySyntaxError("f-strings are not supported", start);
  }
  let pos = start + prefix.length;
  const quoteCode = source.charCodeAt(pos);
  const triple = source.charCodeAt(pos + 1) === quoteCode && source.charCodeAt(pos + 2) === quoteCode;
  const quote = triple ? source.slice(pos, pos + 3) : source[pos]!;
  pos += quote.length;
  let value = "";
  for (;;) {
    // The run of characters up to the next quote, backslash or line break, copied at once.
    let end = pos;
    while (end < source.length) {
      const code = source.charCodeAt(end);
      if (code === quoteCode || code === 0x5c || code === 0x0a) break;
      end++;
    }
    if (end > pos) {
      value += source.slice(pos, end);
      pos = end;
    }
    if (pos >= source.length) throw new PySyntaxError("unterminated string literal", start);
    if (triple ? source.startsWith(quote, pos) : source.charCodeAt(pos) === quoteCode) return { type: "string", text: "", value, bytes, start, end: pos + quote.length };
    const ch = source[pos]!;
    if (ch === "\n" && !triple) throw new PySyntaxError("unterminated string literal", start);
    if (ch !== "\\") {
      value += ch;
      pos++;
      continue;
    }
    const next = source[pos + 1];
    if (next === undefined) throw new PySyntaxError("unterminated string literal", start);
    if (raw) {
      // A raw string keeps the backslash; it only stops the next character from ending the string.
      value += ch + next;
      pos += 2;
      continue;
    }
    const [text, length] = escapeSequence(source, pos, bytes);
    value += text;
    pos += length;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  "\n": "",
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

function escapeSequence(source: string, pos: number, bytes: boolean): [string, number] {
  const next = source[pos + 1]!;
  const simple = SIMPLE_ESCAPES[next];
  if (simple !== undefined) return [simple, 2];
  if (next >= "0" && next <= "7") {
    const digits = /^[0-7]{1,3}/.exec(source.slice(pos + 1))![0];
    return [String.fromCodePoint(parseInt(digits, 8)), 1 + digits.length];
  }
  const widths: Record<string, number> = bytes ? { x: 2 } : { x: 2, u: 4, U: 8 };
  const width = widths[next];
  if (width !== undefined) {
    const hex = source.slice(pos + 2, pos + 2 + width);
    if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) throw new PySyntaxError(`truncated \\${next} escape`, pos);
    const code = parseInt(hex, 16);
    if (code > 0x10ffff) throw new PySyntaxError(`illegal Unicode character in \\${next} escape`, pos);
    return [String.fromCodePoint(code), 2 + width];
  }
  if (next === "N" && !bytes) throw new PySyntaxError("\\N{...} escapes are not supported", pos);
  // Python keeps an unknown escape as written (with a warning).
  return [`\\${next}`, 2];
}

/**
 * How deeply expressions may nest inside each other while parsing (brackets, calls, unary
 * operators): Python's own parser stops at 200 nested brackets. Deeper text is a `DepthLimitError`.
 */
export const NESTING_LIMIT = 200;

/**
 * How deep a parsed tree may be (a chain such as `1+1+…` or `a.b.c…` grows it without nesting):
 * the readers of the tree recurse, and upstream's do too, up to Python's recursion limit.
 */
export const TREE_DEPTH_LIMIT = 1000;

/** Parse one Python expression (as `ast.parse(text, mode="eval")` would). */
export function parseExpression(source: string): Expr {
  const parser = new Parser(tokenize(source));
  const expr = parser.expressionList();
  parser.expectEnd();
  if (treeDepthExceeds(expr, TREE_DEPTH_LIMIT)) throw new DepthLimitError(TREE_DEPTH_LIMIT, "the expression");
  return expr;
}

class Parser {
  private index = 0;
  private nesting = 0;
  constructor(private readonly tokens: Token[]) {}

  /** Runs `parse` one level deeper, refusing text nested past `NESTING_LIMIT`. */
  private nested<T>(parse: () => T): T {
    if (++this.nesting > NESTING_LIMIT) throw new DepthLimitError(NESTING_LIMIT, "the expression");
    try {
      return parse();
    } finally {
      this.nesting--;
    }
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private isOp(text: string): boolean {
    const token = this.peek();
    return token.type === "op" && token.text === text;
  }

  private isName(text: string): boolean {
    const token = this.peek();
    return token.type === "name" && token.text === text;
  }

  private take(): Token {
    return this.tokens[this.index++]!;
  }

  private expectOp(text: string): void {
    if (!this.isOp(text)) this.fail(`expected '${text}'`);
    this.index++;
  }

  private fail(message: string): never {
    const token = this.peek();
    const found = token.type === "end" ? "end of input" : token.type === "string" ? "a string" : `'${token.text}'`;
    throw new PySyntaxError(`${message}, found ${found}`, token.start);
  }

  expectEnd(): void {
    if (this.peek().type !== "end") this.fail("unexpected text after the expression");
  }

  /** `a, b` at the top level or inside parentheses is a tuple. */
  expressionList(): Expr {
    const first = this.expression();
    if (!this.isOp(",")) return first;
    const elts = [first];
    while (this.isOp(",")) {
      this.index++;
      if (this.atSequenceEnd()) break;
      elts.push(this.expression());
    }
    return { kind: "tuple", elts };
  }

  private atSequenceEnd(): boolean {
    const token = this.peek();
    return token.type === "end" || (token.type === "op" && (token.text === ")" || token.text === "]" || token.text === "}"));
  }

  expression(): Expr {
    return this.nested(() => this.bareExpression());
  }

  private bareExpression(): Expr {
    const token = this.peek();
    if (token.type === "name" && KEYWORDS.has(token.text) && token.text !== "not") this.fail("unsupported expression");
    if (this.isName("not")) {
      this.index++;
      return { kind: "unary", op: "not", operand: this.expression() };
    }
    const expr = this.binary(1);
    const next = this.peek();
    if (next.type === "op" && isComparison(next.text)) this.fail("comparisons are not supported");
    if (next.type === "name" && KEYWORDS.has(next.text)) this.fail("unsupported expression");
    return expr;
  }

  /**
   * The binary operators that bind at least as tightly as `minPrecedence`, by precedence climbing:
   * the same left-associative trees as one grammar rule per level, in one loop.
   */
  private binary(minPrecedence: number): Expr {
    let left = this.factor();
    for (;;) {
      const token = this.peek();
      if (token.type !== "op") return left;
      const precedence = binaryPrecedence(token.text);
      if (precedence < minPrecedence) return left;
      this.index++;
      left = { kind: "binop", op: token.text as BinaryOp, left, right: this.binary(precedence + 1) };
    }
  }

  private factor(): Expr {
    const token = this.peek();
    if (token.type === "op" && (token.text === "-" || token.text === "+" || token.text === "~")) {
      this.index++;
      return { kind: "unary", op: token.text, operand: this.nested(() => this.factor()) };
    }
    return this.power();
  }

  private power(): Expr {
    const base = this.primary();
    if (!this.isOp("**")) return base;
    this.index++;
    return { kind: "binop", op: "**", left: base, right: this.nested(() => this.factor()) };
  }

  private primary(): Expr {
    let expr = this.atom();
    for (;;) {
      if (this.isOp("(")) expr = this.call(expr);
      else if (this.isOp(".")) {
        this.index++;
        const name = this.take();
        if (name.type !== "name") this.fail("expected an attribute name");
        expr = { kind: "attribute", value: expr, attr: name.text };
      } else if (this.isOp("[")) {
        this.index++;
        const slice = this.subscript();
        this.expectOp("]");
        expr = { kind: "subscript", value: expr, slice };
      } else return expr;
    }
  }

  private subscript(): Expr {
    const part = (): Expr | null => (this.isOp(":") || this.isOp("]") ? null : this.expression());
    const lower = part();
    if (!this.isOp(":")) {
      if (lower === null) this.fail("expected an index");
      return lower;
    }
    this.index++;
    const upper = part();
    let step: Expr | null = null;
    if (this.isOp(":")) {
      this.index++;
      step = part();
    }
    return { kind: "slice", lower, upper, step };
  }

  private call(func: Expr): Expr {
    this.expectOp("(");
    const args: Expr[] = [];
    const keywords: Keyword[] = [];
    while (!this.isOp(")")) {
      if (this.isOp("*") || this.isOp("**")) this.fail("argument unpacking is not supported");
      const token = this.peek();
      const following = this.tokens[this.index + 1];
      if (token.type === "name" && following?.type === "op" && following.text === "=") {
        this.index += 2;
        if (keywords.some((k) => k.arg === token.text)) throw new PySyntaxError(`keyword argument repeated: ${token.text}`, token.start);
        keywords.push({ arg: token.text, value: this.expression() });
      } else {
        if (keywords.length > 0) throw new PySyntaxError("positional argument follows keyword argument", token.start);
        args.push(this.expression());
      }
      if (!this.isOp(",")) break;
      this.index++;
    }
    this.expectOp(")");
    return { kind: "call", func, args, keywords };
  }

  private atom(): Expr {
    const token = this.take();
    switch (token.type) {
      case "number":
        return { kind: "constant", value: numberValue(token.text, token.start) };
      case "string": {
        let value = token.value;
        while (this.peek().type === "string") {
          const next = this.take();
          if (next.bytes !== token.bytes) throw new PySyntaxError("cannot mix bytes and nonbytes literals", next.start);
          value += next.value;
        }
        if (token.bytes) throw new PySyntaxError("bytes literals are not supported", token.start);
        return { kind: "constant", value };
      }
      case "name":
        if (token.text === "True") return { kind: "constant", value: true };
        if (token.text === "False") return { kind: "constant", value: false };
        if (token.text === "None") return { kind: "constant", value: null };
        if (KEYWORDS.has(token.text)) {
          this.index--;
          this.fail("unsupported expression");
        }
        return { kind: "name", id: token.text };
      case "op":
        if (token.text === "...") return { kind: "ellipsis" };
        if (token.text === "(") return this.parenthesised();
        if (token.text === "[") return this.sequence("]", "list");
        if (token.text === "{") return this.braces();
        this.index--;
        return this.fail("expected an expression");
      case "end":
        this.index--;
        return this.fail("expected an expression");
    }
  }

  private parenthesised(): Expr {
    if (this.isOp(")")) {
      this.index++;
      return { kind: "tuple", elts: [] };
    }
    const expr = this.expressionList();
    this.expectOp(")");
    return expr;
  }

  private sequence(close: string, kind: "list" | "set"): Expr {
    const elts: Expr[] = [];
    while (!this.isOp(close)) {
      elts.push(this.expression());
      if (this.isName("for")) this.fail("comprehensions are not supported");
      if (!this.isOp(",")) break;
      this.index++;
    }
    this.expectOp(close);
    return { kind, elts };
  }

  private braces(): Expr {
    if (this.isOp("}")) {
      this.index++;
      return { kind: "dict", keys: [], values: [] };
    }
    if (this.isOp("**")) this.fail("dict unpacking is not supported");
    const first = this.expression();
    if (!this.isOp(":")) {
      if (!this.isOp(",")) {
        this.expectOp("}");
        return { kind: "set", elts: [first] };
      }
      this.index++;
      const rest = this.sequence("}", "set") as Extract<Expr, { kind: "set" }>;
      return { kind: "set", elts: [first, ...rest.elts] };
    }
    const keys: Expr[] = [];
    const values: Expr[] = [];
    let key = first;
    for (;;) {
      this.expectOp(":");
      keys.push(key);
      values.push(this.expression());
      if (this.isName("for")) this.fail("comprehensions are not supported");
      if (!this.isOp(",")) break;
      this.index++;
      if (this.isOp("}")) break;
      if (this.isOp("**")) this.fail("dict unpacking is not supported");
      key = this.expression();
    }
    this.expectOp("}");
    return { kind: "dict", keys, values };
  }
}

function isDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return text.length > 0;
}
const LEADING_ZEROS = /^0+[1-9]/;

function numberValue(text: string, start: number): PyObject {
  // Most numbers in calls are plain decimal integers.
  if (isDigits(text)) {
    if (text.length > 1 && text.charCodeAt(0) === 48 && LEADING_ZEROS.test(text)) {
      throw new PySyntaxError("leading zeros in decimal integer literals are not permitted", start);
    }
    // Up to 15 digits a double holds the value exactly, and converting it is quicker than parsing the text again.
    return text.length <= 15 ? BigInt(Number(text)) : BigInt(text);
  }
  if (/[jJ]$/.test(text)) throw new PySyntaxError("complex numbers are not supported", start);
  const clean = text.replaceAll("_", "");
  if (/^0[xXoObB]/.test(clean)) return BigInt(clean);
  if (/[.eE]/.test(clean)) return Number(clean);
  if (LEADING_ZEROS.test(clean)) throw new PySyntaxError("leading zeros in decimal integer literals are not permitted", start);
  return BigInt(clean);
}
