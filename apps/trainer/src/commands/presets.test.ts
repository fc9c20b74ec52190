import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/load.js";
import { presetPath, presetsDirectory } from "./train.js";

describe("shipped presets", () => {
  const names = readdirSync(presetsDirectory())
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.replace(/\.yaml$/, ""));

  it("include the embedded default and the Tinker example", () => {
    expect(names).toEqual(expect.arrayContaining(["default", "qwen3-8b-tinker"]));
  });

  it.each(names)("%s is a valid config", (name) => {
    expect(() => loadConfig(join(presetsDirectory(), `${name}.yaml`))).not.toThrow();
  });

  it("the default trains the built-in tiny model in process, in envace mode", () => {
    const config = loadConfig(presetPath("default"));
    expect(config).toMatchObject({ mode: "envace", data: { source: "builtin" }, model: { type: "tiny" }, backend: { type: "in-process" } });
  });

  it("names a missing preset", () => {
    expect(() => presetPath("nope")).toThrow(/no preset "nope"/);
  });
});
