import { describe, expect, it } from "vitest";
import { histogram } from "./metrics.js";

describe("histogram", () => {
  it("bins values, clamping outliers into the end bins", () => {
    expect(histogram([-5, -0.5, 0, 0.1, 0.99, 1, 7], [-1, 0, 1, 2])).toEqual([2, 3, 2]);
  });
});
