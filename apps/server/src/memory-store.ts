import { createHash } from "node:crypto";
import type { Message, ToolSpec } from "@envace/protocol";

/**
 * A least-recently-used map bounded both in entries and in bytes: reading an entry makes it the
 * most recent, and adding one evicts the least recent until both bounds hold. An entry larger
 * than the byte bound is not kept at all.
 */
export class LruStore<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #bytes = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes || this.maxEntries < 1) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

/**
 * The key of a conversation's rehearsal memory: a hash of who asked (the bearer token, so one
 * client never reads another's memory), the tools, and the conversation's opening: every message
 * before the first assistant turn. Every later request of the same conversation has the same
 * opening, so it finds the memory made for the first one.
 */
export function conversationKey(owner: string, tools: readonly ToolSpec[], messages: readonly Message[]): string {
  const first = messages.findIndex((m) => m.role === "assistant");
  const opening = first < 0 ? messages : messages.slice(0, first);
  const hash = createHash("sha256");
  hash.update(JSON.stringify([owner, tools, opening]));
  return hash.digest("hex");
}
