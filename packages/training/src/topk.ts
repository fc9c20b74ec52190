/**
 * The `k` most likely tokens of one next-token distribution, as [token id, log-probability]
 * pairs best first (ties: the lower id first), from its logits. Log-probabilities are
 * z − logsumexp(z) in double precision. A `k` past the vocabulary gives the whole vocabulary.
 */
export function topkLogprobs(logits: ArrayLike<number>, k: number): [number, number][] {
  const V = logits.length;
  const count = Math.min(k, V);
  let max = -Infinity;
  for (let j = 0; j < V; j++) if (logits[j]! > max) max = logits[j]!;
  let total = 0;
  for (let j = 0; j < V; j++) total += Math.exp(logits[j]! - max);
  const lse = max + Math.log(total);
  const better = (a: number, b: number) => {
    const za = logits[a]!;
    const zb = logits[b]!;
    return za > zb || (za === zb && a < b);
  };
  let best: number[];
  if (count * 16 >= V) {
    best = Array.from({ length: V }, (_, j) => j)
      .sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
      .slice(0, count);
  } else {
    // Few of many: keep the best `count` sorted as the row is scanned; most tokens fail the first comparison.
    best = [];
    for (let j = 0; j < V; j++) {
      if (best.length === count && !better(j, best[count - 1]!)) continue;
      let at = best.length === count ? count - 1 : best.length;
      while (at > 0 && better(j, best[at - 1]!)) {
        best[at] = best[at - 1]!;
        at--;
      }
      best[at] = j;
    }
  }
  return best.map((j) => [j, logits[j]! - lse]);
}
