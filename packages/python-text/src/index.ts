export { binaryParts, divRoundHalfEven, floatRepr, formatFixed, roundFloat } from "./float.js";
export { jsonFloat, jsonString, jsonStringUnicode } from "./json.js";
export { bigintModel, JsonDecodeError, jsonLoads, type JsonModel, type JsonScalar, type PyJson } from "./json-loads.js";
export { compareCodePoints, sortCodePoints, strRepr } from "./string.js";
export { pyDumps, dumpValue, type PyDumpsOptions } from "./dumps.js";
export { attributeError, errorCode, keyError, PyException, typeError, valueError } from "./errors.js";
export { abs, add, asDict, count, dictKey, getKey, greaterThan, hasKey, iterate, len, lessThan, max, mul, sorted, sub } from "./ops.js";
export {
  fromJson,
  isPyDict,
  isPyList,
  isPyModel,
  pyDeepCopy,
  pyEquals,
  pyRepr,
  pyStr,
  pyTypeName,
  toJson,
  truthy,
  type JsonData,
  type PyDict,
  type PyList,
  type PyModel,
  type PyValue,
} from "./value.js";
