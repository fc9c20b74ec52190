import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordError, type Message } from "@envace/protocol";
import { DEFAULT_REHEARSE_INSTRUCTIONS } from "@envace/trajectory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCm2Split } from "./cm2.js";
import { DataError } from "./errors.js";
import { recordCorpus } from "./records.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const TRAIN = join(FIXTURES, "cm2-train.jsonl");
const TEST = join(FIXTURES, "cm2-test.json");

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "envace-cm2-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** The fixture's JSON Lines, with `edit` applied to the record on line `line` (1-based). */
async function editedLines(line: number, edit: (record: Record<string, unknown>) => void): Promise<string> {
  const lines = (await readFile(TRAIN, "utf8")).trimEnd().split("\n");
  const record = JSON.parse(lines[line - 1]!) as Record<string, unknown>;
  edit(record);
  lines[line - 1] = JSON.stringify(record);
  return `${lines.join("\n")}\n`;
}

type RawMessage = Record<string, unknown> & { tool_calls?: { function: Record<string, string> }[] };
const messagesOf = (record: Record<string, unknown>) => record.messages as RawMessage[];

describe("CM2 records as tasks", () => {
  it("reads JSON Lines: one task per record, the context up to the first user message, the whole dialogue as reference", async () => {
    const { tasks } = await loadCm2Split(TRAIN);
    expect(tasks.map((t) => t.id)).toEqual(["weather-001", "shop-002"]);
    const [weather, shop] = tasks;
    expect(weather!.messages).toEqual([
      { role: "system", content: "You are a travel assistant. Use the tools to answer." },
      { role: "user", content: "Will it rain in Paris today?" },
    ]);
    expect(weather!.reference).toHaveLength(9);
    expect(weather!.checklists![0]).toHaveLength(2);
    expect(shop!.tools.map((t) => t.function.name)).toEqual(["get_user", "get_item", "buy"]);
    expect(shop!.metadata).toEqual({ format: "cm2", file: TRAIN, record: 1 });
  });

  it("reads a pretty-printed JSON array the same way", async () => {
    const { tasks, gold } = await loadCm2Split(TEST);
    expect(tasks.map((t) => t.id)).toEqual(["weather-003"]);
    expect(gold.get("weather-003")!.map((e) => e.text)).toEqual([
      '<tool_call>{"name":"get_forecast","arguments":{"city":"Berlin"}}</tool_call>',
      '<execution_result>{"city":"Berlin","rain_probability":0.1,"temp_c":21}</execution_result>',
      "It is 21 °C in Berlin.",
    ]);
  });
});

describe("gold examples of a reference dialogue", () => {
  it("teach both roles across two user turns: the call (with its <think>), the real result, the reply, a tool error", async () => {
    const { tasks, gold } = await loadCm2Split(TRAIN);
    const reference = tasks[0]!.reference!;
    const examples = gold.get("weather-001")!;
    expect(examples.map((e) => [e.role, e.history.length, e.text])).toEqual([
      ["act", 2, '<think>I need the Paris forecast.</think>\n<tool_call>{"name":"get_forecast","arguments":{"city":"Paris"}}</tool_call>'],
      ["rehearse", 2, '<execution_result>{"city":"Paris","rain_probability":0.8,"temp_c":14}</execution_result>'],
      ["act", 4, "Yes, rain is likely in Paris today (80%), at 14 °C: take an umbrella."],
      ["act", 6, '<tool_call>{"name":"get_forecast","arguments":{"city":"Atlantis"}}</tool_call>'],
      ["rehearse", 6, '<execution_result>{"error":{"code":"CITY_NOT_FOUND","message":"no city named Atlantis"}}</execution_result>'],
      ["act", 8, "I could not find a forecast for Atlantis: it is not a city I know."],
    ]);
    // Each example sees exactly the dialogue before its turn; the target is the reference's own message.
    for (const example of examples) expect(example.history).toEqual(reference.slice(0, example.history.length));
    expect(examples[0]).toMatchObject({ role: "act", target: reference[2] });
    expect(examples[1]).toEqual({
      role: "rehearse",
      history: reference.slice(0, 2),
      latestAct: reference[2],
      call: { id: "call_w1", name: "get_forecast", arguments: { city: "Paris" } },
      result: { status: "ok", callId: "call_w1", name: "get_forecast", content: { city: "Paris", rain_probability: 0.8, temp_c: 14 } },
      text: '<execution_result>{"city":"Paris","rain_probability":0.8,"temp_c":14}</execution_result>',
    });
    expect(examples[4]).toMatchObject({
      role: "rehearse",
      result: { status: "error", callId: "call_w2", name: "get_forecast", error: { code: "CITY_NOT_FOUND", message: "no city named Atlantis" } },
    });
  });

  it("give parallel calls one Act text and one Rehearse example each; plain-text results and string errors keep a parseable form", async () => {
    const { tasks, gold } = await loadCm2Split(TRAIN);
    const reference = tasks[1]!.reference!;
    const examples = gold.get("shop-002")!;
    expect(examples.map((e) => [e.role, e.history.length, e.text])).toEqual([
      [
        "act",
        2,
        'Let me look up ada and the apples.\n<tool_call>{"name":"get_user","arguments":{"name":"ada"}}</tool_call>\n<tool_call>{"name":"get_item","arguments":{"name":"apple"}}</tool_call>',
      ],
      ["rehearse", 2, '<execution_result>{"balance":10}</execution_result>'],
      ["rehearse", 2, '<execution_result>{"result":"apple: 2 coins each, 0 in stock"}</execution_result>'],
      [
        "act",
        5,
        '<think>Out of stock, but the user asked to try.</think>\n<tool_call>{"name":"buy","arguments":{"user":"ada","item":"apple","qty":2}}</tool_call>',
      ],
      ["rehearse", 5, '<execution_result>{"error":{"code":"EXECUTION_ERROR","message":"out of stock"}}</execution_result>'],
      ["act", 7, "Apples are out of stock, so nothing was bought. Ada's balance is 10 coins."],
    ]);
    // Both parallel calls are rehearsed from the same history and calling turn.
    expect(examples[1]).toMatchObject({ latestAct: reference[2], call: { id: "c1", name: "get_user" } });
    expect(examples[2]).toMatchObject({ latestAct: reference[2], call: { id: "c2", name: "get_item", arguments: { name: "apple" } } });
    expect(examples[2]).toMatchObject({ result: { status: "ok", content: { result: "apple: 2 coins each, 0 in stock" } } });
  });
});

describe("the tokenizer corpus", () => {
  it("holds the Rehearse instructions, each distinct tool spec once, every message text and every gold target", async () => {
    const train = await loadCm2Split(TRAIN);
    const corpus = [...recordCorpus(train, {})];
    const specs = corpus.filter((text) => text.startsWith('{"type":"function"'));
    expect(specs.map((s) => (JSON.parse(s) as { function: { name: string } }).function.name)).toEqual(["get_forecast", "get_user", "get_item", "buy"]);
    expect(corpus[0]).toBe(DEFAULT_REHEARSE_INSTRUCTIONS);
    const texts = train.tasks.flatMap((t) => t.reference!).flatMap((m: Message) => [m.role === "assistant" ? m.reasoning_content : undefined, m.content]);
    for (const text of texts) if (text) expect(corpus).toContain(text);
    for (const examples of train.gold.values()) for (const example of examples) expect(corpus).toContain(example.text);
    expect(corpus).not.toContain("How warm is it in Berlin?"); // held-out dialogues stay out
  });

  it("uses a replaced instruction text, and none when the prompt has no instructions", async () => {
    const train = await loadCm2Split(TRAIN);
    expect([...recordCorpus(train, { sections: { instructions: "Be the tool." } })][0]).toBe("Be the tool.");
    expect([...recordCorpus(train, { sections: { instructions: false } })]).not.toContain(DEFAULT_REHEARSE_INSTRUCTIONS);
  });
});

describe("malformed CM2 files", () => {
  it("name the file and line of a line that is not JSON", async () => {
    const path = await write("truncated.jsonl", `${await readFile(TRAIN, "utf8")}{"uuid": "cut-off", "messages": [\n`);
    await expect(loadCm2Split(path)).rejects.toThrow(new RegExp(`^${path}:3: not JSON`));
  });

  it("name the file, line, record and field of a record that breaks the CM2 schema", async () => {
    const text = await editedLines(2, (record) => {
      (record.checklists as { weight: number }[][][])[0]![0]![2]!.weight = 0.3;
    });
    const error = await loadCm2Split(await write("weights.jsonl", text)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordError);
    expect((error as Error).message).toBe(`${join(dir, "weights.jsonl")}:2 (record shop-002): checklists[0][0]: weights sum to 0.8999999999999999, expected 1`);
  });

  it("list every record whose reference cannot be a gold target, by line and field", async () => {
    const first = await editedLines(1, (record) => {
      messagesOf(record)[2]!.tool_calls![0]!.function.arguments = '["Paris"]';
    });
    const lines = first.trimEnd().split("\n");
    const shop = JSON.parse(lines[1]!) as Record<string, unknown>;
    messagesOf(shop)[5]!.tool_calls![0]!.function.name = "sell";
    messagesOf(shop).splice(3, 1); // c1 is never answered
    const path = await write("gold.jsonl", `${lines[0]!}\n\n${JSON.stringify(shop)}\n`);
    const error = (await loadCm2Split(path).catch((e: unknown) => e)) as DataError;
    expect(error).toBeInstanceOf(DataError);
    expect(error.errors.map((e) => e.message)).toEqual([
      `${path}:1 (record weather-001): messages[2].tool_calls[0].function.arguments: a JSON array, expected an object`,
      `${path}:3 (record shop-002): messages[2].tool_calls[0]: call "c1" gets no tool message; ` +
        'messages[4].tool_calls[0].function.name: "sell" is not one of the record\'s tools (get_user, get_item, buy)',
    ]);
    expect(error.message.split("\n")[0]).toBe("2 bad records:");
  });

  it("point at the line of each record in a JSON array, and refuse duplicate uuids", async () => {
    const [record] = JSON.parse(await readFile(TEST, "utf8")) as Record<string, unknown>[];
    const bad = structuredClone(record!);
    messagesOf(bad)[4]!.content = 'Sure <tool_call>{"name":"get_forecast","arguments":{"city":"Rome"}}</tool_call>';
    const path = await write("array.json", JSON.stringify([record, bad], null, 2));
    const error = (await loadCm2Split(path).catch((e: unknown) => e)) as DataError;
    const secondLine = (await readFile(path, "utf8")).split("\n").findIndex((line, i) => i > 2 && line.includes('"uuid"')) + 1;
    expect(error.errors).toHaveLength(1);
    expect(error.message).toBe(
      `${path}:${secondLine} (record weather-003): uuid: duplicate uuid "weather-003" (also at line 3); messages[4].content: ` +
        "the Act parser reads 1 tool call(s) where the message has a reply: <tool_call> markup in the content must be given as tool_calls",
    );
  });

  it("refuse an empty file and a missing one, naming them", async () => {
    await expect(loadCm2Split(await write("empty.jsonl", "\n\n"))).rejects.toThrow(`${join(dir, "empty.jsonl")}: no CM2 records in the file`);
    await expect(loadCm2Split(join(dir, "absent.jsonl"))).rejects.toThrow(`${join(dir, "absent.jsonl")}: cannot read CM2 records (ENOENT)`);
  });
});
