import { llamaTensorNames as names, type LlamaShape, type NamedTensor } from "@envace/training";
import onnxProto from "onnx-proto";
import { InvariantError } from "@envace/errors";

const { onnx } = onnxProto;
type NodeProto = onnxProto.onnx.INodeProto;
type TensorProto = onnxProto.onnx.ITensorProto;
type ValueInfoProto = onnxProto.onnx.IValueInfoProto;
type AttributeProto = onnxProto.onnx.IAttributeProto;

/** The opset of the exported graph: every op used has had its current form since 13–17. */
export const OPSET = 17;
/** ONNX IR version 8 (ONNX 1.10+), which every onnxruntime since 1.10 reads. */
const IR_VERSION = 8;

type Attribute = number | number[] | { floats: number[] } | { float: number } | { tensor: TensorProto };

function attribute(name: string, value: Attribute): AttributeProto {
  const A = onnx.AttributeProto.AttributeType;
  if (typeof value === "number") return { name, type: A.INT, i: value };
  if (Array.isArray(value)) return { name, type: A.INTS, ints: value };
  if ("float" in value) return { name, type: A.FLOAT, f: value.float };
  if ("floats" in value) return { name, type: A.FLOATS, floats: value.floats };
  return { name, type: A.TENSOR, t: value.tensor };
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** A small imperative builder: each call appends nodes and returns the output names. */
class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  #counter = 0;

  fresh(hint: string): string {
    return `${hint}_${this.#counter++}`;
  }

  op(opType: string, inputs: string[], attributes: Record<string, Attribute> = {}, outputs: string[] | number = 1, hint = opType): string[] {
    const outs = typeof outputs === "number" ? Array.from({ length: outputs }, () => this.fresh(hint)) : outputs;
    this.nodes.push({
      opType,
      name: this.fresh(`${opType}_node`),
      input: inputs,
      output: outs,
      attribute: Object.entries(attributes).map(([key, value]) => attribute(key, value)),
    });
    return outs;
  }

  /** One-output op. */
  one(opType: string, inputs: string[], attributes: Record<string, Attribute> = {}, output?: string): string {
    return this.op(opType, inputs, attributes, output ? [output] : 1)[0]!;
  }

  floatInitializer(name: string, dims: number[], data: Float32Array): string {
    this.initializers.push({ name, dataType: onnx.TensorProto.DataType.FLOAT, dims, rawData: bytesOf(data) });
    return name;
  }

  int64(values: number[], dims: number[] = [values.length], hint = "const"): string {
    const name = this.fresh(hint);
    this.initializers.push({ name, dataType: onnx.TensorProto.DataType.INT64, dims, rawData: bytesOf(BigInt64Array.from(values.map(BigInt))) });
    return name;
  }

  float(values: number[], dims: number[] = [values.length], hint = "const"): string {
    return this.floatInitializer(this.fresh(hint), dims, Float32Array.from(values));
  }
}

/** `[out, in]` → `[in, out]`, so the graph can use a plain `MatMul(x, W)`. */
export function transpose2d(tensor: NamedTensor): NamedTensor {
  const [rows, cols] = tensor.shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = tensor.data[r * cols + c]!;
  return { shape: [cols, rows], data: out };
}

function valueInfo(name: string, elemType: number, dims: (string | number)[]): ValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) } } },
  };
}

/**
 * The ONNX graph of a Llama-style decoder with a KV cache, in the layout of the Hugging Face
 * exporters: inputs `input_ids`, `attention_mask`, `position_ids`, `past_key_values.{i}.key`
 * and `.value` (`[batch, kv_heads, past, head_dim]`); outputs `logits` and `present.{i}.key` /
 * `.value` (`[batch, kv_heads, past + sequence, head_dim]`).
 *
 * The block: RMSNorm → causal self-attention with RoPE (rotate-half convention, grouped KV heads
 * repeated) → residual → RMSNorm → SwiGLU MLP → residual; final RMSNorm; logits from `lm_head`,
 * or from the transposed embedding when tied. `weights` holds Hugging Face names, `[out, in]`.
 */
export interface LlamaGraphOptions {
  /** Element type of the cache inputs and outputs; `float16` halves cache memory. Default `float32`. */
  cacheType?: "float32" | "float16";
  producer?: string;
}

export function buildLlamaModel(shape: LlamaShape, weights: ReadonlyMap<string, NamedTensor>, options: LlamaGraphOptions = {}): Uint8Array {
  const g = new GraphBuilder();
  const half16 = options.cacheType === "float16";
  const cacheElem = half16 ? onnx.TensorProto.DataType.FLOAT16 : onnx.TensorProto.DataType.FLOAT;
  const { heads, kvHeads, headDim, layers, vocab } = shape;
  const weight = (name: string): NamedTensor => {
    const tensor = weights.get(name);
    if (!tensor) throw new InvariantError(`missing weight ${name} (checked by checkLlamaTensors before the graph is built)`);
    return tensor;
  };
  const matrix = (name: string): string => {
    const t = transpose2d(weight(name));
    return g.floatInitializer(`${name}.transposed`, t.shape, t.data);
  };
  const vector = (name: string): string => g.floatInitializer(name, weight(name).shape, weight(name).data);

  const embed = g.floatInitializer(names.embed, weight(names.embed).shape, weight(names.embed).data);

  // Shared: RoPE tables for the new positions and the attention mask.
  const half = headDim / 2;
  const invFreq = Array.from({ length: half }, (_, i) => 1 / shape.ropeTheta ** ((2 * i) / headDim));
  const positions = g.one("Cast", ["position_ids"], { to: onnx.TensorProto.DataType.FLOAT });
  const freqs = g.one("Mul", [g.one("Unsqueeze", [positions, g.int64([2])]), g.float(invFreq, [1, 1, half], "inv_freq")]);
  const angles = g.one("Concat", [freqs, freqs], { axis: -1 });
  const cos = g.one("Unsqueeze", [g.one("Cos", [angles]), g.int64([1])], {}, "rope_cos");
  const sin = g.one("Unsqueeze", [g.one("Sin", [angles]), g.int64([1])], {}, "rope_sin");

  const scalarAt = (shapeOf: string, index: number): string => g.one("Gather", [g.one("Shape", [shapeOf]), g.int64([index], [])], { axis: 0 });
  const newLength = scalarAt("input_ids", 1);
  const totalLength = scalarAt("attention_mask", 1);
  const pastLength = g.one("Sub", [totalLength, newLength]);
  const one = g.int64([1], []);
  const keyIndex = g.one("Range", [g.int64([0], []), totalLength, one]);
  const queryIndex = g.one("Range", [pastLength, totalLength, one]);
  // Query at absolute position p sees keys 0..p, and only keys the attention mask keeps.
  const causal = g.one("LessOrEqual", [g.one("Unsqueeze", [keyIndex, g.int64([0])]), g.one("Unsqueeze", [queryIndex, g.int64([1])])]);
  const keep = g.one("Unsqueeze", [g.one("Cast", ["attention_mask"], { to: onnx.TensorProto.DataType.BOOL }), g.int64([1, 2])]);
  const allowed = g.one("And", [causal, keep], {}, "attention_allowed");
  // The lowest float32, as the reference implementation masks: a fully masked row stays finite.
  const masked = g.float([-3.4028234663852886e38], [], "mask_value");
  const scale = g.float([1 / Math.sqrt(headDim)], [], "attention_scale");
  const eps = g.float([shape.eps], [], "rms_eps");
  const two = g.float([2], [], "two");
  const splitHalves = g.int64([half, half]);
  const headsShape = g.int64([0, 0, heads, headDim]);
  const kvShape = g.int64([0, 0, kvHeads, headDim]);
  const mergedShape = g.int64([0, 0, heads * headDim]);

  const rmsNorm = (x: string, weightName: string): string => {
    const meanSquare = g.one("ReduceMean", [g.one("Pow", [x, two])], { axes: [-1], keepdims: 1 });
    const rms = g.one("Sqrt", [g.one("Add", [meanSquare, eps])]);
    return g.one("Mul", [g.one("Div", [x, rms]), vector(weightName)]);
  };
  const rope = (x: string): string => {
    const [first, second] = g.op("Split", [x, splitHalves], { axis: 3 }, 2);
    const rotated = g.one("Concat", [g.one("Neg", [second!]), first!], { axis: 3 });
    return g.one("Add", [g.one("Mul", [x, cos]), g.one("Mul", [rotated, sin])]);
  };
  const projectHeads = (x: string, weightName: string, shapeConst: string): string =>
    g.one("Transpose", [g.one("Reshape", [g.one("MatMul", [x, matrix(weightName)]), shapeConst])], { perm: [0, 2, 1, 3] });
  const repeatKv = (x: string): string => {
    if (kvHeads === heads) return x;
    const group = heads / kvHeads;
    const expanded = g.one("Expand", [g.one("Unsqueeze", [x, g.int64([2])]), g.int64([1, 1, group, 1, 1])]);
    return g.one("Reshape", [expanded, g.int64([0, heads, -1, headDim])]);
  };

  let h = g.one("Gather", [embed, "input_ids"], { axis: 0 }, "embeddings");
  const inputs: ValueInfoProto[] = [
    valueInfo("input_ids", onnx.TensorProto.DataType.INT64, ["batch_size", "sequence_length"]),
    valueInfo("attention_mask", onnx.TensorProto.DataType.INT64, ["batch_size", "total_sequence_length"]),
    valueInfo("position_ids", onnx.TensorProto.DataType.INT64, ["batch_size", "sequence_length"]),
  ];
  const outputs: ValueInfoProto[] = [valueInfo("logits", onnx.TensorProto.DataType.FLOAT, ["batch_size", "sequence_length", vocab])];

  for (let i = 0; i < layers; i++) {
    const pastKey = `past_key_values.${i}.key`;
    const pastValue = `past_key_values.${i}.value`;
    inputs.push(valueInfo(pastKey, cacheElem, ["batch_size", kvHeads, "past_sequence_length", headDim]));
    inputs.push(valueInfo(pastValue, cacheElem, ["batch_size", kvHeads, "past_sequence_length", headDim]));
    outputs.push(valueInfo(`present.${i}.key`, cacheElem, ["batch_size", kvHeads, "total_sequence_length", headDim]));
    outputs.push(valueInfo(`present.${i}.value`, cacheElem, ["batch_size", kvHeads, "total_sequence_length", headDim]));

    const x = rmsNorm(h, names.inputNorm(i));
    const q = rope(projectHeads(x, names.q(i), headsShape));
    const k = rope(projectHeads(x, names.k(i), kvShape));
    const v = projectHeads(x, names.v(i), kvShape);
    // A float16 cache is stored rounded; attention itself always runs in float32.
    const toFloat = (x: string) => (half16 ? g.one("Cast", [x], { to: onnx.TensorProto.DataType.FLOAT }) : x);
    const keys = g.one("Concat", [toFloat(pastKey), k], { axis: 2 }, half16 ? undefined : `present.${i}.key`);
    const values = g.one("Concat", [toFloat(pastValue), v], { axis: 2 }, half16 ? undefined : `present.${i}.value`);
    if (half16) {
      g.one("Cast", [keys], { to: onnx.TensorProto.DataType.FLOAT16 }, `present.${i}.key`);
      g.one("Cast", [values], { to: onnx.TensorProto.DataType.FLOAT16 }, `present.${i}.value`);
    }
    const scores = g.one("Mul", [g.one("MatMul", [q, g.one("Transpose", [repeatKv(keys)], { perm: [0, 1, 3, 2] })]), scale]);
    const probs = g.one("Softmax", [g.one("Where", [allowed, scores, masked])], { axis: -1 });
    const context = g.one("Reshape", [g.one("Transpose", [g.one("MatMul", [probs, repeatKv(values)])], { perm: [0, 2, 1, 3] }), mergedShape]);
    h = g.one("Add", [h, g.one("MatMul", [context, matrix(names.o(i))])]);

    const y = rmsNorm(h, names.postNorm(i));
    const gate = g.one("MatMul", [y, matrix(names.gate(i))]);
    const up = g.one("MatMul", [y, matrix(names.up(i))]);
    const activated = g.one("Mul", [g.one("Mul", [gate, g.one("Sigmoid", [gate])]), up]);
    h = g.one("Add", [h, g.one("MatMul", [activated, matrix(names.down(i))])]);
  }

  const final = rmsNorm(h, names.norm);
  // Tied: onnxruntime folds the constant transpose once at load, so the file stores E only once.
  const head = shape.tied ? g.one("Transpose", [embed], { perm: [1, 0] }) : matrix(names.lmHead);
  g.one("MatMul", [final, head], {}, "logits");

  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    opsetImport: [{ domain: "", version: OPSET }],
    producerName: options.producer ?? "@envace/models",
    graph: { name: "llama", node: g.nodes, initializer: g.initializers, input: inputs, output: outputs },
  });
  return onnx.ModelProto.encode(model).finish();
}
