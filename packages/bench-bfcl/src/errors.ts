import { EnvaceError } from "@envace/errors";

/** BFCL data that cannot be evaluated as given: an entry without its reference answer or filler, an unknown environment class, a missing upstream file. */
export class BfclDataError extends EnvaceError {
  override readonly code = "bfcl-data";
}
