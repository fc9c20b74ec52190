export { binaryParts, divRoundHalfEven, floatRepr, formatFixed, roundFloat } from "./float.js";
export { jsonFloat, jsonString, jsonStringUnicode } from "./json.js";
export { bigintModel, hashDictModel, JSON_DEPTH_LIMIT, JsonDecodeError, jsonLoads, type JsonModel, type JsonScalar, type PyJson } from "./json-loads.js";
export { codePointLength, compareCodePoints, isSpace, lstrip, rstrip, sortCodePoints, splitlines, splitWhitespace, strip, strRepr } from "./string.js";
export { pyDumps, dumpValue, type PyDumpsOptions } from "./dumps.js";
export { attributeError, DepthLimitError, errorCode, exceptionText, PyException, typeError, valueError } from "./errors.js";
export { abs, add, asDict, count, dictKey, getKey, greaterThan, hasKey, iterate, len, lessThan, max, mul, sorted, sub } from "./ops.js";
export * as operator from "./operator.js";
export { pyFloat, pyInt } from "./convert.js";
export { bindArguments, type PyParam } from "./signature.js";
export { hashKey, PyHashDict, PyOpaque, PySet, PyTuple, type HashKey } from "./objects.js";
export {
  fromJson,
  isPyDict,
  isPyList,
  isPyModel,
  keyError,
  pyDeepCopy,
  pyEquals,
  pyRepr,
  pyStr,
  pyTypeName,
  toJson,
  truthy,
  type JsonData,
  type PyDict,
  type PyFields,
  type PyList,
  type PyModel,
  type PyObject,
  type PyValue,
} from "./value.js";
