import { pyFloat, pyInt, type PyObject } from "@envace/python-text";

/**
 * Gorilla parameter types (the `type` strings in BFCL function docs) and what they mean in each
 * language BFCL checks, as upstream's tables define them. The checker compares Python type
 * names, so each table maps a Gorilla type to the Python type a value must have after decoding.
 */

export type Language = "python" | "java" | "javascript";

/** Java's and JavaScript's last resort for a literal of unknown type: Python's `int(text)`, else `float(text)`, else the text. */
export function intFloatOrText(text: string): PyObject {
  try {
    return pyInt(text);
  } catch {
    try {
      return pyFloat(text);
    } catch {
      return text;
    }
  }
}

/** Python categories: the type a decoded argument must have. */
export const PYTHON_TYPES: Readonly<Record<string, string>> = {
  string: "str",
  integer: "int",
  float: "float",
  boolean: "bool",
  array: "list",
  tuple: "list",
  dict: "dict",
  any: "str",
};

/** Gorilla types whose items are type-checked one level deep (Python). */
export const PYTHON_NESTED_TYPES: readonly string[] = ["array", "tuple"];

/** Java categories: the Python type a Java-syntax string converts to. */
export const JAVA_TYPES: Readonly<Record<string, string>> = {
  byte: "int",
  short: "int",
  integer: "int",
  float: "float",
  double: "float",
  long: "int",
  boolean: "bool",
  char: "str",
  Array: "list",
  ArrayList: "list",
  Set: "set",
  HashMap: "dict",
  Hashtable: "dict",
  Queue: "list",
  Stack: "list",
  String: "str",
  any: "str",
};

/** JavaScript categories: the Python type a JavaScript-syntax string converts to. */
export const JAVASCRIPT_TYPES: Readonly<Record<string, string>> = {
  String: "str",
  integer: "int",
  float: "float",
  Bigint: "int",
  Boolean: "bool",
  dict: "dict",
  array: "list",
  any: "str",
};

/** Java and JavaScript types whose string value is a collection of typed items. */
export const NESTED_CONVERSION_TYPES: readonly string[] = ["Array", "ArrayList", "array"];

/** Gorilla types as JSON Schema types, for handing function docs to models as tools. */
export const GORILLA_TO_JSON_SCHEMA: Readonly<Record<string, string>> = {
  integer: "integer",
  number: "number",
  float: "number",
  string: "string",
  boolean: "boolean",
  bool: "boolean",
  array: "array",
  list: "array",
  dict: "object",
  object: "object",
  tuple: "array",
  any: "string",
  byte: "integer",
  short: "integer",
  long: "integer",
  double: "number",
  char: "string",
  ArrayList: "array",
  Array: "array",
  HashMap: "object",
  Hashtable: "object",
  Queue: "array",
  Stack: "array",
  Any: "string",
  String: "string",
  Bigint: "integer",
};

/** The Python type name for a Gorilla type in a language, or undefined when the table lacks it. */
export function pythonTypeFor(language: Language, gorillaType: string): string | undefined {
  const table = language === "java" ? JAVA_TYPES : language === "javascript" ? JAVASCRIPT_TYPES : PYTHON_TYPES;
  return Object.hasOwn(table, gorillaType) ? table[gorillaType] : undefined;
}
