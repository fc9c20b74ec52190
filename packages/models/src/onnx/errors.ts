import { InputError } from "@envace/protocol";

/**
 * A model folder or file that cannot serve as a policy: missing, unreadable, or not a decoder with
 * a KV cache in the Hugging Face layout. The message names the path; the user fixes the folder.
 */
export class OnnxModelError extends InputError {
  override readonly code: string = "onnx-model";
  override readonly name = "OnnxModelError";
}
