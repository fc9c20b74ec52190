import { DepthLimitError, type PyObject } from "@envace/python-text";
import { isDigit, PySyntaxError, tokenize, type Token } from "./tokenize.js";
import { treeDepthExceeds } from "./tree-depth.js";

// Either half of the parser may refuse the text; the error is the parser's.
export { PySyntaxError };

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

/** Names the tokenizer passes as names that start constructs this parser refuses (or `not`). */
const KEYWORDS = new Set(["and", "or", "not", "in", "is", "if", "else", "lambda", "for", "await", "yield"]);

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
