import * as tf from "@tensorflow/tfjs-core";
import { columnDot, tensorFrom } from "./wasm.js";

/** RMSNorm of the rows of x, keeping u = x·r and r = (mean(x²) + ε)^−½ for the backward pass. */
export function rmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): { u: tf.Tensor; r: tf.Tensor; y: tf.Tensor } {
  const r = tf.rsqrt(tf.add(tf.mean(tf.square(x), 1, true), eps));
  const u = tf.mul(x, r);
  return { u, r, y: tf.mul(u, weight) };
}

/** With u = x·r and r = (mean(x²) + ε)^−½: dx = r·(du − u·mean(du ⊙ u)), du = dy ⊙ w. */
export function rmsNormBackward(dy: tf.Tensor, u: tf.Tensor, r: tf.Tensor, weight: tf.Tensor): { dx: tf.Tensor; dw: tf.Tensor } {
  const dw = tensorFrom(columnDot(dy, u), [u.shape[1]!]);
  const du = tf.mul(dy, weight);
  const dx = tf.mul(r, tf.sub(du, tf.mul(u, tf.mean(tf.mul(du, u), 1, true))));
  return { dx, dw };
}
