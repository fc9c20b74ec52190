import type { Datum } from "@envace/training";

/** One rollout of a test batch: its prompt and output tokens, the row's advantage and the sampler's log-probabilities of the output. */
export interface RolloutRow {
  prompt: number[];
  output: number[];
  advantage: number;
  sampler: number[];
}

/** A rollout as a datum: prompt positions (mask 0, no advantage), then output positions with the row's advantage. */
export function rolloutDatum({ prompt, output, advantage, sampler }: RolloutRow): Datum {
  const full = [...prompt, ...output];
  const observed = prompt.length - 1;
  return {
    tokens: full.slice(0, -1),
    targetTokens: full.slice(1),
    logprobs: [...Array<number>(observed).fill(0), ...sampler],
    advantages: [...Array<number>(observed).fill(0), ...output.map(() => advantage)],
    mask: [...Array<number>(observed).fill(0), ...output.map(() => 1)],
  };
}
