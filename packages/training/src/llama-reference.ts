import { CheckpointError } from "./errors.js";
import { llamaTensorNames as names, type LlamaShape } from "./llama-config.js";

/**
 * A direct, unoptimised forward pass of the Llama block in float64, written from the
 * architecture's definition (Hugging Face semantics: pre-norm RMSNorm, projections y = x·Wᵀ with
 * W in [out, in] layout, rotary embedding in the rotate_half convention, causal softmax attention
 * scaled by 1/√headDim with grouped key/value heads, SwiGLU, final RMSNorm, logits from `lm_head`
 * or the tied embedding). `weights` are float32 arrays by Hugging Face name. It recomputes the
 * whole sequence, one position at a time: the specification the tfjs model and the exported ONNX
 * graph are tested against, far too slow for generation.
 */
export function llamaReferenceLogits(shape: LlamaShape, weights: ReadonlyMap<string, Float32Array>, tokens: readonly number[]): Float64Array[] {
  const { hidden, heads, kvHeads, headDim, intermediate } = shape;
  const w = (name: string): Float32Array => {
    const data = weights.get(name);
    if (!data) throw new CheckpointError(`missing weight ${name}`);
    return data;
  };
  /** y = W x with W stored [out, in]. */
  const linear = (x: Float64Array, weight: Float32Array, out: number): Float64Array => {
    const inDim = x.length;
    const y = new Float64Array(out);
    for (let o = 0; o < out; o++) {
      let sum = 0;
      for (let i = 0; i < inDim; i++) sum += weight[o * inDim + i]! * x[i]!;
      y[o] = sum;
    }
    return y;
  };
  const rmsNorm = (x: Float64Array, weight: Float32Array): Float64Array => {
    let meanSquare = 0;
    for (const v of x) meanSquare += v * v;
    const inv = 1 / Math.sqrt(meanSquare / x.length + shape.eps);
    return x.map((v, i) => v * inv * weight[i]!);
  };
  const rope = (vector: Float64Array, position: number, headCount: number): Float64Array => {
    const out = new Float64Array(vector.length);
    const half = headDim / 2;
    for (let h = 0; h < headCount; h++) {
      for (let i = 0; i < half; i++) {
        const angle = position / shape.ropeTheta ** ((2 * i) / headDim);
        const a = vector[h * headDim + i]!;
        const b = vector[h * headDim + half + i]!;
        out[h * headDim + i] = a * Math.cos(angle) - b * Math.sin(angle);
        out[h * headDim + half + i] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
    return out;
  };

  const embed = w(names.embed);
  let states = tokens.map((token) => Float64Array.from(embed.subarray(token * hidden, (token + 1) * hidden)));
  const group = heads / kvHeads;
  for (let layer = 0; layer < shape.layers; layer++) {
    const normed = states.map((x) => rmsNorm(x, w(names.inputNorm(layer))));
    const qs = normed.map((x, p) => rope(linear(x, w(names.q(layer)), heads * headDim), p, heads));
    const ks = normed.map((x, p) => rope(linear(x, w(names.k(layer)), kvHeads * headDim), p, kvHeads));
    const vs = normed.map((x) => linear(x, w(names.v(layer)), kvHeads * headDim));
    states = states.map((x, p) => {
      const context = new Float64Array(heads * headDim);
      for (let h = 0; h < heads; h++) {
        const kv = Math.floor(h / group);
        const scores = ks.slice(0, p + 1).map((k) => {
          let dot = 0;
          for (let d = 0; d < headDim; d++) dot += qs[p]![h * headDim + d]! * k[kv * headDim + d]!;
          return dot / Math.sqrt(headDim);
        });
        const max = Math.max(...scores);
        const exps = scores.map((s) => Math.exp(s - max));
        const total = exps.reduce((a, b) => a + b, 0);
        exps.forEach((e, j) => {
          for (let d = 0; d < headDim; d++) context[h * headDim + d]! += (e / total) * vs[j]![kv * headDim + d]!;
        });
      }
      const attended = linear(context, w(names.o(layer)), hidden);
      const residual = x.map((v, i) => v + attended[i]!);
      const y = rmsNorm(residual, w(names.postNorm(layer)));
      const gate = linear(y, w(names.gate(layer)), intermediate);
      const up = linear(y, w(names.up(layer)), intermediate);
      const activated = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!);
      const down = linear(activated, w(names.down(layer)), hidden);
      return residual.map((v, i) => v + down[i]!);
    });
  }
  const head = shape.tied ? embed : w(names.lmHead);
  return states.map((x) => linear(rmsNorm(x, w(names.norm)), head, shape.vocab));
}
