import { iterate, keyError, operator, PyException, PyHashDict, type PyObject, pyRepr, PyTuple, pyTypeName } from "@envace/python-text";
import { ACCEPT, matchCalls, reject } from "@envace/rewards";
import type { ArgumentRules, FunctionSignature, MatchMode, Verdict } from "@envace/rewards";
import type { DecodedCall } from "../decode.js";
import { convertJava } from "./java.js";
import { convertJavaScript } from "./javascript.js";
import { JAVA_TYPES, JAVASCRIPT_TYPES, NESTED_CONVERSION_TYPES, PYTHON_NESTED_TYPES, PYTHON_TYPES } from "./types.js";
import type { Language } from "./types.js";
import { checkDict, checkList, checkListOfDicts, checkOther, checkString, perReference } from "./values.js";

/** A parameter as a BFCL function doc declares it. */
export interface ParamDoc {
  readonly type: string;
  readonly items?: { readonly type?: string };
}

/** A function as a BFCL function doc declares it. */
export interface FunctionDocLike {
  readonly name: string;
  readonly parameters: { readonly properties: Readonly<Record<string, ParamDoc>>; readonly required?: readonly string[] };
}

/** One call of a reference answer: for each parameter, the values it accepts (`""` = may be omitted). */
export interface AnswerCall {
  readonly name: string;
  readonly params: ReadonlyMap<string, PyObject>;
}

export interface AstVerdict {
  readonly valid: boolean;
  /** Upstream's `error_type` (e.g. `type_error:simple`, `simple_function_checker:missing_required`). */
  readonly errorType?: string;
  readonly error?: string;
}

export interface AstCheckOptions {
  /**
   * Expect `_` where declared names have `.`, as for models whose tool names cannot contain dots
   * (upstream's `underscore_to_dot` model setting). Off by default.
   */
  readonly underscoreToDot?: boolean;
}

/** The language whose rules apply to a single-turn category. */
export function languageOf(category: string): Language {
  if (category.includes("javascript")) return "javascript";
  if (category.includes("java")) return "java";
  return "python";
}

/** How a category's calls are matched: `parallel` before `multiple` (so `parallel_multiple` is parallel). */
export function matchModeOf(category: string): MatchMode {
  if (category.includes("parallel")) return "parallel";
  if (category.includes("multiple")) return "multiple";
  return "single";
}

const GENERIC_ERROR_TYPES: Readonly<Record<string, string>> = {
  wrong_func_name: "simple_function_checker:wrong_func_name",
  missing_required: "simple_function_checker:missing_required",
  unexpected_param: "simple_function_checker:unexpected_param",
  missing_optional: "simple_function_checker:missing_optional",
  cannot_find_match: "parallel_function_checker_no_order:cannot_find_match",
  unknown_function: "ast_checker:unknown_function",
};

const COUNT_ERROR_TYPES: Readonly<Record<MatchMode, string>> = {
  single: "simple_function_checker:wrong_count",
  multiple: "multiple_function_checker:wrong_count",
  parallel: "parallel_function_checker_no_order:wrong_count",
};

/**
 * BFCL's AST checker for one single-turn entry: the decoded calls against the reference
 * answer, with the category's matching mode and language rules. A reference or function doc
 * that upstream's checker would crash on yields an invalid verdict with `errorType`
 * `ast_checker:error` rather than an exception.
 */
export function checkAst(input: {
  category: string;
  functions: readonly FunctionDocLike[];
  output: readonly DecodedCall[];
  answer: readonly AnswerCall[];
  options?: AstCheckOptions;
}): AstVerdict {
  const mode = matchModeOf(input.category);
  const language = languageOf(input.category);
  let verdict: Verdict;
  try {
    verdict = matchCalls(mode, {
      functions: signaturesOf(input.functions),
      calls: input.output,
      expected: input.answer,
      rules: rulesFor(language, input.options?.underscoreToDot === true),
    });
  } catch (error) {
    if (error instanceof PyException) return { valid: false, errorType: "ast_checker:error", error: error.message };
    throw error;
  }
  if (verdict.valid) return { valid: true };
  const errorType = verdict.code === "wrong_count" ? COUNT_ERROR_TYPES[mode] : (GENERIC_ERROR_TYPES[verdict.code] ?? verdict.code);
  return { valid: false, errorType, error: verdict.message };
}

// A loaded entry's docs are checked once per output: build its signatures once.
const signatures = new WeakMap<readonly FunctionDocLike[], readonly FunctionSignature<ParamDoc>[]>();

function signaturesOf(docs: readonly FunctionDocLike[]): readonly FunctionSignature<ParamDoc>[] {
  let built = signatures.get(docs);
  if (built === undefined) {
    built = docs.map((doc) => ({ name: doc.name, params: new Map(Object.entries(doc.parameters.properties)), required: doc.parameters.required ?? [] }));
    signatures.set(docs, built);
  }
  return built;
}

// The rules hold no state: one set per language and option, not one per check.
const rulesCache = new Map<string, ArgumentRules<PyObject, PyObject, ParamDoc>>();

function rulesFor(language: Language, underscoreToDot: boolean): ArgumentRules<PyObject, PyObject, ParamDoc> {
  const key = `${language}/${underscoreToDot}`;
  let rules = rulesCache.get(key);
  if (rules === undefined) {
    rules = bfclRules(language, { underscoreToDot });
    rulesCache.set(key, rules);
  }
  return rules;
}

function tableType(table: Readonly<Record<string, string>>, gorillaType: string): string {
  if (!Object.hasOwn(table, gorillaType)) throw keyError(gorillaType);
  return table[gorillaType]!;
}

function itemTypeOf(schema: ParamDoc): string {
  if (schema.items === undefined) throw keyError("items");
  if (schema.items.type === undefined) throw keyError("type");
  return schema.items.type;
}

/** The BFCL argument rules for one language. */
export function bfclRules(language: Language, options: AstCheckOptions): ArgumentRules<PyObject, PyObject, ParamDoc> {
  return {
    mayOmit: (acceptable) => operator.contains(acceptable, ""),
    nameInOutput: (name) => (options.underscoreToDot && name.includes(".") ? name.replaceAll(".", "_") : name),
    checkArgument: (param, value, acceptable, schema) => checkArgument(language, param, value, acceptable, schema),
  };
}

function checkArgument(language: Language, param: string, raw: PyObject, acceptable: PyObject, schema: ParamDoc): Verdict {
  const declared = schema.type;
  let value = raw;
  let expected: string;
  let nested: string | undefined;
  if (language === "python") {
    expected = tableType(PYTHON_TYPES, declared);
    if (PYTHON_NESTED_TYPES.includes(declared)) nested = tableType(PYTHON_TYPES, itemTypeOf(schema));
  } else {
    const table = language === "java" ? JAVA_TYPES : JAVASCRIPT_TYPES;
    expected = tableType(table, declared);
    if (typeof value !== "string") {
      return reject(
        `type_error:${language === "java" ? "java" : "js"}`,
        `Incorrect type for parameter '${param}'. Expected type String, got ${pyTypeName(value)}. Parameter value: ${pyRepr(value)}.`,
      );
    }
    const convert = language === "java" ? convertJava : convertJavaScript;
    if (NESTED_CONVERSION_TYPES.includes(declared)) {
      const itemType = itemTypeOf(schema);
      nested = tableType(table, itemType);
      value = convert(value, declared, itemType);
    } else value = convert(value, declared);
  }
  // JSON turns tuples into lists, so a tuple is checked as a list.
  if (declared === "tuple" && value instanceof PyTuple) value = [...value.items];
  // Python accepts an int where a float is declared.
  if (language === "python" && declared === "float" && typeof value === "bigint") value = Number(value);

  const typeCheck = checkType(param, value, acceptable, declared, expected, nested);
  if (!typeCheck.verdict.valid) return typeCheck.verdict;
  if (!typeCheck.isVariable) {
    if (expected === "dict") return value instanceof PyHashDict ? checkDict(param, value, acceptable) : checkOther(param, value, acceptable);
    if (expected === "list" && nested === "dict") return checkListOfDicts(param, value as PyObject[], acceptable);
    if (expected === "str") return checkString(param, value as string, acceptable);
    if (expected === "list") return checkList(param, value as PyObject[], acceptable);
  }
  return checkOther(param, value, acceptable);
}

/** The type of the first alternative that is not the omission marker `""`. */
const answerType = perReference((acceptable): string | undefined => {
  for (const alternative of iterateAlternatives(acceptable)) {
    if (alternative !== "") return pyTypeName(alternative);
  }
  return undefined;
});

function iterateAlternatives(acceptable: PyObject): PyObject[] {
  return Array.isArray(acceptable) ? acceptable : iterate(acceptable);
}

/**
 * Upstream's `type_checker`: the value must have the declared type, or the reference's own
 * type (a reference that writes a variable name as a string makes string values acceptable,
 * and turns off the dict/list/string value rules). Lists are checked one level deep: every
 * item must have the declared item type, against some list alternative.
 */
function checkType(
  param: string,
  value: PyObject,
  acceptable: PyObject,
  declared: string,
  expected: string,
  nested: string | undefined,
): { verdict: Verdict; isVariable: boolean } {
  const referenceType = answerType(acceptable);
  const isVariable = referenceType !== undefined && referenceType !== expected;
  let verdict: Verdict = ACCEPT;
  if (pyTypeName(value) === expected) {
    if (nested === undefined) return { verdict: ACCEPT, isVariable };
    for (const alternative of iterateAlternatives(acceptable)) {
      let itemsMatch = true;
      if (Array.isArray(alternative)) {
        for (const item of value as PyObject[]) {
          if (!checkType(param, item, alternative, nested, nested, undefined).verdict.valid) {
            itemsMatch = false;
            break;
          }
        }
      }
      if (itemsMatch) return { verdict: ACCEPT, isVariable };
    }
    verdict = reject(
      "type_error:nested",
      `Nested type checking failed for parameter '${param}'. Expected outer type ${declared} with inner type ${nested}. Parameter value: ${pyRepr(value)}.`,
    );
  }
  if (referenceType !== undefined && pyTypeName(value) === referenceType) return { verdict, isVariable: true };
  if (verdict.valid) {
    verdict = reject(
      "type_error:simple",
      `Incorrect type for parameter '${param}'. Expected type ${declared}, got ${pyTypeName(value)}. Parameter value: ${pyRepr(value)}.`,
    );
  }
  return { verdict, isVariable };
}
