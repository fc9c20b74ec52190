import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SamplingParams, type GenerateRequest } from "@envace/protocol";
import { loadHuggingFaceTokenizer } from "@envace/trajectory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTinyModel } from "../tiny/tiny.js";
import { randomLlama, writeLlamaCheckpoint } from "./fixtures.js";
import { TokenTextStream } from "./text-stream.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "envace-stream-"));
  const { config, weights } = randomLlama({ seed: 21 });
  await writeLlamaCheckpoint(dir, config, weights);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("TokenTextStream", () => {
  it("releases each character of a byte-level tokenizer once its last byte arrives, and no stop token", async () => {
    const tokenizer = await loadHuggingFaceTokenizer(dir);
    // Byte tokens: ñ is 2 bytes, € 3, 😀 4 (UTF-8); 258 is <|im_end|>.
    const tokens = [...new TextEncoder().encode("añ€😀 ok")];
    expect(tokens).toHaveLength(1 + 2 + 3 + 4 + 3);
    const stream = new TokenTextStream(tokenizer);
    const pieces = [...tokens, 258].map((t) => stream.push(t));
    expect(pieces.filter((p) => p !== "")).toEqual(["a", "ñ", "€", "😀", " ", "o", "k"]);
    // The partial bytes of a character released nothing.
    expect(pieces.slice(1, 4)).toEqual(["", "ñ", ""]);
    expect(stream.finish("añ€😀 ok")).toBe("");
  });

  it("leaves a partial character at the end to finish, and refuses text it did not extend", async () => {
    const tokenizer = await loadHuggingFaceTokenizer(dir);
    const stream = new TokenTextStream(tokenizer);
    for (const t of [0x68, 0x69, 0xe2, 0x82]) stream.push(t);
    expect(stream.text).toBe("hi");
    // What the whole output decodes to: the two bytes of an unfinished € are one replacement character.
    expect(stream.finish("hi\uFFFD")).toBe("\uFFFD");
    expect(new TokenTextStream(tokenizer).finish("x")).toBe("x");
    const other = new TokenTextStream(tokenizer);
    other.push(0x68);
    expect(other.finish("y")).toBeUndefined();
  });
});

const request = (maxTokens: number): GenerateRequest => ({
  role: "act",
  messages: [{ role: "user", content: "Hello" }],
  tools: [],
  sampling: SamplingParams.parse({ temperature: 1, maxTokens, seed: 5 }),
});

describe.each(["tfjs", "onnx"] as const)("generateStream of a tiny checkpoint (%s engine)", (engine) => {
  it("streams pieces that concatenate to the answer generate gives with the same seed", async () => {
    const { policy } = await loadTinyModel(dir, { engine });
    const whole = await policy.generate(request(40));
    const pieces: string[] = [];
    const streamed = await policy.generateStream(request(40), (delta) => pieces.push(delta.content ?? ""));
    expect(streamed.outputTokens).toEqual(whole.outputTokens);
    expect(streamed.text).toBe(whole.text);
    expect(pieces.join("")).toBe(whole.text);
    expect(pieces.length).toBeGreaterThan(1);
  });

  it("stops sampling when aborted", async () => {
    const { policy } = await loadTinyModel(dir, { engine });
    const controller = new AbortController();
    const streamed = await policy.generateStream(request(400), () => controller.abort(), controller.signal);
    expect(streamed.finishReason).toBe("abort");
    // Aborted at the first piece: a few tokens (a character may take several), far from 400.
    expect(streamed.outputTokens.length).toBeLessThan(8);
  });
});
