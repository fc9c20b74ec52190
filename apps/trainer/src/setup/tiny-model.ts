import { existsSync } from "node:fs";
import { join } from "node:path";
import { TINY_CHAT_TEMPLATE, TINY_COMPACT_CHAT_TEMPLATE, TinyOnnxEngine } from "@envace/models";
import { CheckpointError, InProcessBackend, trainTokenizer, type ByteLevelBpeTokenizer } from "@envace/training";
import { ChatTemplate, SamplerPolicy } from "@envace/trajectory";
import type { TinyModelConfig as TinyModelSection } from "../config/schema.js";
import type { TrainedModel } from "./trained-model.js";

/**
 * The trained model of the embedded default: the tiny transformer in tfjs (gradient steps) with
 * its byte-level BPE tokenizer, and rollouts on onnxruntime with a KV cache (or tfjs), refreshed
 * after every optimizer step.
 */
export class TinyPolicyModel implements TrainedModel {
  private engine: TinyOnnxEngine | undefined;

  private constructor(
    readonly backend: InProcessBackend,
    readonly tokenizer: ByteLevelBpeTokenizer,
    readonly template: ChatTemplate,
    private readonly rolloutEngine: "onnx" | "tfjs",
  ) {}

  /**
   * A new model whose tokenizer is trained on `corpus`. Its chat template lists the tools unless
   * the domain's system prompt already does; either way it is saved with every checkpoint.
   */
  static async create(
    section: TinyModelSection,
    corpus: Iterable<string>,
    options: { seed: number; rolloutEngine: "onnx" | "tfjs"; listTools: boolean },
  ): Promise<TinyPolicyModel> {
    const chatTemplate = options.listTools ? TINY_CHAT_TEMPLATE : TINY_COMPACT_CHAT_TEMPLATE;
    const tokenizer = trainTokenizer(corpus, {
      vocabSize: section.vocab_size,
      maxLength: section.max_position_embeddings,
      chatTemplate,
      pretokenizer: section.pretokenizer,
    });
    const eos = tokenizer.stopTokenIds[0] ?? null;
    const backend = await InProcessBackend.create(
      {
        vocabSize: tokenizer.vocabSize,
        hiddenSize: section.hidden_size,
        intermediateSize: section.intermediate_size,
        numLayers: section.num_hidden_layers,
        numHeads: section.num_attention_heads,
        maxPositionEmbeddings: section.max_position_embeddings,
        ropeTheta: section.rope_theta,
        initializerRange: section.initializer_range,
        eosTokenId: eos,
      },
      { seed: options.seed, tokenizer },
    );
    return new TinyPolicyModel(backend, tokenizer, new ChatTemplate(chatTemplate), options.rolloutEngine);
  }

  /** Resume from a checkpoint folder written by `save`. */
  static async load(dir: string, rolloutEngine: "onnx" | "tfjs", seed = 0): Promise<TinyPolicyModel> {
    if (!existsSync(join(dir, "model.safetensors"))) throw new CheckpointError(`${dir}: not a checkpoint (no model.safetensors)`);
    // A base checkpoint ships weights alone (as pretrained models do): training starts a fresh
    // optimizer and generator, seeded by the run.
    const weightsOnly = !existsSync(join(dir, "training_state.json"));
    const backend = await InProcessBackend.load(dir, weightsOnly ? { optimizer: false, seed } : {});
    const tokenizer = backend.tokenizer as ByteLevelBpeTokenizer | undefined;
    if (tokenizer?.chatTemplate === undefined) throw new CheckpointError(`${dir}: the checkpoint has no tokenizer with a chat template`);
    return new TinyPolicyModel(backend, tokenizer, new ChatTemplate(tokenizer.chatTemplate), rolloutEngine);
  }

  get contextTokens(): number {
    return this.backend.config.maxPositionEmbeddings;
  }

  describe(): string {
    return `tiny model, ${this.backend.parameterCount.toLocaleString("en")} parameters, vocabulary ${this.tokenizer.vocabSize}`;
  }

  save(dir: string): Promise<void> {
    return this.backend.saveCheckpoint(dir);
  }

  close(): void {
    this.backend.dispose();
  }

  /** A policy sampling from the current weights. Call again after each optimizer step. */
  async policy(id: string): Promise<SamplerPolicy> {
    const sampler = this.rolloutEngine === "tfjs" ? await this.backend.saveWeightsForSampler() : await this.syncedOnnxSampler();
    return new SamplerPolicy({ id, sampler, tokenizer: this.tokenizer, template: this.template });
  }

  private async syncedOnnxSampler(): Promise<TinyOnnxEngine["sampler"]> {
    const params = this.backend.parameters();
    if (this.engine === undefined) {
      this.engine = await TinyOnnxEngine.create(this.backend.config, params, { stopTokenIds: this.tokenizer.stopTokenIds, tokenizer: this.tokenizer });
    } else {
      await this.engine.sync(params);
    }
    return this.engine.sampler;
  }
}
