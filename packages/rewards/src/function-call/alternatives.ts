import { ACCEPT, reject } from "./types.js";
import type { ArgumentRules, ExpectedCall, FunctionCall, Verdict } from "./types.js";

/**
 * Ready-made rules for the common reference format where each parameter lists its acceptable
 * values as alternatives, and a designated marker among them means "may be left out" (BFCL
 * writes `""`). Values are compared with `equals`; a value passes when it equals any alternative.
 */
export function alternativesRules<V, S = unknown>(options: {
  equals: (a: V, b: V) => boolean;
  isOmissionMarker: (value: V) => boolean;
}): ArgumentRules<V, readonly V[], S> {
  return {
    mayOmit: (acceptable) => acceptable.some(options.isOmissionMarker),
    checkArgument(param, value, acceptable): Verdict {
      if (acceptable.some((candidate) => !options.isOmissionMarker(candidate) && options.equals(value, candidate))) return ACCEPT;
      return reject("value_error", `Invalid value for parameter '${param}'.`);
    },
  };
}

/** A call from a plain record of arguments (insertion order kept). */
export function functionCall<V>(name: string, args: Readonly<Record<string, V>>): FunctionCall<V> {
  return { name, args: new Map(Object.entries(args)) };
}

/** An expected call from a plain record of acceptable values (insertion order kept). */
export function expectedCall<A>(name: string, params: Readonly<Record<string, A>>): ExpectedCall<A> {
  return { name, params: new Map(Object.entries(params)) };
}
