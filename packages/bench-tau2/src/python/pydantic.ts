import { type PyDict, PyException, type PyModel, pyRepr, pyTypeName, type PyValue } from "@envace/python-text";

/**
 * The pydantic version whose messages we reproduce: upstream τ² pins pydantic 2.12, and its
 * `ValidationError` text links to `https://errors.pydantic.dev/2.12/v/<type>`.
 */
export const PYDANTIC_DOCS_VERSION = "2.12";

/** The field types τ²'s tools build models from, validated in pydantic's lax mode. */
export type FieldType =
  | { readonly kind: "str" }
  | { readonly kind: "int" }
  | { readonly kind: "float" }
  | { readonly kind: "bool" }
  | { readonly kind: "literal"; readonly values: readonly string[] }
  /** A `str` Enum: the same check as a literal, reported as pydantic reports enums. */
  | { readonly kind: "enum"; readonly values: readonly string[] }
  | { readonly kind: "optional"; readonly inner: FieldType }
  | { readonly kind: "list"; readonly item: FieldType }
  | { readonly kind: "model"; readonly model: ModelSpec };

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /** Present when the field is optional. */
  readonly default?: PyValue;
}

/** A pydantic model: its class name and fields in declaration order. */
export interface ModelSpec {
  readonly name: string;
  readonly fields: readonly FieldSpec[];
}

export const str: FieldType = { kind: "str" };
export const int: FieldType = { kind: "int" };
export const float: FieldType = { kind: "float" };
export const bool: FieldType = { kind: "bool" };
export const literal = (...values: string[]): FieldType => ({ kind: "literal", values });
export const strEnum = (...values: string[]): FieldType => ({ kind: "enum", values });
export const optional = (inner: FieldType): FieldType => ({ kind: "optional", inner });
export const list = (item: FieldType): FieldType => ({ kind: "list", item });

/** Fields of type `str`, in order: the run of plain text fields most models start with. */
export const strFields = (...names: string[]): FieldSpec[] => names.map((name) => ({ name, type: str }));
export const model = (spec: ModelSpec): FieldType => ({ kind: "model", model: spec });

interface Issue {
  loc: (string | number)[];
  type: string;
  msg: string;
  input: PyValue;
}

/**
 * `Model(**kwargs)`: the validated model with fields in declaration order, or a
 * `ValidationError` whose text is pydantic's, line for line.
 */
export function construct(spec: ModelSpec, kwargs: PyDict): PyModel {
  const issues: Issue[] = [];
  const value = validateModel(spec, kwargs, [], issues);
  if (issues.length > 0) throw validationError(spec.name, issues);
  return value;
}

function validateModel(spec: ModelSpec, input: PyDict, loc: (string | number)[], issues: Issue[]): PyModel {
  const out: PyModel = {};
  for (const field of spec.fields) {
    if (!input.has(field.name)) {
      if ("default" in field) out[field.name] = field.default ?? null;
      else issues.push({ loc: [...loc, field.name], type: "missing", msg: "Field required", input });
      continue;
    }
    out[field.name] = validate(field.type, input.get(field.name)!, [...loc, field.name], issues);
  }
  return out;
}

function validate(type: FieldType, input: PyValue, loc: (string | number)[], issues: Issue[]): PyValue {
  const fail = (kind: string, msg: string): PyValue => {
    issues.push({ loc, type: kind, msg, input });
    return null;
  };
  switch (type.kind) {
    case "str":
      return typeof input === "string" ? input : fail("string_type", "Input should be a valid string");
    case "int":
      return validateInt(input, fail);
    case "float":
      return validateFloat(input, fail);
    case "bool":
      return validateBool(input, fail);
    case "literal":
      return typeof input === "string" && type.values.includes(input) ? input : fail("literal_error", `Input should be ${describeChoices(type.values)}`);
    case "enum":
      return typeof input === "string" && type.values.includes(input) ? input : fail("enum", `Input should be ${describeChoices(type.values)}`);
    case "optional":
      return input === null ? null : validate(type.inner, input, loc, issues);
    case "list":
      if (!Array.isArray(input)) return fail("list_type", "Input should be a valid list");
      return input.map((item, i) => validate(type.item, item, [...loc, i], issues));
    case "model":
      if (input instanceof Map) return validateModel(type.model, input, loc, issues);
      if (input !== null && typeof input === "object" && !Array.isArray(input)) return input;
      return fail("model_type", `Input should be a valid dictionary or instance of ${type.model.name}`);
  }
}

function validateInt(input: PyValue, fail: (kind: string, msg: string) => PyValue): PyValue {
  if (typeof input === "bigint") return input;
  if (typeof input === "boolean") return input ? 1n : 0n;
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return fail("finite_number", "Input should be a finite number");
    if (!Number.isInteger(input)) return fail("int_from_float", "Input should be a valid integer, got a number with a fractional part");
    return BigInt(input);
  }
  if (typeof input === "string") {
    const text = input.trim().replaceAll(/(?<=\d)_(?=\d)/g, "");
    if (/^[-+]?\d+$/.test(text)) return BigInt(text);
    const number = /^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(text) ? Number(text) : NaN;
    if (Number.isInteger(number)) return BigInt(number);
    return fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer");
  }
  return fail("int_type", "Input should be a valid integer");
}

function validateFloat(input: PyValue, fail: (kind: string, msg: string) => PyValue): PyValue {
  if (typeof input === "number") return input;
  if (typeof input === "bigint") return Number(input);
  if (typeof input === "boolean") return input ? 1 : 0;
  if (typeof input === "string") {
    const text = input
      .trim()
      .replaceAll(/(?<=\d)_(?=\d)/g, "")
      .toLowerCase();
    if (/^[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$/.test(text)) return Number(text);
    if (/^[-+]?(inf|infinity)$/.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
    if (/^[-+]?nan$/.test(text)) return NaN;
    return fail("float_parsing", "Input should be a valid number, unable to parse string as a number");
  }
  return fail("float_type", "Input should be a valid number");
}

const TRUE_TEXTS = new Set(["1", "on", "t", "true", "y", "yes"]);
const FALSE_TEXTS = new Set(["0", "off", "f", "false", "n", "no"]);

function validateBool(input: PyValue, fail: (kind: string, msg: string) => PyValue): PyValue {
  if (typeof input === "boolean") return input;
  if ((typeof input === "bigint" || typeof input === "number") && (input == 0 || input == 1)) return input == 1;
  if (typeof input === "string") {
    const text = input.trim().toLowerCase();
    if (TRUE_TEXTS.has(text)) return true;
    if (FALSE_TEXTS.has(text)) return false;
    return fail("bool_parsing", "Input should be a valid boolean, unable to interpret input");
  }
  return fail("bool_type", "Input should be a valid boolean");
}

function describeChoices(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length === 1) return quoted[0]!;
  return `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

// pydantic-core shortens a long input repr to its first 25 and last 24 characters.
function truncatedRepr(value: PyValue): string {
  const chars = Array.from(pyRepr(value));
  if (chars.length <= 50) return chars.join("");
  return `${chars.slice(0, 25).join("")}...${chars.slice(-24).join("")}`;
}

function validationError(modelName: string, issues: readonly Issue[]): PyException {
  const lines = [`${issues.length} validation error${issues.length === 1 ? "" : "s"} for ${modelName}`];
  for (const issue of issues) {
    lines.push(issue.loc.join("."));
    lines.push(`  ${issue.msg} [type=${issue.type}, input_value=${truncatedRepr(issue.input)}, input_type=${pyTypeName(issue.input)}]`);
    lines.push(`    For further information visit https://errors.pydantic.dev/${PYDANTIC_DOCS_VERSION}/v/${issue.type}`);
  }
  return new PyException("ValidationError", lines.join("\n"));
}
