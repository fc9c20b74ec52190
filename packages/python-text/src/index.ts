export { binaryParts, divRoundHalfEven, floatRepr, formatFixed, roundFloat } from "./float.js";
export { jsonFloat, jsonString, jsonStringUnicode } from "./json.js";
export { bigintModel, JsonDecodeError, jsonLoads, type JsonModel, type JsonScalar, type PyJson } from "./json-loads.js";
export { compareCodePoints, sortCodePoints, strRepr } from "./string.js";
