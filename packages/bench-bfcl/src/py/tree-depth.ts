import type { Expr } from "./syntax.js";

/** Whether `root` is deeper than `limit`, measured without recursion. */
export function treeDepthExceeds(root: Expr, limit: number): boolean {
  const stack: [Expr | null, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [expr, depth] = stack.pop()!;
    if (expr === null) continue;
    if (depth > limit) return true;
    for (const child of children(expr)) stack.push([child, depth + 1]);
  }
  return false;
}

function children(expr: Expr): (Expr | null)[] {
  switch (expr.kind) {
    case "constant":
    case "ellipsis":
    case "name":
      return [];
    case "attribute":
      return [expr.value];
    case "call":
      return [expr.func, ...expr.args, ...expr.keywords.map((keyword) => keyword.value)];
    case "list":
    case "tuple":
    case "set":
      return expr.elts;
    case "dict":
      return [...expr.keys, ...expr.values];
    case "unary":
      return [expr.operand];
    case "binop":
      return [expr.left, expr.right];
    case "subscript":
      return [expr.value, expr.slice];
    case "slice":
      return [expr.lower, expr.upper, expr.step];
  }
}
