import fc from "fast-check";
import type { Task } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import type { AttemptDigest, PredictedFailure } from "./attempt.js";
import { buildMemory, earlierAttemptsNote, withNote } from "./memory.js";
import type { AssessedAttempt, Summary } from "./summarize.js";
import { charTokenizer, task } from "./testing/bank.js";
import { tokenCounter, type TokenCounter } from "./tokens.js";

const chars = tokenCounter(charTokenizer);
const estimate = tokenCounter();

const failure = (name: string, args: Record<string, string | number>, code: string, write: boolean, message = "why"): PredictedFailure => ({
  name,
  arguments: args,
  code,
  message,
  write,
  source: "model",
  failedIn: [0],
  succeededIn: [],
});

const buy = failure("buy", { item: "rabo", qty: 2 }, "LOW_BALANCE", true, "balance 4 < 6");
const look = failure("item", { name: "mivo" }, "NOT_FOUND", false, "no item mivo");
const summary: Summary = {
  plan: "Look up ada and rabo, then buy only if the balance covers it.",
  lessons: ["Check stock first.", "Reply with the order id."],
  source: "policy",
};

const FULL = [
  "## Rehearsal memory",
  "You rehearsed this task privately before acting. These are your own predictions, not real results.",
  "Predicted to fail:",
  '- buy {"item":"rabo","qty":2}: LOW_BALANCE (balance 4 < 6)',
  '- item {"name":"mivo"}: NOT_FOUND (no item mivo)',
  "Plan: Look up ada and rabo, then buy only if the balance covers it.",
  "Lessons:",
  "- Check stock first.",
  "- Reply with the order id.",
].join("\n");

const memoryAt = (budget: number | null, counter: TokenCounter = chars) =>
  buildMemory({ summary, predictedFailures: [look, buy], attempts: 1, budget, counter });

describe("rehearsal memory: conclusions first, within the token budget", () => {
  it("renders everything, writes first, when there is no budget", () => {
    const memory = memoryAt(null);
    expect(memory.text).toBe(FULL);
    expect(memory).toMatchObject({ tokens: FULL.length, budget: null, exactTokens: true, compressed: false, shownFailures: 2 });
    expect(memory.predictedFailures).toEqual([look, buy]);
  });

  it("drops lessons first, last one first", () => {
    const withoutLast = FULL.slice(0, FULL.lastIndexOf("\n"));
    expect(memoryAt(withoutLast.length).text).toBe(withoutLast);
    expect(memoryAt(withoutLast.length).lessons).toEqual(["Check stock first."]);
    expect(memoryAt(FULL.length - 1).compressed).toBe(true);
  });

  const SHORT = [
    "## Rehearsal memory (your predictions, not real)",
    "Predicted to fail:",
    '- buy {"item":"rabo","qty":2}: LOW_BALANCE',
    '- item {"name":"mivo"}: NOT_FOUND',
    "Plan: Look up ada and rabo, then buy only if the balance covers it.",
  ].join("\n");

  it("then shortens the header and the failure lines, then drops read-only failures", () => {
    expect(memoryAt(SHORT.length).text).toBe(SHORT);
    const noRead = SHORT.replace('\n- item {"name":"mivo"}: NOT_FOUND', "");
    expect(memoryAt(noRead.length).text).toBe(noRead);
    expect(memoryAt(noRead.length).shownFailures).toBe(1);
  });

  it("then cuts the plan short, then drops it, and keeps the predicted write failure longest", () => {
    const head = '## Rehearsal memory (your predictions, not real)\nPredicted to fail:\n- buy {"item":"rabo","qty":2}: LOW_BALANCE';
    const cut = memoryAt(head.length + 30);
    expect(cut.text).toBe(`${head}\nPlan: Look up ada and rabo,…`);
    expect(cut.plan).toBe("Look up ada and rabo,…");
    expect(memoryAt(head.length).text).toBe(head);
    expect(memoryAt(head.length).plan).toBe("");
    // With nothing left under it, the header goes too.
    expect(memoryAt(head.length - 1)).toMatchObject({ text: "", tokens: 0, shownFailures: 0, compressed: true });
    expect(memoryAt(10)).toMatchObject({ text: "", tokens: 0, shownFailures: 0, compressed: true });
  });

  it("is empty when there is nothing to remember", () => {
    const nothing = buildMemory({ summary: { plan: "", lessons: [], source: "fallback" }, predictedFailures: [], attempts: 2, budget: null, counter: chars });
    expect(nothing).toMatchObject({ text: "", tokens: 0, compressed: false });
  });

  it("never exceeds the budget and keeps every write failure while they fit (property)", () => {
    const text = fc.string({ maxLength: 60 });
    const failures = fc.array(
      fc.record({
        name: fc.constantFrom("buy", "pay", "item", "user"),
        qty: fc.integer({ min: 1, max: 99 }),
        code: fc.constantFrom("LOW_BALANCE", "NOT_FOUND"),
        write: fc.boolean(),
        message: text,
      }),
      { maxLength: 5 },
    );
    fc.assert(
      fc.property(failures, text, fc.array(text, { maxLength: 4 }), fc.integer({ min: 0, max: 600 }), fc.boolean(), (fs, plan, lessons, budget, exact) => {
        const counter = exact ? chars : estimate;
        const predicted = fs.map((f) => failure(f.name, { qty: f.qty }, f.code, f.write, f.message));
        const memory = buildMemory({ summary: { plan, lessons, source: "policy" }, predictedFailures: predicted, attempts: 2, budget, counter });
        expect(memory.tokens).toBeLessThanOrEqual(budget);
        expect(memory.tokens).toBe(memory.text.length === 0 ? 0 : counter.count(memory.text));
        const writes = predicted.filter((f) => f.write);
        const floor = buildMemory({ summary: { plan: "", lessons: [], source: "policy" }, predictedFailures: writes, attempts: 2, budget: null, counter });
        const floorShort = floor.text
          .replace(/^## Rehearsal memory\n.*$/m, "## Rehearsal memory (your predictions, not real)")
          .replace(/ \([^()]*\) \[/g, " [");
        if (writes.every((f) => f.message.length === 0 || !/[()[\]]/.test(f.message)) && counter.count(floorShort) <= budget) {
          expect(memory.shownFailures).toBeGreaterThanOrEqual(writes.length);
        }
      }),
      { numRuns: 300 },
    );
  });
});

const digest = (index: number, code: string | null): AttemptDigest => ({
  index,
  events: [
    {
      kind: "call",
      name: "transfer",
      arguments: { to: "Bob", amount: 500 },
      result:
        code === null
          ? { status: "ok", callId: "c", name: "transfer", content: { ok: true, note: "x".repeat(100) } }
          : { status: "error", callId: "c", name: "transfer", error: { code, message: "no" } },
      source: "model",
    },
    { kind: "reply", text: "Done." },
  ],
  termination: { reason: "agent_stop" },
});
const attempts: AssessedAttempt[] = [0, 1, 2].map((i) => ({
  digest: digest(i, i === 1 ? "INSUFFICIENT_FUNDS" : null),
  assessment: { reachedGoal: i !== 1, wentWrong: i === 1 ? "too much" : "", revision: i === 1 ? "check first" : "", source: "policy" },
}));

describe("what sequential attempts are shown of the earlier ones", () => {
  it("shows each earlier attempt in full with its assessment when there is room", () => {
    const note = earlierAttemptsNote(attempts.slice(0, 2), null, chars);
    expect(note).toContain('### Attempt 1 (predicted, not real)\n1. transfer {"amount":500,"to":"Bob"} → {"ok":true,"note":"xxx');
    expect(note).toContain(
      '### Attempt 2 (predicted, not real)\n1. transfer {"amount":500,"to":"Bob"} → error INSUFFICIENT_FUNDS: no\n2. reply: Done.\nended: the agent finished\nAssessment: goal reached: no; went wrong: too much; revision: check first',
    );
  });

  it("shrinks to the budget: shorter results, then assessments only, then the latest attempts only", () => {
    const full = earlierAttemptsNote(attempts, null, chars);
    const shortResults = earlierAttemptsNote(attempts, full.length - 1, chars);
    // Results are cut to 60 characters: 59 of the JSON and the mark.
    expect(shortResults).toContain(`→ {"ok":true,"note":"${"x".repeat(40)}…\n`);
    const brief = earlierAttemptsNote(attempts, 260, chars);
    expect(brief).toBe(
      [
        "## Your earlier private rehearsals of this task (predicted, not real)",
        "### Attempt 1",
        "Assessment: goal reached: yes",
        "### Attempt 2",
        "Assessment: goal reached: no; went wrong: too much; revision: check first",
        "### Attempt 3",
        "Assessment: goal reached: yes",
      ].join("\n"),
    );
    expect(earlierAttemptsNote(attempts, 200, chars)).not.toContain("### Attempt 1");
    for (const budget of [0, 20, 90, 150, 200, 400, 900]) expect(earlierAttemptsNote(attempts, budget, chars).length).toBeLessThanOrEqual(budget);
  });
});

describe("withNote", () => {
  it("appends to the system message, or adds one in front", () => {
    expect(withNote(task, "NOTE").messages[0]).toEqual({ role: "system", content: `${task.messages[0]!.content}\n\nNOTE` });
    const bare: Task = { ...task, messages: task.messages.slice(1) };
    expect(withNote(bare, "NOTE").messages).toEqual([{ role: "system", content: "NOTE" }, ...bare.messages]);
  });

  it("or appends to the last user message, adding no message, and leaves the task alone for an empty note", () => {
    const placed = withNote(task, "NOTE", "user");
    expect(placed.messages).toHaveLength(task.messages.length);
    expect(placed.messages[1]).toEqual({ role: "user", content: "Send 500 to Bob.\n\nNOTE" });
    expect(withNote(task, "")).toBe(task);
    expect(task.messages[1]).toEqual({ role: "user", content: "Send 500 to Bob." });
  });
});
