import { operator, PyException, PyHashDict, PyOpaque, type PyObject, PySet, PyTuple, truthy, typeError } from "@envace/python-text";
import type { Expr } from "./syntax.js";

/** What names and calls mean while evaluating; by default every name is undefined. */
export interface Scope {
  name?(id: string): PyObject | undefined;
  call?(func: Expr, args: PyObject[], keywords: Map<string, PyObject>): PyObject;
}

const ELLIPSIS = new PyOpaque("ellipsis", "Ellipsis");

/**
 * Evaluate an expression as Python's `eval` would, for the constructs call strings contain:
 * literals, containers, arithmetic, subscripts, and names and calls resolved through `scope`.
 * Nothing is executed beyond what `scope.call` does.
 */
export function evaluate(expr: Expr, scope: Scope = {}): PyObject {
  switch (expr.kind) {
    case "constant":
      return expr.value;
    case "ellipsis":
      return ELLIPSIS;
    case "list":
      return expr.elts.map((e) => evaluate(e, scope));
    case "tuple":
      return new PyTuple(expr.elts.map((e) => evaluate(e, scope)));
    case "set":
      return new PySet(expr.elts.map((e) => evaluate(e, scope)));
    case "dict":
      return new PyHashDict(expr.keys.map((key, i) => [evaluate(key, scope), evaluate(expr.values[i]!, scope)]));
    case "unary": {
      const operand = evaluate(expr.operand, scope);
      if (expr.op === "-") return operator.neg(operand);
      if (expr.op === "+") return operator.pos(operand);
      if (expr.op === "~") return operator.invert(operand);
      return !truthy(operand);
    }
    case "binop": {
      const op = operator.BINARY[expr.op];
      const left = evaluate(expr.left, scope);
      const right = evaluate(expr.right, scope);
      if (!op) throw typeError(`the '${expr.op}' operator is not supported`);
      return op(left, right);
    }
    case "subscript":
      if (expr.slice.kind === "slice") throw typeError("slices are not supported");
      return operator.getitem(evaluate(expr.value, scope), evaluate(expr.slice, scope));
    case "name": {
      const value = scope.name?.(expr.id);
      if (value === undefined) throw new PyException("NameError", `name '${expr.id}' is not defined`);
      return value;
    }
    case "attribute":
      evaluate(expr.value, scope);
      throw new PyException("AttributeError", `attribute '${expr.attr}' is not available`);
    case "call": {
      if (!scope.call) throw new PyException("NameError", "calls are not allowed here");
      const args = expr.args.map((a) => evaluate(a, scope));
      const keywords = new Map(expr.keywords.map((k) => [k.arg, evaluate(k.value, scope)]));
      return scope.call(expr.func, args, keywords);
    }
    case "slice":
      throw typeError("slices are not supported");
  }
}
