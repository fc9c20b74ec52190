import { InputError } from "@envace/protocol";

/** Hard caps on real calls: per training step and per run (null: no cap). */
export interface BudgetLimits {
  perStep: number | null;
  perRun: number | null;
}

/**
 * The real-call budget of grounding. A grounding costs the calls of its replayed prefix plus the
 * call itself, known before it runs; `admit` reserves that cost for the step's selected calls in
 * priority order and leaves out each that no longer fits, so neither cap can be passed whatever
 * the environment answers. `spend` books what was really used (at most what was reserved: a
 * replay that diverges stops early).
 */
export class GroundingBudget {
  readonly limits: BudgetLimits;
  #usedInRun: number;

  /** `usedInRun`: real calls grounding made in earlier steps of this run (on resume, from its log). */
  constructor(limits: BudgetLimits, usedInRun = 0) {
    for (const [key, value] of Object.entries(limits)) {
      if (value !== null && !(Number.isInteger(value) && value >= 0)) throw new InputError(`grounding budget ${key}: ${value} is not a whole number ≥ 0`);
    }
    this.limits = limits;
    this.#usedInRun = usedInRun;
  }

  get usedInRun(): number {
    return this.#usedInRun;
  }

  /** Calls this step may still make: the smaller of the step's cap and what the run has left. */
  stepAllowance(): number {
    const run = this.limits.perRun === null ? Number.POSITIVE_INFINITY : Math.max(0, this.limits.perRun - this.#usedInRun);
    return Math.min(this.limits.perStep ?? Number.POSITIVE_INFINITY, run);
  }

  /** Which of `costs` (in priority order) fit this step, as a mask, and how many calls they reserve. */
  admit(costs: readonly number[]): { admitted: boolean[]; reserved: number } {
    let left = this.stepAllowance();
    let reserved = 0;
    const admitted = costs.map((cost) => {
      if (cost > left) return false;
      left -= cost;
      reserved += cost;
      return true;
    });
    return { admitted, reserved };
  }

  spend(calls: number): void {
    this.#usedInRun += calls;
  }
}
