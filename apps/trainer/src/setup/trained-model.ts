import type { Tokenizer } from "@envace/protocol";
import type { TrainingBackend } from "@envace/training";
import type { ChatTemplate, SamplerPolicy } from "@envace/trajectory";

/**
 * The model a run trains: a training backend for gradient steps, and samplers on its current
 * weights for rollouts, with the tokenizer and chat template that turn conversations into tokens.
 * The built-in tiny model (in-process) and any model behind a Tinker server implement it.
 */
export interface TrainedModel {
  readonly backend: TrainingBackend;
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplate;
  /** Positions of the model's context. */
  readonly contextTokens: number;
  /** One line for the log: what model this is. */
  describe(): string;
  /** A policy sampling from the current weights. Call again after each optimizer step. */
  policy(id: string): Promise<SamplerPolicy>;
  /** Write what resuming needs to `dir` (weights and optimizer state, or a pointer to them). */
  save(dir: string): Promise<void>;
  /** Release connections and memory. */
  close(): void;
}
