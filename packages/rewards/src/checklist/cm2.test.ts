import { RecordError } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { fixturePath, item } from "../testing/fixtures.js";
import { cm2ToTask, loadCm2Records, parseCm2Records } from "./cm2.js";

function record(uuid: string, overrides: Record<string, unknown> = {}) {
  return {
    uuid,
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
    ],
    tools: [],
    checklists: [[[item("greet", { weight: 1 })]]],
    ...overrides,
  };
}

function errorOf(run: () => unknown): RecordError {
  try {
    run();
  } catch (error) {
    if (error instanceof RecordError) return error;
    throw error;
  }
  throw new Error("expected a RecordError");
}

describe("loadCm2Records", () => {
  it("reads the same records from a JSON array and from JSON Lines", async () => {
    const fromArray = await loadCm2Records(fixturePath("cm2", "records.json"));
    const fromLines = await loadCm2Records(fixturePath("cm2", "records.jsonl"));
    expect(fromArray.map((r) => r.uuid)).toEqual(["cm2-flight-001", "cm2-weather-002"]);
    expect(fromLines).toEqual(fromArray);
    expect(fromArray[1]!.checklists).toHaveLength(2);
  });

  it("names the file, line, record and field of a bad record", async () => {
    const path = fixturePath("cm2", "bad-weights.jsonl");
    const error = await loadCm2Records(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordError);
    const { source, fields, message } = error as RecordError;
    expect(source).toEqual({ file: path, line: 2, record: "cm2-bad-003" });
    expect(fields).toEqual([{ path: "checklists[0][1]", message: "weights sum to 0.5, expected 1" }]);
    expect(message).toBe(`${path}:2 (record cm2-bad-003): checklists[0][1]: weights sum to 0.5, expected 1`);
  });
});

describe("parseCm2Records", () => {
  it("reports the line and uuid of a bad element of a JSON array", () => {
    const bad = record("r2");
    delete (bad.checklists[0]![0]![0] as Partial<ReturnType<typeof item>>).question;
    const text = JSON.stringify([record("r1"), bad], null, 2);
    const error = errorOf(() => parseCm2Records(text, "train.json"));
    expect(error.source).toEqual({ file: "train.json", line: text.split("\n").indexOf("  {", 2) + 1, record: "r2" });
    expect(error.fields).toEqual([{ path: "checklists[0][0][0].question", message: expect.stringContaining("expected string") as string }]);
  });

  it("reports an element of a JSON array that is not JSON by line and index", () => {
    const text = `[\n${JSON.stringify(record("r1"))},\n{"uuid": "r2", oops}\n]`;
    const error = errorOf(() => parseCm2Records(text, "train.json"));
    expect(error.source).toEqual({ file: "train.json", line: 3, record: 1 });
    expect(error.message).toMatch(/^train\.json:3 \(record 1\): not JSON/);
  });

  it("rejects an array that is never closed or has text after it", () => {
    expect(() => parseCm2Records(`[${JSON.stringify(record("r1"))}`, "a.json")).toThrow("a.json:1: not JSON (the array is not closed)");
    expect(() => parseCm2Records(`[${JSON.stringify(record("r1"))}] x`, "a.json")).toThrow("text after the closing bracket");
  });

  it("reports a JSON Lines record that is not JSON by its line", () => {
    const text = `${JSON.stringify(record("r1"))}\n\n{"uuid":\n`;
    expect(() => parseCm2Records(text, "train.jsonl")).toThrow(/^train\.jsonl:3: not JSON/);
  });

  it("names a record without a uuid by its line or index", () => {
    const { uuid: _uuid, ...anonymous } = record("x");
    expect(errorOf(() => parseCm2Records(JSON.stringify(anonymous), "one.jsonl")).message).toMatch(/^one\.jsonl:1: uuid: /);
    expect(errorOf(() => parseCm2Records(JSON.stringify([record("a"), anonymous]), "all.json")).source.record).toBe(1);
  });

  it("rejects checklists whose turns do not match the dialogue's user turns", () => {
    const twoTurns = record("r1", {
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
        { role: "user", content: "c" },
        { role: "assistant", content: "d" },
      ],
    });
    expect(() => parseCm2Records(JSON.stringify(twoTurns), "t.jsonl")).toThrow(
      "t.jsonl:1 (record r1): checklists[0]: has 1 turns but the dialogue has 2 user turns",
    );
  });

  it("rejects a dependency cycle and a dialogue without a user", () => {
    const cyclic = record("r1", {
      checklists: [[[item("a", { weight: 0.5, dependence: ["b"] }), item("b", { weight: 0.5, dependence: ["a"] })]]],
    });
    expect(() => parseCm2Records(JSON.stringify(cyclic), "c.jsonl")).toThrow("checklists[0][0]: dependency cycle a → b → a");
    const silent = record("r2", { messages: [{ role: "system", content: "x" }] });
    expect(errorOf(() => parseCm2Records(JSON.stringify(silent), "s.jsonl")).fields).toContainEqual({
      path: "messages",
      message: "the dialogue has no user message",
    });
  });

  it("accepts a single pretty-printed record and a byte-order mark", () => {
    expect(parseCm2Records(`\uFEFF${JSON.stringify(record("r1"), null, 2)}`, "one.json").map((r) => r.uuid)).toEqual(["r1"]);
    expect(parseCm2Records("[]", "empty.json")).toEqual([]);
  });
});

describe("cm2ToTask", () => {
  it("keeps the reference dialogue and starts from the messages up to the first user turn", async () => {
    const [flight] = await loadCm2Records(fixturePath("cm2", "records.json"));
    const task = cm2ToTask(flight!, { split: "train" });
    expect(task.id).toBe("cm2-flight-001");
    expect(task.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(task.reference).toBe(flight!.messages);
    expect(task.checklists).toBe(flight!.checklists);
    expect(task.tools.map((t) => t.function.name)).toEqual(["search_flights", "book_flight"]);
    expect(task.metadata).toEqual({ format: "cm2", split: "train" });
  });
});
