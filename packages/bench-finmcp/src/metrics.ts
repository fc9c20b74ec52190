// FinMCP-Bench's tool-name metrics, as upstream computes them.

/** Multiset agreement of two tool-name lists: each gold name can be matched once per occurrence. */
export interface NameCounts {
  tp: number;
  fp: number;
  fn: number;
}

export interface PRF {
  precision: number;
  recall: number;
  f1: number;
}

/** One sample's score. */
export interface SampleScore extends NameCounts, PRF {
  /** The predicted names equal the gold names, in order. */
  exactMatch: boolean;
}

/** Scores over a set of samples. */
export interface Aggregate {
  samples: number;
  /** Means of the per-sample precision, recall and F1. */
  macro: PRF;
  /** From the summed TP, FP and FN. */
  micro: PRF & NameCounts;
  /** Share of samples whose ordered names match exactly. */
  exactMatch: number;
}

/** `numerator / denominator`, 0 when the denominator is 0 (upstream's rule, for P, R and F1 alike). */
export function safeRatio(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : numerator / denominator;
}

/** TP = Σ over names of min(gold count, predicted count); FP and FN are the rest of each side. */
export function nameCounts(gold: readonly string[], predicted: readonly string[]): NameCounts {
  const left = new Map<string, number>();
  for (const name of gold) left.set(name, (left.get(name) ?? 0) + 1);
  let tp = 0;
  for (const name of predicted) {
    const remaining = left.get(name) ?? 0;
    if (remaining > 0) {
      tp += 1;
      left.set(name, remaining - 1);
    }
  }
  return { tp, fp: predicted.length - tp, fn: gold.length - tp };
}

export function prf({ tp, fp, fn }: NameCounts): PRF {
  const precision = safeRatio(tp, tp + fp);
  const recall = safeRatio(tp, tp + fn);
  return { precision, recall, f1: safeRatio(2 * precision * recall, precision + recall) };
}

export function scoreSample(gold: readonly string[], predicted: readonly string[]): SampleScore {
  const counts = nameCounts(gold, predicted);
  return { ...counts, ...prf(counts), exactMatch: gold.length === predicted.length && gold.every((name, i) => name === predicted[i]) };
}

export function aggregate(scores: readonly SampleScore[]): Aggregate {
  const n = scores.length;
  const mean = (pick: (s: SampleScore) => number): number =>
    safeRatio(
      scores.reduce((sum, s) => sum + pick(s), 0),
      n,
    );
  const totals = scores.reduce((t, s) => ({ tp: t.tp + s.tp, fp: t.fp + s.fp, fn: t.fn + s.fn }), { tp: 0, fp: 0, fn: 0 });
  return {
    samples: n,
    macro: { precision: mean((s) => s.precision), recall: mean((s) => s.recall), f1: mean((s) => s.f1) },
    micro: { ...totals, ...prf(totals) },
    exactMatch: mean((s) => (s.exactMatch ? 1 : 0)),
  };
}

/** What a breakdown groups by. */
export interface ScoredSample {
  sceneryLevel1: string;
  diffLevel: string;
  task: string;
  score: SampleScore;
}

export interface FinMcpSummary extends Aggregate {
  /** Samples whose prediction was marked `error`: left out of every figure. */
  dropped: number;
  bySceneryLevel1: Record<string, Aggregate>;
  byDifficulty: Record<string, Aggregate>;
  byTask: Record<string, Aggregate>;
}

/** The overall scores and the breakdowns by scenery level 1, difficulty and task type. */
export function summarize(scored: readonly ScoredSample[], dropped: number): FinMcpSummary {
  const by = (key: (s: ScoredSample) => string): Record<string, Aggregate> => {
    const groups = new Map<string, SampleScore[]>();
    for (const s of scored) groups.set(key(s), [...(groups.get(key(s)) ?? []), s.score]);
    return Object.fromEntries([...groups.keys()].sort().map((name) => [name, aggregate(groups.get(name)!)]));
  };
  return {
    ...aggregate(scored.map((s) => s.score)),
    dropped,
    bySceneryLevel1: by((s) => s.sceneryLevel1),
    byDifficulty: by((s) => s.diffLevel),
    byTask: by((s) => s.task),
  };
}
