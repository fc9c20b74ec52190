import { SamplingParams } from "@envace/protocol";
import { InProcessBackend } from "@envace/training";
import { TinkerService, startTinkerServer } from "@envace/tinker";

// Serve a tiny in-process model on a free loopback port…
const server = await startTinkerServer({
  createBackend: ({ seed }) => InProcessBackend.create({ vocabSize: 32, hiddenSize: 32, intermediateSize: 64, numLayers: 2, numHeads: 2 }, { seed: seed ?? 0 }),
});

// …and train it through the client, exactly as one would train on hosted Tinker.
const service = await TinkerService.connect({ baseUrl: server.url });
const model = await service.createTrainingClient({ baseModel: "tiny", seed: 7 });

// One SFT step on "1 2 3 → 1 2 3": the loss applies to the positions after the separator 31.
const full = [0, 1, 2, 3, 31, 1, 2, 3];
const mask = full.slice(1).map((_, t) => (t >= 4 ? 1 : 0));
const datum = { tokens: full.slice(0, -1), targetTokens: full.slice(1), logprobs: mask.map(() => 0), advantages: mask.map(() => 0), mask };
const { loss } = await model.forwardBackward([datum], { type: "cross_entropy" });
await model.optimStep({ learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
console.log(`loss ${loss.toFixed(3)} over the ${service.forwardBackwardWire} wire`);

// Sample from the new weights, with the sampler's log-probability of every token.
const sampler = await model.saveWeightsForSampler("step-1");
const out = await sampler.sample([0, 1, 2, 3, 31], SamplingParams.parse({ maxTokens: 3, seed: 1 }));
console.log(sampler.modelPath?.split("/").slice(-2).join("/"), out.tokens, out.logprobs.length);

service.close();
await server.close();
