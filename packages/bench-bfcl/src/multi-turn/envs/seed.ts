import { type PyObject, pyTypeName, typeError } from "@envace/python-text";
import { PythonRandom } from "../../py/random.js";

/** `random.Random(seed)` for the integer seeds BFCL scenarios use (an integral float seeds as its int, as Python hashes it). */
export function randomFrom(seed: PyObject): PythonRandom {
  if (typeof seed === "bigint") return new PythonRandom(seed);
  if (typeof seed === "boolean") return new PythonRandom(seed ? 1 : 0);
  if (typeof seed === "number" && Number.isInteger(seed)) return new PythonRandom(BigInt(seed));
  throw typeError(`random seeds of type '${pyTypeName(seed)}' are not supported`);
}
