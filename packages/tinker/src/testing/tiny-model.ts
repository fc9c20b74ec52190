// The model the client tests train and sample: small enough that a step takes milliseconds.
import type { TinyModelConfigInput } from "@envace/training";

/** A tiny transformer: 16 tokens, 15 ends a generation. */
export const TINY_MODEL = {
  vocabSize: 16,
  hiddenSize: 16,
  intermediateSize: 32,
  numLayers: 1,
  numHeads: 2,
  maxPositionEmbeddings: 32,
  eosTokenId: 15,
  initializerRange: 0.3,
} satisfies TinyModelConfigInput;
