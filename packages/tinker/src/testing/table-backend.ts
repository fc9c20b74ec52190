import { lossMetrics, policyLoss } from "@envace/grpo";
import type { SampledTokens, Sampler, SamplingParams } from "@envace/protocol";
import {
  referenceLoss,
  TrainingInputError,
  type AdamParams,
  type Datum,
  type ForwardBackwardResult,
  type LossFn,
  type TrainingBackend,
} from "@envace/training";

/**
 * A deterministic bigram model for protocol tests: the next-token logits are one row of a V×V
 * table picked by the current token. Small and exact enough that a test can check the protocol
 * (ordering, futures, errors) without the cost of a transformer.
 */
export class TableBackend implements TrainingBackend {
  private readonly weights: Float64Array;
  private readonly grad: Float64Array;
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private step = 0;
  /** Every call, in the order it ran: `forwardBackward:ppo`, `optimStep`, … */
  readonly calls: string[] = [];

  constructor(
    readonly vocab: number,
    seed: number,
    /** `scoresPrompts`: its samplers also score prompts (`promptLogprobs`), as the server's `prompt_logprobs` needs. */
    private readonly options: { delayMs?: number; eos?: number; scoresPrompts?: boolean } = {},
  ) {
    this.weights = new Float64Array(vocab * vocab);
    let state = seed >>> 0;
    for (let i = 0; i < this.weights.length; i++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      this.weights[i] = (state / 2 ** 32 - 0.5) * 0.5;
    }
    this.grad = new Float64Array(this.weights.length);
    this.m = new Float64Array(this.weights.length);
    this.v = new Float64Array(this.weights.length);
  }

  /** The weights, for checkpoint tests. */
  exportWeights(): number[] {
    return Array.from(this.weights);
  }

  /** Overwrite the weights (optimizer state starts fresh). */
  importWeights(weights: readonly number[]): void {
    if (weights.length !== this.weights.length) throw new Error(`expected ${this.weights.length} weights, got ${weights.length}`);
    this.weights.set(weights);
  }

  private async pause(): Promise<void> {
    if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
  }

  private check(token: number): void {
    if (!Number.isInteger(token) || token < 0 || token >= this.vocab)
      throw new TrainingInputError(`token ${token} is outside the vocabulary (size ${this.vocab})`);
  }

  private probs(weights: Float64Array, token: number, temperature = 1): number[] {
    this.check(token);
    const row = Array.from(weights.subarray(token * this.vocab, (token + 1) * this.vocab), (w) => w / temperature);
    const max = Math.max(...row);
    const exp = row.map((x) => Math.exp(x - max));
    const total = exp.reduce((s, x) => s + x, 0);
    return exp.map((x) => x / total);
  }

  private score(data: readonly Datum[]): { logprobs: number[][]; entropy: number[][]; probs: number[][][] } {
    const probs = data.map((d) => d.tokens.map((t) => this.probs(this.weights, t)));
    return {
      probs,
      logprobs: data.map((d, i) =>
        d.targetTokens.map((target, t) => {
          this.check(target);
          return Math.log(probs[i]![t]![target]!);
        }),
      ),
      entropy: probs.map((row) => row.map((p) => -p.reduce((s, x) => s + (x > 0 ? x * Math.log(x) : 0), 0))),
    };
  }

  async forward(data: Datum[]): Promise<number[][]> {
    await this.pause();
    this.calls.push("forward");
    return this.score(data).logprobs;
  }

  async forwardBackward(data: Datum[], loss: LossFn): Promise<ForwardBackwardResult> {
    await this.pause();
    this.calls.push(`forwardBackward:${loss.type}`);
    const { logprobs, entropy, probs } = this.score(data);
    const rows = data.map((d, i) => ({
      logprobs: logprobs[i]!,
      samplerLogprobs: d.logprobs,
      advantages: d.advantages,
      mask: d.mask,
      entropy: entropy[i]!,
      ...(d.refLogprobs ? { refLogprobs: d.refLogprobs } : {}),
    }));
    let value: number;
    let gradLogprobs: number[][];
    let gradEntropy: number[][] | null = null;
    let metrics: Record<string, number>;
    if (loss.type === "grpo") {
      const result = policyLoss(rows, loss.config);
      value = result.loss;
      gradLogprobs = result.gradLogprobs;
      gradEntropy = result.gradEntropy;
      metrics = lossMetrics(result);
    } else {
      const result = referenceLoss(loss, rows);
      value = result.loss;
      gradLogprobs = result.gradLogprobs;
      metrics = { "loss:sum": value };
    }
    // Chain rule through the softmax of the row each position reads.
    data.forEach((d, i) => {
      d.tokens.forEach((token, t) => {
        const p = probs[i]![t]!;
        const gLp = gradLogprobs[i]![t]!;
        const gH = gradEntropy?.[i]![t] ?? 0;
        const h = entropy[i]![t]!;
        for (let j = 0; j < this.vocab; j++) {
          const dLp = (j === d.targetTokens[t] ? 1 : 0) - p[j]!;
          const dH = p[j]! > 0 ? -p[j]! * (Math.log(p[j]!) + h) : 0;
          this.grad[token * this.vocab + j]! += gLp * dLp + gH * dH;
        }
      });
    });
    return { logprobs, loss: value, metrics };
  }

  async optimStep(adam: AdamParams): Promise<Record<string, number>> {
    await this.pause();
    this.calls.push("optimStep");
    const norm = Math.sqrt(this.grad.reduce((s, g) => s + g * g, 0));
    const scale = adam.gradClipNorm > 0 && norm > adam.gradClipNorm ? adam.gradClipNorm / norm : 1;
    this.step += 1;
    for (let i = 0; i < this.weights.length; i++) {
      const g = this.grad[i]! * scale;
      this.m[i] = adam.beta1 * this.m[i]! + (1 - adam.beta1) * g;
      this.v[i] = adam.beta2 * this.v[i]! + (1 - adam.beta2) * g * g;
      const mHat = this.m[i]! / (1 - adam.beta1 ** this.step);
      const vHat = this.v[i]! / (1 - adam.beta2 ** this.step);
      this.weights[i] = this.weights[i]! * (1 - adam.learningRate * adam.weightDecay) - (adam.learningRate * mHat) / (Math.sqrt(vHat) + adam.eps);
    }
    this.grad.fill(0);
    return { "grad_norm:mean": norm };
  }

  async saveWeightsForSampler(): Promise<Sampler & { promptLogprobs?: (prompt: readonly number[]) => Promise<number[]> }> {
    await this.pause();
    this.calls.push("saveWeightsForSampler");
    const snapshot = Float64Array.from(this.weights);
    let counter = 0;
    const eos = this.options.eos;
    const promptLogprobs = (prompt: readonly number[]) =>
      Promise.resolve(prompt.slice(1).map((token, t) => Math.log(this.probs(snapshot, prompt[t]!)[token]!)));
    return {
      ...(this.options.scoresPrompts ? { promptLogprobs } : {}),
      sample: (prompt: readonly number[], params: SamplingParams): Promise<SampledTokens> => {
        let state = (params.seed ?? counter++) >>> 0;
        const random = () => {
          state = (Math.imul(state ^ (state >>> 15), 2246822507) + 3266489909) >>> 0;
          return state / 2 ** 32;
        };
        const tokens: number[] = [];
        const logprobs: number[] = [];
        let last = prompt[prompt.length - 1]!;
        while (tokens.length < params.maxTokens) {
          const p = this.probs(snapshot, last, Math.max(params.temperature, 1e-6));
          let pick = 0;
          for (let r = random(); pick < p.length - 1 && r >= p[pick]!; pick++) r -= p[pick]!;
          tokens.push(pick);
          logprobs.push(Math.log(p[pick]!));
          last = pick;
          if (pick === eos) return Promise.resolve({ tokens, logprobs, finishReason: "stop" });
        }
        return Promise.resolve({ tokens, logprobs, finishReason: "length" });
      },
    };
  }
}
