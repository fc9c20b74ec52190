import type { JsonObject } from "@envace/protocol";
import { iterate, pyTypeName, type PyValue, typeError, valueError } from "@envace/python-text";
import { calculate } from "../python/arithmetic.js";
import type { Database, DbRoot } from "../database.js";
import type { ToolDefinition, ToolParam } from "../toolkit.js";

// Pieces every τ² domain shares.

export const STRING: JsonObject = { type: "string" };
export const INTEGER: JsonObject = { type: "integer" };
export const STRING_LIST: JsonObject = { items: { type: "string" }, type: "array" };

export function param(name: string, schema: JsonObject, description: string): ToolParam {
  return { name, schema, description };
}

/** A read tool that returns the record its one argument names (`get_user_details(user_id)`). */
export function lookupTool<T extends DbRoot>(
  name: string,
  description: string,
  key: ToolParam,
  get: (db: Database<T>, id: PyValue) => PyValue,
): ToolDefinition<T> {
  return { name, kind: "read", description, params: [key], run: (db, args) => get(db, args.get(key.name)!) };
}

/** `transfer_to_human_agents(summary)`: always succeeds; the conversation is over for the agent. */
export function transferToHumanAgents<T extends DbRoot>(): ToolDefinition<T> {
  return {
    name: "transfer_to_human_agents",
    kind: "generic",
    description:
      "Hand the user over to a human agent together with a summary of the issue. Transfer only when the user explicitly asks for a human agent, or when the policy and the available tools cannot resolve the issue.",
    params: [param("summary", STRING, "A summary of the user's issue.")],
    run: () => "Transfer successful",
  };
}

const CALCULATOR_CHARACTERS = new Set("0123456789+-*/(). ");

/** `calculate(expression)`: arithmetic over digits, `+ - * /`, parentheses, dots and spaces. */
export function calculateTool<T extends DbRoot>(): ToolDefinition<T> {
  return {
    name: "calculate",
    kind: "generic",
    description: "Evaluate an arithmetic expression and return the result rounded to two decimals.",
    params: [param("expression", STRING, "The expression to evaluate, such as '2 + 2'. Only digits, + - * /, parentheses, dots and spaces are allowed.")],
    run: (_db, args) => {
      const expression = args.get("expression")!;
      for (const char of iterate(expression)) {
        if (typeof char !== "string") throw typeError(`'in <string>' requires string as left operand, not ${pyTypeName(char)}`);
        if (!isCalculatorText(char)) throw valueError("Invalid characters in expression");
      }
      if (typeof expression !== "string") throw typeError("eval() arg 1 must be a string, bytes or code object");
      return calculate(expression);
    },
  };
}

// `char in "0123456789+-*/(). "` is a substring test in Python.
function isCalculatorText(text: string): boolean {
  return text.length === 1 ? CALCULATOR_CHARACTERS.has(text) : "0123456789+-*/(). ".includes(text);
}
