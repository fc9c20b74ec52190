import { headDim, type TinyModelConfig } from "./config.js";

/**
 * cos and sin of the rotary angles, [length, dh]: angle(t, j) = t / θ^(2(j mod dh/2)/dh), evaluated
 * in float32 like Hugging Face Llama so an exported model agrees with this one.
 */
export function rotaryTables(config: TinyModelConfig, length: number): { cos: Float32Array; sin: Float32Array } {
  const dh = headDim(config);
  const half = dh / 2;
  const invFreq = new Float32Array(half);
  for (let i = 0; i < half; i++) invFreq[i] = 1 / Math.fround(config.ropeTheta ** Math.fround((2 * i) / dh));
  const cos = new Float32Array(length * dh);
  const sin = new Float32Array(length * dh);
  for (let t = 0; t < length; t++) {
    for (let j = 0; j < dh; j++) {
      const angle = Math.fround(t * invFreq[j % half]!);
      cos[t * dh + j] = Math.cos(angle);
      sin[t * dh + j] = Math.sin(angle);
    }
  }
  return { cos, sin };
}
