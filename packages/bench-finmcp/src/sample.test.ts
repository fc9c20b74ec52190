import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { goldToolNames, loadSamples, userTurnIndices } from "./sample.js";
import { rescoreFile, scorePredictions } from "./run.js";
import { fixture } from "./testing/spawn.js";

function write(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "finmcp-")), name);
  writeFileSync(file, text);
  return file;
}

describe("loadSamples", () => {
  it("reads the sample format: scenery levels, task types, tool lists, gold calls and turns", async () => {
    const samples = await loadSamples(fixture("samples.jsonl"));
    expect(samples.map((s) => [s.id, s.sceneryLevel1, s.diffLevel, s.task])).toEqual([
      ["s1", "Stock", "easy", "single step"],
      ["s2", "Stock", "medium", "multi step"],
      ["s3", "FX", "easy", "single step"],
      ["s4", "Fund", "hard", "multi turn"],
      ["s5", "Stock", "hard", "multi step"],
      ["s6", "FX", "medium", "single step"],
    ]);
    const [s1, s2, , s4, s5] = samples;
    expect(s1!.toolNames).toEqual(["get_stock_quote", "get_exchange_rate"]);
    expect(s1!.toolSpecs).toBeUndefined();
    expect(s2!.toolSpecs?.map((t) => t.function.name)).toEqual(["get_financial_statement", "get_stock_quote"]);
    expect(goldToolNames(s5!)).toEqual(["search_news", "get_stock_quote", "get_stock_quote"]);
    expect(userTurnIndices(s4!)).toEqual([1, 5]);
    // A tool message without an id answers the call before it; object content becomes JSON text.
    expect(s2!.messages[2]).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: '{"symbol":"MSFT","year":2023,"revenue":211915000000,"net_income":72361000000}',
    });
    expect(s2!.messages[4]).toMatchObject({ role: "tool", tool_call_id: "call_2" });
  });

  it("reads a JSON array too", async () => {
    const file = write(
      "samples.json",
      JSON.stringify([{ id: 7, scenery: "A-B-C", diff_level: 2, task: "multi-turn", tool_list: [], messages: [{ role: "user", content: "hi" }] }]),
    );
    expect((await loadSamples(file)).map((s) => [s.id, s.diffLevel, s.task])).toEqual([["7", "2", "multi turn"]]);
  });

  it("names the file, line and field of a bad record, and a repeated id", async () => {
    const good = { id: "a", scenery: "A-B-C", diff_level: "easy", task: "single step", tool_list: [], messages: [{ role: "user", content: "hi" }] };
    const bad = write("bad.jsonl", `${JSON.stringify(good)}\n${JSON.stringify({ ...good, id: "b", task: "one step" })}\n`);
    await expect(loadSamples(bad)).rejects.toThrow(`${bad}:2: task: Invalid option: expected one of "single step"|"multi step"|"multi turn"`);
    const noUser = write("nouser.jsonl", JSON.stringify({ ...good, messages: [{ role: "system", content: "x" }] }));
    await expect(loadSamples(noUser)).rejects.toThrow(`${noUser}:1: messages: has no user message`);
    const twice = write("twice.jsonl", `${JSON.stringify(good)}\n${JSON.stringify(good)}\n`);
    await expect(loadSamples(twice)).rejects.toThrow(`${twice}: sample id a appears more than once`);
    await expect(loadSamples("/nonexistent/samples.jsonl")).rejects.toThrow("/nonexistent/samples.jsonl: cannot read the FinMCP samples (ENOENT)");
  });
});

describe("scorePredictions", () => {
  it("refuses a prediction for an unknown sample, a repeated one, and one without names that is not an error", async () => {
    const samples = await loadSamples(fixture("samples.jsonl"));
    expect(() => scorePredictions(samples, [{ id: "zz", predicted: [] }], "p.jsonl")).toThrow(
      "p.jsonl: prediction for sample id zz, which the samples do not hold",
    );
    expect(() =>
      scorePredictions(
        samples,
        [
          { id: "s1", predicted: [] },
          { id: "s1", predicted: [] },
        ],
        "p.jsonl",
      ),
    ).toThrow("p.jsonl: more than one prediction for sample id s1");
    expect(scorePredictions(samples, [{ id: "s1", predicted: ["get_stock_quote"] }], "p.jsonl").missing).toEqual(["s2", "s3", "s4", "s5", "s6"]);
    const unnamed = write("p.jsonl", `${JSON.stringify({ id: "s1", error: "" })}\n`);
    await expect(rescoreFile(samples, unnamed)).rejects.toThrow(
      `${unnamed}:1: predicted: needs predicted (the tool names, in order) unless it is marked error`,
    );
  });
});
