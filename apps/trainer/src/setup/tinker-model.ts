import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Sampler } from "@envace/protocol";
import { TinkerService, type TinkerTrainingClient } from "@envace/tinker";
import { CheckpointError } from "@envace/training";
import { SamplerPolicy, loadHuggingFaceTokenizer, type ChatTemplate, type HuggingFaceTokenizer } from "@envace/trajectory";
import { z } from "zod";
import type { BackendConfig, HfModelConfig } from "../config/schema.js";
import type { TrainedModel } from "./trained-model.js";

type TinkerSection = Extract<BackendConfig, { type: "tinker" }>;

/** What a checkpoint folder of a Tinker-trained model holds: a pointer to the server's saved state. */
const TinkerCheckpoint = z.object({ base_model: z.string(), weights: z.string() });

/**
 * A model trained on a Tinker server (hosted Tinker, SkyRL tx, or `envace`'s own): gradient steps
 * and sampling happen on the server; the tokenizer and chat template come from a local Hugging
 * Face folder of the same model, so rollouts keep exact token ids across turns.
 */
export class TinkerPolicyModel implements TrainedModel {
  private saves = 0;

  private constructor(
    private readonly service: TinkerService,
    readonly backend: TinkerTrainingClient,
    readonly tokenizer: HuggingFaceTokenizer,
    readonly template: ChatTemplate,
    private readonly section: TinkerSection,
    readonly contextTokens: number,
  ) {}

  /** A new model on the server, or (with `checkpoint`) one resumed from a folder `save` wrote. */
  static async open(section: TinkerSection, model: HfModelConfig, options: { seed: number; checkpoint?: string }): Promise<TinkerPolicyModel> {
    const tokenizer = await loadHuggingFaceTokenizer(model.path);
    if (tokenizer.chatTemplate === undefined) throw new CheckpointError(`${model.path}: the tokenizer has no chat template (tokenizer_config.json chat_template)`);
    const apiKey = process.env[section.api_key_env];
    const service = await TinkerService.connect({
      baseUrl: section.base_url,
      retry: { submitDeadlineMs: section.retry_deadline_s * 1_000 },
      ...(apiKey ? { apiKey } : {}),
    });
    const client = await service.createTrainingClient({
      baseModel: section.base_model,
      loraRank: section.lora_rank,
      seed: options.seed,
      ...(section.reduction ? { reduction: section.reduction } : {}),
      lossStrategy: section.loss_strategy,
    });
    // A server that does not say how it reduces losses needs `reduction` in the config: stop now, not after the first rollouts.
    try {
      client.requireReduction();
    } catch (error) {
      service.close();
      throw error;
    }
    if (options.checkpoint !== undefined) {
      const file = join(options.checkpoint, "tinker.json");
      if (!existsSync(file)) throw new CheckpointError(`${options.checkpoint}: not a Tinker checkpoint (no tinker.json)`);
      const saved = TinkerCheckpoint.parse(JSON.parse(readFileSync(file, "utf8")));
      await client.loadWeights(saved.weights, { optimizer: true });
    }
    return new TinkerPolicyModel(service, client, tokenizer, tokenizer.chatTemplate, section, model.context_tokens);
  }

  describe(): string {
    return `${this.section.base_model} on the Tinker server ${this.section.base_url} (LoRA rank ${this.section.lora_rank})`;
  }

  async policy(id: string): Promise<SamplerPolicy> {
    const remote = await this.backend.saveWeightsForSampler();
    // Generations end at the end of a turn: the tokenizer's stop tokens, sent as strings so that a
    // request's own stop strings and these travel the same way (Tinker takes strings or token ids
    // in one request, not both; hosted Tinker, SkyRL tx and ours honour either).
    const stop = this.tokenizer.stopTokenIds.map((token) => this.tokenizer.decode([token]));
    const sampler: Sampler = {
      sample: (prompt, params, signal) => remote.sample(prompt, params.stop.length > 0 ? params : { ...params, stop }, signal),
    };
    return new SamplerPolicy({ id, sampler, tokenizer: this.tokenizer, template: this.template });
  }

  /** Saves the training state on the server and records where in `dir`. */
  async save(dir: string): Promise<void> {
    // Names must be unique per save and match [A-Za-z0-9_-].
    const name = `${basename(dirname(dir))}-${basename(dir)}-${Date.now()}-${this.saves++}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const weights = await this.backend.saveWeights(name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "tinker.json"), `${JSON.stringify({ base_model: this.section.base_model, weights }, null, 2)}\n`);
  }

  close(): void {
    this.service.close();
  }
}
