import { pyRepr } from "@envace/python-text";
import type { BinaryOp, Expr } from "./syntax.js";

/** Binding strength of each construct, as Python's `ast.unparse` ranks them. */
const Precedence = {
  Tuple: 1,
  Not: 6,
  BitOr: 9,
  BitXor: 10,
  BitAnd: 11,
  Shift: 12,
  Arith: 13,
  Term: 14,
  Factor: 15,
  Power: 16,
  Atom: 18,
} as const;

const BINARY_PRECEDENCE: Record<BinaryOp, number> = {
  "|": Precedence.BitOr,
  "^": Precedence.BitXor,
  "&": Precedence.BitAnd,
  "<<": Precedence.Shift,
  ">>": Precedence.Shift,
  "+": Precedence.Arith,
  "-": Precedence.Arith,
  "*": Precedence.Term,
  "/": Precedence.Term,
  "//": Precedence.Term,
  "%": Precedence.Term,
  "@": Precedence.Term,
  "**": Precedence.Power,
};

/** The source text Python's `ast.unparse` gives an expression. */
export function unparse(expr: Expr): string {
  return write(expr, Precedence.Tuple);
}

function write(expr: Expr, context: number): string {
  switch (expr.kind) {
    case "constant":
      return pyRepr(expr.value);
    case "ellipsis":
      return "...";
    case "name":
      return expr.id;
    case "attribute":
      return `${write(expr.value, Precedence.Atom)}.${expr.attr}`;
    case "call": {
      const args = [...expr.args.map((a) => write(a, Precedence.Tuple + 1)), ...expr.keywords.map((k) => `${k.arg}=${write(k.value, Precedence.Tuple + 1)}`)];
      return `${write(expr.func, Precedence.Atom)}(${args.join(", ")})`;
    }
    case "list":
      return `[${expr.elts.map((e) => write(e, Precedence.Tuple + 1)).join(", ")}]`;
    case "set":
      return `{${expr.elts.map((e) => write(e, Precedence.Tuple + 1)).join(", ")}}`;
    case "tuple": {
      const items = expr.elts.map((e) => write(e, Precedence.Tuple + 1));
      return items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
    }
    case "dict":
      return `{${expr.keys.map((k, i) => `${write(k, Precedence.Tuple + 1)}: ${write(expr.values[i]!, Precedence.Tuple + 1)}`).join(", ")}}`;
    case "unary": {
      if (expr.op === "not") return parenthesise(`not ${write(expr.operand, Precedence.Not)}`, Precedence.Not, context);
      return parenthesise(`${expr.op}${write(expr.operand, Precedence.Factor)}`, Precedence.Factor, context);
    }
    case "binop": {
      const own = BINARY_PRECEDENCE[expr.op];
      const rightAssociative = expr.op === "**";
      const left = write(expr.left, rightAssociative ? own + 1 : own);
      const right = write(expr.right, rightAssociative ? own : own + 1);
      return parenthesise(`${left} ${expr.op} ${right}`, own, context);
    }
    case "subscript": {
      const slice = expr.slice.kind === "tuple" ? expr.slice.elts.map((e) => write(e, Precedence.Tuple + 1)).join(", ") : write(expr.slice, Precedence.Tuple);
      return `${write(expr.value, Precedence.Atom)}[${slice}]`;
    }
    case "slice": {
      const part = (e: Expr | null) => (e === null ? "" : write(e, Precedence.Tuple + 1));
      return `${part(expr.lower)}:${part(expr.upper)}${expr.step === null ? "" : `:${part(expr.step)}`}`;
    }
  }
}

function parenthesise(text: string, own: number, context: number): string {
  return own < context ? `(${text})` : text;
}
