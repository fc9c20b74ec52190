import { InvariantError } from "@envace/errors";
import { TrainingStateError } from "./errors.js";
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-wasm";
import { BackendWasm } from "@tensorflow/tfjs-backend-wasm";

/**
 * The tfjs wasm backend and the few kernels this package adds to it. tfjs-wasm runs a plain 2-D
 * matMul through XNNPACK at tens of GFLOP/s, but several of its generic kernels are far slower
 * than the arithmetic suggests: `slice` copies its whole input out of the heap first, a 2-D
 * `transpose` walks memory with a stride that defeats the cache, reductions over a leading axis
 * transpose first, and `matMul` with transpose flags or batch dimensions leaves XNNPACK. The
 * helpers here replace those with heap copies, two cache-friendly 3-D transposes, and matMuls.
 */
let ready: Promise<void> | undefined;

/** Select the wasm backend (once per process); every tensor function here needs it. */
export function initWasmBackend(): Promise<void> {
  ready ??= (async () => {
    const ok = await tf.setBackend("wasm");
    if (!ok) throw new TrainingStateError("the tfjs wasm backend failed to initialise");
    await tf.ready();
  })();
  return ready;
}

function wasm(): BackendWasm {
  const backend = tf.backend();
  if (!(backend instanceof BackendWasm)) {
    throw new TrainingStateError(`tfjs is on the ${tf.getBackend()} backend; call initWasmBackend() first`);
  }
  return backend;
}

/**
 * Block `index` of `x` viewed as equal blocks along its first axis, as a tensor of `shape`
 * (which must hold one block), copied inside the wasm heap.
 */
export function block(x: tf.Tensor, index: number, shape: number[]): tf.Tensor {
  const size = shape.reduce((a, b) => a * b, 1);
  const backend = wasm();
  const out = backend.makeOutput(shape, "float32");
  // The heap may have grown while allocating `out`, so take both views afterwards.
  const src = backend.typedArrayFromHeap(x) as Float32Array;
  const dst = backend.typedArrayFromHeap(out) as Float32Array;
  dst.set(src.subarray(index * size, (index + 1) * size));
  return tf.engine().makeTensorFromTensorInfo(out, backend);
}

/** Equal-shaped tensors stacked along a new first axis, copied inside the wasm heap. */
export function stackBlocks(parts: readonly tf.Tensor[]): tf.Tensor {
  const first = parts[0];
  if (!first) throw new InvariantError("stackBlocks needs at least one tensor");
  const backend = wasm();
  const out = backend.makeOutput([parts.length, ...first.shape], "float32");
  const dst = backend.typedArrayFromHeap(out) as Float32Array;
  parts.forEach((part, i) => {
    dst.set(backend.typedArrayFromHeap(part), i * first.size);
  });
  return tf.engine().makeTensorFromTensorInfo(out, backend);
}

/**
 * A live view of a tensor's values in the wasm heap: valid only until the next tensor is
 * allocated. Used to read a few values or to patch a tensor this code has just created.
 */
export function heapView(x: tf.Tensor): Float32Array {
  return wasm().typedArrayFromHeap(x) as Float32Array;
}

/** A float32 tensor holding a copy of `data`. */
export function tensorFrom(data: Float32Array, shape: number[]): tf.Tensor {
  return tf.tensor(data, shape, "float32");
}

/**
 * The transpose of a matrix. A [m, n] matrix with m divisible by b is viewed as [m/b, b, n];
 * transposing its two inner axes, then its two outer axes, gives [n, m/b, b] = [n, m]. Both steps
 * move b-element runs, which is several times faster than tfjs-wasm's strided 2-D transpose.
 */
export function transpose2d(x: tf.Tensor): tf.Tensor {
  if (x.rank !== 2) throw new InvariantError(`transpose2d needs a matrix, got shape [${x.shape.join(", ")}]`);
  const [m, n] = x.shape as [number, number];
  const block = [64, 32, 16, 8].find((b) => m % b === 0 && m > b);
  if (block === undefined || n === 1 || m === 1) return tf.transpose(x);
  return tf.tidy(() => {
    const inner = tf.transpose(tf.reshape(x, [m / block, block, n]), [0, 2, 1]);
    return tf.reshape(tf.transpose(inner, [1, 0, 2]), [n, m]);
  });
}

/** Σ over rows of a ⊙ b for two [rows, cols] matrices, computed on the host from heap views. */
export function columnDot(a: tf.Tensor, b: tf.Tensor): Float32Array {
  const cols = a.shape[1]!;
  const x = heapView(a);
  const y = heapView(b);
  const sums = new Float64Array(cols);
  for (let i = 0; i < x.length; i += cols) {
    for (let j = 0; j < cols; j++) sums[j]! += x[i + j]! * y[i + j]!;
  }
  return Float32Array.from(sums);
}

/**
 * `tf.tidy` for results of any shape: tensors reachable from the result survive, every other
 * tensor created inside `fn` is released. (Return tensors, not large typed arrays: tidy walks
 * typed arrays element by element.)
 */
export function scoped<T>(fn: () => T): T {
  return tf.tidy(fn as () => tf.TensorContainer) as T;
}
