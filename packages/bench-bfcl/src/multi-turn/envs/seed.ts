import { PythonRandom } from "../../py/random.js";
import { PyError, typeName } from "../../py/value.js";
import type { Py } from "../../py/value.js";

/** `random.Random(seed)` for the integer seeds BFCL scenarios use. */
export function randomFrom(seed: Py): PythonRandom {
  if (typeof seed === "number" || typeof seed === "bigint") return new PythonRandom(seed);
  if (typeof seed === "boolean") return new PythonRandom(seed ? 1 : 0);
  throw new PyError("TypeError", `random seeds of type '${typeName(seed)}' are not supported`);
}
