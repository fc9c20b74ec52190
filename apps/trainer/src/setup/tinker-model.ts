import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Sampler } from "@envace/protocol";
import { writeFileAtomically } from "@envace/records";
import { noReductionError, resolveReduction, TinkerService, type ReductionCalibration, type RemoteReduction, type TinkerTrainingClient } from "@envace/tinker";
import { CheckpointError } from "@envace/training";
import { SamplerPolicy, loadHuggingFaceTokenizer, type ChatTemplate, type HuggingFaceTokenizer } from "@envace/trajectory";
import { z } from "zod";
import type { BackendConfig, HfModelConfig } from "../config/schema.js";
import { tinkerConnectOptions, tinkerModelOptions } from "../config/to-options.js";
import type { TrainedModel } from "./trained-model.js";

type TinkerSection = Extract<BackendConfig, { type: "tinker" }>;

/** What a checkpoint folder of a Tinker-trained model holds: a pointer to the server's saved state. */
const TinkerCheckpoint = z.object({ base_model: z.string(), weights: z.string() });

/** What `preflight` measured and the server declared, per server and base model: one probe per process, not one per model opened. */
const probed = new Map<string, { calibration: ReductionCalibration; declared: RemoteReduction | undefined }>();
const serverKey = (section: TinkerSection) => `${section.base_url} ${section.base_model}`;

/** The reduction to train with, or the one-line refusal; the config's `reduction` must agree with what was measured. */
function reductionFor(section: TinkerSection): RemoteReduction | undefined {
  const known = probed.get(serverKey(section));
  if (!known) return undefined;
  const reduction = resolveReduction(section.base_url, known.calibration, section.reduction, known.declared);
  if (reduction === undefined) throw noReductionError(section.base_url, known.calibration);
  return reduction;
}

async function tokenizerOf(model: HfModelConfig): Promise<HuggingFaceTokenizer & { chatTemplate: ChatTemplate }> {
  const tokenizer = await loadHuggingFaceTokenizer(model.path);
  if (tokenizer.chatTemplate === undefined)
    throw new CheckpointError(`${model.path}: the tokenizer has no chat template (tokenizer_config.json chat_template)`);
  return tokenizer as HuggingFaceTokenizer & { chatTemplate: ChatTemplate };
}

function connect(section: TinkerSection): Promise<TinkerService> {
  return TinkerService.connect(tinkerConnectOptions(section, process.env));
}

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

  /**
   * Everything that can refuse a run before it creates anything that lasts: the local tokenizer,
   * then the server's reduction, measured on a scratch model the server unloads again and checked
   * against the config's `reduction`. `train` calls it before it writes the run directory.
   */
  static async preflight(section: TinkerSection, model: HfModelConfig): Promise<void> {
    await tokenizerOf(model);
    if (!probed.has(serverKey(section))) {
      const service = await connect(section);
      try {
        const calibration = await service.calibrateReduction(section.base_model, section.lora_rank);
        probed.set(serverKey(section), { calibration, declared: service.clientConfig.envace_loss_reduction });
      } finally {
        service.close();
      }
    }
    reductionFor(section);
  }

  /** A new model on the server, or (with `checkpoint`) one resumed from a folder `save` wrote. */
  static async open(section: TinkerSection, model: HfModelConfig, options: { seed: number; checkpoint?: string }): Promise<TinkerPolicyModel> {
    const tokenizer = await tokenizerOf(model);
    let saved: z.infer<typeof TinkerCheckpoint> | undefined;
    if (options.checkpoint !== undefined) {
      const file = join(options.checkpoint, "tinker.json");
      if (!existsSync(file)) throw new CheckpointError(`${options.checkpoint}: not a Tinker checkpoint (no tinker.json)`);
      saved = TinkerCheckpoint.parse(JSON.parse(readFileSync(file, "utf8")));
    }
    const known = reductionFor(section);
    const service = await connect(section);
    let client: TinkerTrainingClient;
    try {
      // Measured once by `preflight`; otherwise measured now. Without a reduction the model is not created.
      client = await service.createTrainingClient({
        ...tinkerModelOptions(section, options.seed),
        ...((known ?? section.reduction) ? { reduction: known ?? section.reduction } : {}),
        calibrateReduction: known === undefined,
        requireReduction: true,
      });
    } catch (error) {
      service.close();
      throw error;
    }
    if (saved !== undefined) await client.loadWeights(saved.weights, { optimizer: true });
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
    writeFileAtomically(join(dir, "tinker.json"), `${JSON.stringify({ base_model: this.section.base_model, weights }, null, 2)}\n`);
  }

  close(): void {
    this.service.close();
  }
}
