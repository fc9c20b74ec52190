import { EnvaceError } from "@envace/errors";

/** A checkpoint or model folder that lacks a file, or holds one that does not parse or does not fit the model. */
export class CheckpointError extends EnvaceError {
  override readonly code = "checkpoint";
}

/** Arguments the trainer cannot use: options, a loss, datums, optimizer settings or a seed that are out of range or disagree in shape. */
export class TrainingInputError extends EnvaceError {
  override readonly code = "training-input";
}

/** A call made when the runtime cannot take it: tfjs not on its wasm backend, or gradients pending when a checkpoint is asked for. */
export class TrainingStateError extends EnvaceError {
  override readonly code = "training-state";
}

/** The gradient is infinite or NaN, so the optimizer step was refused and the parameters are unchanged. */
export class NonFiniteGradientError extends EnvaceError {
  override readonly code = "non-finite-gradient";
}
