import { InputError } from "@envace/protocol";

/** Training needs token data (ids, logprobs) that this server does not return. */
export class TokenDataUnavailableError extends InputError {
  override readonly code: string = "token-data-unavailable";
  override readonly name = "TokenDataUnavailableError";
}
