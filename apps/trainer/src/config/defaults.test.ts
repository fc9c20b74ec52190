// One source for the defaults: an empty config must resolve to exactly the embedded default,
// presets/default.yaml (what `envace train` runs without --config), key by key.
import { describe, expect, it } from "vitest";
import { presetPath } from "../commands/train.js";
import { loadConfig, parseConfig } from "./load.js";

/** Every leaf of a resolved config by its dotted key (arrays are leaves, compared whole). */
function leaves(value: unknown, prefix = ""): Map<string, string> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return new Map([[prefix, JSON.stringify(value)]]);
  return new Map(Object.entries(value).flatMap(([key, child]) => [...leaves(child, prefix === "" ? key : `${prefix}.${key}`)]));
}

/** One line per key whose value differs, or that only one side has. */
function differences(schema: unknown, preset: unknown): string[] {
  const a = leaves(schema);
  const b = leaves(preset);
  return [...new Set([...a.keys(), ...b.keys()])]
    .sort()
    .flatMap((key) => (a.get(key) === b.get(key) ? [] : [`${key}: schema default ${a.get(key) ?? "(none)"}, preset ${b.get(key) ?? "(none)"}`]));
}

describe("the schema's defaults", () => {
  it("are presets/default.yaml: an empty config resolves to the embedded default", () => {
    const diff = differences(parseConfig("", "empty.yaml"), loadConfig(presetPath("default")));
    expect(diff, `change schema.ts and presets/default.yaml together:\n${diff.join("\n")}`).toEqual([]);
  });

  it("are compared leaf by leaf, naming each key that differs", () => {
    const diff = differences(
      { seed: 0, trainer: { total_steps: 40 }, eval: { rehearsal: ["none"] } },
      { seed: 1, trainer: { total_steps: 40 }, eval: { rehearsal: ["none", "parallel:2"] }, init_from: "embedded:base" },
    );
    expect(diff).toEqual([
      'eval.rehearsal: schema default ["none"], preset ["none","parallel:2"]',
      'init_from: schema default (none), preset "embedded:base"',
      "seed: schema default 0, preset 1",
    ]);
  });
});
