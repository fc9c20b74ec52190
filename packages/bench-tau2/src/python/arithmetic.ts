import { floatRepr, operator, PyException, roundFloat, typeError } from "@envace/python-text";

/**
 * The `calculate` tool's arithmetic: `str(round(float(eval(expression)), 2))` over digits,
 * `+ - * /`, parentheses, dots and spaces, with Python's numeric semantics (exact ints, true division,
 * `//`, `**` binding tighter than unary minus) and Python's error messages.
 */
export function calculate(expression: string): string {
  const value = evaluate(parse(expression));
  if (value === "tuple" || value === "complex") {
    throw typeError(`float() argument must be a string or a real number, not '${value}'`);
  }
  return floatRepr(roundFloat(toFloat(value), 2));
}

type Value = bigint | number | "tuple" | "complex";

type Node =
  | { kind: "number"; value: bigint | number }
  | { kind: "tuple" }
  | { kind: "unary"; op: "+" | "-"; operand: Node }
  | { kind: "binary"; op: "+" | "-" | "*" | "/" | "//" | "**"; left: Node; right: Node }
  | { kind: "call"; callee: Node };

function syntaxError(message: string, line = 1): PyException {
  return new PyException("SyntaxError", `${message} (<string>, line ${line})`);
}

interface Token {
  type: "number" | "op" | "(" | ")" | ".";
  text: string;
}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let i = 0;
  while (i < expression.length) {
    const c = expression[i]!;
    if (c === " ") {
      i++;
      continue;
    }
    const number = /^(?:\d+\.\d*|\.\d+|\d+)/.exec(expression.slice(i));
    if (number) {
      const text = number[0];
      if (/^0+[1-9]/.test(text) && !text.includes(".")) {
        throw syntaxError("leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
      }
      tokens.push({ type: "number", text });
      i += text.length;
      continue;
    }
    if (c === "(") {
      depth++;
      tokens.push({ type: "(", text: c });
    } else if (c === ")") {
      if (depth === 0) throw syntaxError("unmatched ')'");
      depth--;
      tokens.push({ type: ")", text: c });
    } else if (c === ".") {
      tokens.push({ type: ".", text: c });
    } else if ((c === "*" || c === "/") && expression[i + 1] === c) {
      tokens.push({ type: "op", text: c + c });
      i++;
    } else {
      tokens.push({ type: "op", text: c });
    }
    i++;
  }
  if (depth > 0) throw syntaxError("'(' was never closed");
  return tokens;
}

function parse(expression: string): Node {
  const tokens = tokenize(expression);
  if (tokens.length === 0) throw syntaxError("invalid syntax", 0);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (...ops: string[]): boolean => peek()?.type === "op" && ops.includes(peek()!.text);
  const invalid = (): never => {
    throw syntaxError("invalid syntax");
  };

  const expr = (): Node => {
    let node = term();
    while (isOp("+", "-")) {
      const op = tokens[pos++]!.text as "+" | "-";
      node = { kind: "binary", op, left: node, right: term() };
    }
    return node;
  };
  const term = (): Node => {
    let node = factor();
    while (isOp("*", "/", "//")) {
      const op = tokens[pos++]!.text as "*" | "/" | "//";
      node = { kind: "binary", op, left: node, right: factor() };
    }
    return node;
  };
  const factor = (): Node => {
    if (isOp("+", "-")) {
      const op = tokens[pos++]!.text as "+" | "-";
      return { kind: "unary", op, operand: factor() };
    }
    const base = primary();
    if (isOp("**")) {
      pos++;
      return { kind: "binary", op: "**", left: base, right: factor() };
    }
    return base;
  };
  const primary = (): Node => {
    let node = atom();
    while (peek()?.type === "(") {
      pos++;
      if (peek()?.type !== ")") expr();
      if (peek()?.type !== ")") invalid();
      pos++;
      node = { kind: "call", callee: node };
    }
    return node;
  };
  const atom = (): Node => {
    const token = peek();
    if (token === undefined) return invalid();
    if (token.type === "number") {
      pos++;
      const text = token.text;
      return { kind: "number", value: /^\d+$/.test(text) ? BigInt(text) : Number(text) };
    }
    if (token.type === "(") {
      pos++;
      if (peek()?.type === ")") {
        pos++;
        return { kind: "tuple" };
      }
      const inner = expr();
      if (peek()?.type !== ")") invalid();
      pos++;
      return inner;
    }
    return invalid();
  };

  const node = expr();
  if (pos < tokens.length) invalid();
  return node;
}

function typeName(value: Value): string {
  if (value === "tuple" || value === "complex") return value;
  return typeof value === "bigint" ? "int" : "float";
}

function toFloat(value: bigint | number): number {
  if (typeof value === "number") return value;
  const float = Number(value);
  if (!Number.isFinite(float)) throw new PyException("OverflowError", "int too large to convert to float");
  return float;
}

function evaluate(node: Node): Value {
  switch (node.kind) {
    case "number":
      return node.value;
    case "tuple":
      return "tuple";
    case "call": {
      const callee = evaluate(node.callee);
      throw typeError(`'${typeName(callee)}' object is not callable`);
    }
    case "unary": {
      const value = evaluate(node.operand);
      if (value === "tuple") throw typeError(`bad operand type for unary ${node.op}: 'tuple'`);
      if (value === "complex" || node.op === "+") return value;
      return typeof value === "bigint" ? -value : -value;
    }
    case "binary":
      return binary(node.op, evaluate(node.left), evaluate(node.right));
  }
}

function binary(op: "+" | "-" | "*" | "/" | "//" | "**", a: Value, b: Value): Value {
  if (a === "tuple" || b === "tuple") {
    if (op === "+" && a === "tuple" && b === "tuple") return "tuple";
    if (op === "*" && (typeof a === "bigint" || typeof b === "bigint")) return "tuple";
    throw typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
  }
  if (a === "complex" || b === "complex") {
    if (op === "//") throw typeError(`unsupported operand type(s) for //: '${typeName(a)}' and '${typeName(b)}'`);
    return "complex";
  }
  // Python computes an int pair exactly and turns a mixed pair into floats first (an int too large for a float raises).
  const [x, y] = typeof a === "bigint" && typeof b === "bigint" ? [a, b] : [toFloat(a), toFloat(b)];
  if (op === "/") return trueDivide(x, y);
  if (op === "//") return floorDivide(x, y);
  if (op === "**") return power(x, y);
  // `+`, `-` and `*` are exactly Python's for an int pair and for floats.
  return operator.BINARY[op]!(x, y) as bigint | number;
}

/** `/` divides ints as floats too; only the message for a zero divisor tells the two apart. */
function trueDivide(x: bigint | number, y: bigint | number): number {
  if (y === 0n) throw new PyException("ZeroDivisionError", "division by zero");
  if (y === 0) throw new PyException("ZeroDivisionError", "float division by zero");
  return toFloat(x) / toFloat(y);
}

function floorDivide(x: bigint | number, y: bigint | number): bigint | number {
  if (typeof x === "bigint" && typeof y === "bigint") {
    if (y === 0n) throw new PyException("ZeroDivisionError", "integer division or modulo by zero");
    return floorDiv(x, y);
  }
  if (y === 0) throw new PyException("ZeroDivisionError", "float floor division by zero");
  return floatFloorDiv(x as number, y as number);
}

/** `**`: an int to a non-negative int power stays exact; the rest is a float power (or complex, which the tool refuses). */
function power(x: bigint | number, y: bigint | number): Value {
  if (typeof x === "bigint" && typeof y === "bigint" && y >= 0n) {
    if (y > 100_000n && (x > 1n || x < -1n)) throw new PyException("OverflowError", "int too large to convert to float");
    return x ** y;
  }
  const [base, exponent] = [toFloat(x), toFloat(y)];
  if (base === 0 && exponent < 0) throw new PyException("ZeroDivisionError", "0.0 cannot be raised to a negative power");
  if (base < 0 && !Number.isInteger(exponent)) return "complex";
  const result = Math.pow(base, exponent);
  if (!Number.isFinite(result) && Number.isFinite(base) && Number.isFinite(exponent)) {
    throw new PyException("OverflowError", "(34, 'Numerical result out of range')");
  }
  return result;
}

// CPython's float_floor_div, which differs from Math.floor(x / y) (1 // 0.1 is 9.0 in Python).
function floatFloorDiv(x: number, y: number): number {
  const mod = x % y;
  let div = (x - mod) / y;
  if (mod !== 0 && y < 0 !== mod < 0) div -= 1;
  if (div === 0) return Object.is(x / y, -0) || x / y < 0 ? -0 : 0;
  let floor = Math.floor(div);
  if (div - floor > 0.5) floor += 1;
  return floor;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const quotient = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? quotient - 1n : quotient;
}
