import { attributeError, iterate, len, operator, pyEquals, PyHashDict, type PyObject, pyRepr, pyTypeName } from "@envace/python-text";
import { ACCEPT, reject } from "@envace/rewards";
import type { Verdict } from "@envace/rewards";

/**
 * BFCL's value rules for one argument: string standardisation, and the list, dict and
 * list-of-dict comparisons. They index the reference exactly as upstream does (a string where a
 * list was expected is walked character by character), so unusual references behave as they do
 * upstream.
 */

/**
 * Upstream's `standardize_string`: drop spaces and `,./-_*^`, lower-case, and turn single
 * quotes into double quotes, so "April 1, 2024" and "april 1 2024" compare equal. One pass over
 * the text (no pattern, no copy of a text that needs none); lower-casing last, and only when
 * some letter may need it.
 */
export function standardize(text: string): string {
  let out = "";
  let start = 0;
  let lower = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    switch (code) {
      case 0x20: // space
      case 0x2c: // ,
      case 0x2e: // .
      case 0x2f: // /
      case 0x2d: // -
      case 0x5f: // _
      case 0x2a: // *
      case 0x5e: // ^
        out += text.slice(start, i);
        start = i + 1;
        break;
      case 0x27: // '
        out += `${text.slice(start, i)}"`;
        start = i + 1;
        break;
      default:
        if ((code >= 0x41 && code <= 0x5a) || code > 0x7f) lower = true;
    }
  }
  out = start === 0 ? text : out + text.slice(start);
  return lower ? out.toLowerCase() : out;
}

function standardized(value: PyObject): PyObject {
  return typeof value === "string" ? standardize(value) : value;
}

function isIn(value: PyObject, candidates: readonly PyObject[]): boolean {
  return candidates.some((candidate) => candidate === value || pyEquals(candidate, value));
}

/**
 * `compute` remembered per reference object: every output for an entry is checked against the
 * same loaded references, which are never changed. Scalars are computed each time.
 */
export function perReference<T>(compute: (acceptable: PyObject) => T): (acceptable: PyObject) => T {
  const cache = new WeakMap<object, T>();
  return (acceptable) => {
    if (typeof acceptable !== "object" || acceptable === null) return compute(acceptable);
    const cached = cache.get(acceptable);
    if (cached !== undefined || cache.has(acceptable)) return cached!;
    const value = compute(acceptable);
    cache.set(acceptable, value);
    return value;
  };
}

/** The string alternatives of a reference, standardised. */
const stringAlternatives = perReference((acceptable): readonly string[] =>
  iterate(acceptable)
    .filter((candidate): candidate is string => typeof candidate === "string")
    .map(standardize),
);

/** A reference as its error messages write it. */
const referenceRepr = perReference(pyRepr);

/** A string argument: equal to some string alternative after standardisation. */
export function checkString(param: string, value: string, acceptable: PyObject): Verdict {
  if (stringAlternatives(acceptable).includes(standardize(value))) return ACCEPT;
  return reject(
    "value_error:string",
    `Invalid value for parameter '${param}': ${pyRepr(value)}. Expected one of ${referenceRepr(acceptable)}. Case insensitive.`,
  );
}

/** The alternatives of a list reference, each walked and its strings standardised. */
const listAlternatives = perReference((acceptable): readonly PyObject[] => iterate(acceptable).map((alternative) => iterate(alternative).map(standardized)));

/** A list argument: equal, item by item after standardising strings, to some alternative. */
export function checkList(param: string, value: PyObject[], acceptable: PyObject): Verdict {
  if (isIn(value.map(standardized), listAlternatives(acceptable))) return ACCEPT;
  return reject("value_error:list/tuple", `Invalid value for parameter '${param}': ${pyRepr(value)}. Expected one of ${referenceRepr(acceptable)}.`);
}

/**
 * A dict argument: some non-empty alternative knows every key, accepts every value (strings
 * standardised), and every key it lists is present unless its values include `""`.
 */
export function checkDict(param: string, value: PyHashDict, acceptable: PyObject): Verdict {
  let verdict: Verdict = reject("dict_checker:unclear", `Invalid value for parameter '${param}'.`);
  for (const alternative of iterate(acceptable)) {
    if (alternative === "") continue;
    verdict = checkDictAgainst(value, alternative);
    if (verdict.valid) return ACCEPT;
  }
  return verdict;
}

function checkDictAgainst(value: PyHashDict, alternative: PyObject): Verdict {
  for (const [key, item] of value) {
    if (!operator.contains(alternative, key)) return reject("value_error:dict_key", `Unexpected dict key parameter: ${pyRepr(key)}.`);
    const candidates = iterate(operator.getitem(alternative, key)).map(standardized);
    if (!isIn(standardized(item), candidates)) {
      return reject("value_error:dict_value", `Invalid value for parameter ${pyRepr(key)}: ${pyRepr(item)}. Expected one of ${pyRepr(candidates)}.`);
    }
  }
  if (!(alternative instanceof PyHashDict)) throw attributeError(`'${pyTypeName(alternative)}' object has no attribute 'items'`);
  for (const [key, accepted] of alternative) {
    if (!value.has(key) && !operator.contains(accepted, "")) return reject("value_error:dict_key", `Missing dict key parameter: ${pyRepr(key)}.`);
  }
  return ACCEPT;
}

/** A list of dicts: some alternative has as many dicts, each accepted by its counterpart. */
export function checkListOfDicts(param: string, value: PyObject[], acceptable: PyObject): Verdict {
  let verdict: Verdict = reject("list_dict_checker:unclear", `Invalid value for parameter '${param}'.`);
  for (const alternative of iterate(acceptable)) {
    if (value.length !== len(alternative)) {
      verdict = reject("value_error:list_dict_count", "Wrong number of dictionaries in the list.");
      continue;
    }
    let accepted = true;
    for (const [index, item] of value.entries()) {
      if (!(item instanceof PyHashDict)) throw attributeError(`'${pyTypeName(item)}' object has no attribute 'items'`);
      verdict = checkDict(param, item, [operator.getitem(alternative, BigInt(index))]);
      if (!verdict.valid) {
        accepted = false;
        break;
      }
    }
    if (accepted) return ACCEPT;
  }
  return verdict;
}

/** Any other value: equal (Python `==`, so `1 == 1.0 == True`) to some alternative. */
export function checkOther(param: string, value: PyObject, acceptable: PyObject): Verdict {
  if (operator.contains(acceptable, value)) return ACCEPT;
  return reject("value_error:others", `Invalid value for parameter '${param}': ${pyRepr(value)}. Expected one of ${referenceRepr(acceptable)}.`);
}
