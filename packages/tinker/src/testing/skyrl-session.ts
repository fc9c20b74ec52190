import { defaultPolicyLossConfig } from "@envace/grpo";
import { SamplingParams } from "@envace/protocol";
import { defaultAdamParams, type Datum } from "@envace/training";
import { TinkerService } from "../client.js";
import type { TrainingClientOptions } from "../training-service.js";
import { rolloutDatum } from "./rollout-datum.js";

/**
 * The session recorded against SkyRL tx (`fixtures/skyrl/`) and replayed in the tests: every call
 * a trainer makes, in a fixed order with fixed seeds, so the replay sends byte for byte what the
 * recording sent. Token ids are Qwen3's (the server's base model is a tiny random Qwen3).
 */

/** Two rows of one length (each new shape costs SkyRL's JAX backend a compilation): prompt, then output. */
export function skyrlBatch(): Datum[] {
  const rows = [
    { prompt: [9707, 11, 1879, 0, 1156], output: [3555, 374, 279], advantage: 0.5, sampler: [-11.2, -11.9, -12.1] },
    { prompt: [9707, 11, 1879, 0, 2585], output: [3555, 525, 151645], advantage: -0.5, sampler: [-11.4, -12.3, -11.8] },
  ];
  return rows.map(rolloutDatum);
}

export const SKYRL_PROMPT = [9707, 11, 1879, 0, 1156, 3555, 374];
const adam = { ...defaultAdamParams, learningRate: 1e-3 };

export interface SkyrlSessionResult {
  measured: string | undefined;
  evidence: string | undefined;
  refusedSum: string;
  losses: Record<string, number>;
  forwardBeforeSave: number[];
  promptLogprobs: number[];
  forwardOfPrompt: number[];
  sampled: { stopTokens: { tokens: number[]; logprobs: number[]; finishReason: string }; stopStrings: { tokens: number[]; finishReason: string } };
  checkpoint: string;
  resumedForward: { withOptimizer: number[]; withoutOptimizer: number[] };
  nextStep: { kept: number; resumed: number; weightsOnly: number };
}

/** Run the session against `baseUrl`; everything it saw comes back for the test to check. */
export async function skyrlSession(baseUrl: string, baseModel: string): Promise<SkyrlSessionResult> {
  const service = await TinkerService.connect({ baseUrl, apiKey: "tml-dummy", heartbeatIntervalMs: 0, pollTimeoutMs: 300_000, onWarning: () => undefined });
  try {
    const options: TrainingClientOptions = { baseModel, loraRank: 4, seed: 1, lossStrategy: "surrogate", stopTokenIds: [151645] };
    const client = await service.createTrainingClient(options);
    const refusedSum = await service.createTrainingClient({ ...options, reduction: "sum" }).then(
      () => "not refused",
      (error: unknown) => String(error instanceof Error ? error.message : error),
    );
    const data = skyrlBatch();
    const losses = Object.create(null) as Record<string, number>;
    // Under the per-datum mean one forwardBackward goes with each optimizer step.
    for (const [name, loss] of [
      ["importance_sampling", { type: "importance_sampling" }],
      ["ppo", { type: "ppo", clipLow: 0.8, clipHigh: 1.2 }],
      ["grpo", { type: "grpo", config: { ...defaultPolicyLossConfig, dualClip: null } }],
      ["cross_entropy", { type: "cross_entropy" }],
    ] as const) {
      losses[name] = (await client.forwardBackward(data, loss)).loss;
      await client.optimStep(adam);
    }
    const [forwardBeforeSave] = await client.forward(data);

    const ephemeral = await client.saveWeightsForSampler();
    const stopTokens = await ephemeral.sample(SKYRL_PROMPT, SamplingParams.parse({ maxTokens: 6, seed: 7 }));
    const promptLogprobs = await ephemeral.promptLogprobs(SKYRL_PROMPT);
    const zeros = SKYRL_PROMPT.slice(1).map(() => 0);
    const [forwardOfPrompt] = await client.forward([
      { tokens: SKYRL_PROMPT.slice(0, -1), targetTokens: SKYRL_PROMPT.slice(1), logprobs: zeros, advantages: zeros, mask: zeros.map(() => 1) },
    ]);
    const named = await client.saveWeightsForSampler("sampler-1");
    const byStrings = await service.createSampler({ modelPath: named.modelPath! });
    const stopStrings = await byStrings.sample(SKYRL_PROMPT, SamplingParams.parse({ maxTokens: 6, seed: 7, stop: ["\n"] }));

    const checkpoint = await client.saveWeights("step-4");
    const resumed = await service.createTrainingClient(options);
    await resumed.loadWeights(checkpoint, { optimizer: true });
    const weightsOnly = await service.createTrainingClient(options);
    await weightsOnly.loadWeights(checkpoint, { optimizer: false });
    const [withOptimizer] = await resumed.forward(data);
    const [withoutOptimizer] = await weightsOnly.forward(data);

    // One more step on the model that kept training and on both resumed ones: the loss after it.
    const nextStep = Object.create(null) as Record<string, number>;
    for (const [name, model] of [
      ["kept", client],
      ["resumed", resumed],
      ["weightsOnly", weightsOnly],
    ] as const) {
      await model.forwardBackward(data, { type: "importance_sampling" });
      await model.optimStep(adam);
      nextStep[name] = (await model.forwardBackward(data, { type: "importance_sampling" })).loss;
      await model.optimStep({ ...adam, learningRate: 0 });
    }
    return {
      measured: client.calibration?.reduction,
      evidence: client.calibration?.evidence,
      refusedSum,
      losses,
      forwardBeforeSave: forwardBeforeSave!,
      promptLogprobs,
      forwardOfPrompt: forwardOfPrompt!,
      sampled: { stopTokens, stopStrings: { tokens: stopStrings.tokens, finishReason: stopStrings.finishReason } },
      checkpoint,
      resumedForward: { withOptimizer: withOptimizer!, withoutOptimizer: withoutOptimizer! },
      nextStep: nextStep as SkyrlSessionResult["nextStep"],
    };
  } finally {
    service.close();
  }
}
