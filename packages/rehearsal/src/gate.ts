import type { GenerateRequest, Generation, JsonObject, Policy } from "@envace/protocol";
import { parseActOutput, type ActParserOptions } from "@envace/trajectory";
import { callKey, callText, type PredictedFailure } from "./attempt.js";

/** One intervention of the safe-write gate. */
export interface GateEvent {
  /** 1-based Act turn of the committed execution. */
  turn: number;
  /** The proposed calls that rehearsal predicted to fail, with the prediction shown. */
  flagged: { name: string; arguments: JsonObject; code: string; message: string }[];
  /** The proposal that was held back, and the one made after seeing the prediction. */
  proposed: string;
  revised: string;
  /** Whether the revised turn no longer makes any flagged call. */
  changed: boolean;
}

export interface SafeWriteGateOptions {
  /** Act parser settings of the committed execution, to read proposed calls the same way. */
  parser?: Omit<ActParserOptions, "tools" | "callId">;
  /** Gate only predicted failures of write tools (default), or every predicted failure. */
  writesOnly?: boolean;
  /** The note shown before the agent decides again. */
  note?: (flagged: GateEvent["flagged"]) => string;
}

/** The default note: the prediction, and that the call has not been made. */
export function defaultGateNote(flagged: GateEvent["flagged"]): string {
  const lines = flagged.map((f) => `- ${callText(f.name, f.arguments)}: ${f.code}${f.message.length > 0 ? ` (${f.message})` : ""}`);
  return [
    "Before this is carried out: in your private rehearsal of this task, this call failed:",
    ...lines,
    "It has not been made. Decide again: make a call that will work (for example, look up what is missing first) or tell the user why it cannot be done.",
  ].join("\n");
}

/**
 * Safe-write gating: a committed actor that, when it proposes a call the rehearsal predicted to
 * fail, is shown that prediction and asked once more before anything reaches the environment.
 * Whatever it answers the second time is what the committed execution gets (it may insist). Each
 * Act turn is re-prompted at most once; other roles pass through. The note is a user message added
 * to this one request only; the conversation itself is not changed.
 *
 * Calls match predictions exactly: same tool name and the same arguments in canonical JSON.
 */
export class SafeWriteGate implements Policy {
  readonly id: string;
  readonly events: GateEvent[] = [];
  readonly #inner: Policy;
  readonly #predictions = new Map<string, PredictedFailure>();
  readonly #options: SafeWriteGateOptions;
  #turn = 0;

  constructor(inner: Policy, failures: readonly PredictedFailure[], options: SafeWriteGateOptions = {}) {
    this.id = inner.id;
    this.#inner = inner;
    this.#options = options;
    const writesOnly = options.writesOnly ?? true;
    for (const failure of failures) {
      if (!writesOnly || failure.write) this.#predictions.set(callKey(failure.name, failure.arguments), failure);
    }
  }

  async generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
    const proposed = await this.#inner.generate(request, signal);
    if (request.role !== "act") return proposed;
    this.#turn += 1;
    if (this.#predictions.size === 0) return proposed;
    const flagged = this.#flag(proposed, request);
    if (flagged.length === 0) return proposed;

    const note = (this.#options.note ?? defaultGateNote)(flagged);
    const { promptTokens: _exact, ...rest } = request;
    const revised = await this.#inner.generate({ ...rest, messages: [...request.messages, { role: "user", content: note }] }, signal);
    this.events.push({
      turn: this.#turn,
      flagged,
      proposed: proposed.text,
      revised: revised.text,
      changed: this.#flag(revised, request).length === 0,
    });
    return revised;
  }

  #flag(generation: Generation, request: GenerateRequest): GateEvent["flagged"] {
    const parsed = parseActOutput(generation, { ...this.#options.parser, tools: request.tools });
    if (parsed.kind !== "tool_calls") return [];
    return parsed.calls.flatMap((call) => {
      const failure = this.#predictions.get(callKey(call.name, call.arguments));
      return failure === undefined ? [] : [{ name: call.name, arguments: call.arguments, code: failure.code, message: failure.message }];
    });
  }
}
