import type { GenerateRequest, Generation, Message, Policy, Role, ToolSpec } from "@envace/protocol";
import { canContinue, type TokenContinuation } from "@envace/trajectory";
import { countMessages, type TokenCounter } from "./tokens.js";

/** Token use of one role. */
export interface RoleUsage {
  generations: number;
  promptTokens: number;
  outputTokens: number;
  /** Generations whose counts were estimated because the policy returned no token ids. */
  estimated: number;
}

/** Token use per role. */
export type Usage = Partial<Record<Role, RoleUsage>>;

/** Sum of usages, role by role. */
export function addUsage(...usages: readonly Usage[]): Usage {
  const total: Usage = {};
  for (const usage of usages) {
    for (const [role, u] of Object.entries(usage) as [Role, RoleUsage][]) {
      const t = (total[role] ??= { generations: 0, promptTokens: 0, outputTokens: 0, estimated: 0 });
      t.generations += u.generations;
      t.promptTokens += u.promptTokens;
      t.outputTokens += u.outputTokens;
      t.estimated += u.estimated;
    }
  }
  return total;
}

/** Prompt plus output tokens over every role. */
export function totalTokens(usage: Usage): number {
  return Object.values(usage).reduce((sum, u) => sum + u.promptTokens + u.outputTokens, 0);
}

/**
 * A policy that counts the tokens of every generation it forwards, per role: the ids the policy
 * returned, or, for policies that return none (chat servers without token data), the counter's
 * count of the flattened prompt and of the output text. Token continuation is forwarded, so
 * metering never changes what a token-level policy samples.
 */
export class MeteredPolicy implements Policy {
  readonly id: string;
  readonly inner: Policy;
  readonly #counter: TokenCounter;
  #usage: Usage = {};

  constructor(inner: Policy, counter: TokenCounter) {
    this.id = inner.id;
    this.inner = inner;
    this.#counter = counter;
  }

  /** A metered `inner` that is token-continuable exactly when `inner` is. */
  static wrap(inner: Policy, counter: TokenCounter): MeteredPolicy {
    const metered = new MeteredPolicy(inner, counter);
    if (canContinue(inner)) {
      const continuable: TokenContinuation = {
        continuePrompt: (previous: Generation, appended: readonly Message[], tools: readonly ToolSpec[]) => inner.continuePrompt(previous, appended, tools),
      };
      Object.assign(metered, continuable);
    }
    return metered;
  }

  get usage(): Usage {
    return addUsage(this.#usage);
  }

  async generate(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
    const generation = await this.inner.generate(request, signal);
    const u = (this.#usage[request.role] ??= { generations: 0, promptTokens: 0, outputTokens: 0, estimated: 0 });
    u.generations += 1;
    const hasIds = generation.promptTokens.length > 0 || generation.outputTokens.length > 0;
    u.promptTokens += hasIds ? generation.promptTokens.length : countMessages(this.#counter, request.messages);
    u.outputTokens += hasIds ? generation.outputTokens.length : this.#counter.count(generation.text);
    if (!hasIds) u.estimated += 1;
    return generation;
  }
}
