import { describe, expect, it } from "vitest";
import { ConfigError } from "@envace/config";
import { parseConfig } from "./load.js";

describe("parseConfig", () => {
  it("fills every default from an empty file", () => {
    const config = parseConfig("", "empty.yaml");
    expect(config.mode).toBe("envace");
    expect(config.rollout.rollouts_per_task).toBe(8);
    expect(config.actor).toMatchObject({ clip_ratio_low: 0.2, clip_ratio_c: 3, kl_coef: 0, loss_agg_mode: "seq-mean-token-mean" });
    expect(config.model.type).toBe("tiny");
    expect(config.init_from).toBe("embedded:base");
  });

  it("starts a fresh model with init_from: null, and refuses a shipped tiny base for a Hugging Face model", () => {
    expect(parseConfig("init_from: null\n", "c.yaml").init_from).toBeUndefined();
    expect(parseConfig("init_from: runs/a/checkpoints/sft\n", "c.yaml").init_from).toBe("runs/a/checkpoints/sft");
    const hf = "model: { type: hf, path: m }\nbackend: { type: tinker, base_url: http://127.0.0.1:1/, base_model: m }\n";
    expect(() => parseConfig(hf, "c.yaml")).toThrow(
      "c.yaml: init_from: embedded:base holds the built-in tiny model; with model type hf use init_from: null or a checkpoint of that model",
    );
    expect(parseConfig(`${hf}init_from: null\n`, "c.yaml").init_from).toBeUndefined();
  });

  it("names the key and its line when a value has the wrong type", () => {
    const text = "mode: envace\nrollout:\n  tasks_per_step: 8\n  rollouts_per_task: four\n";
    expect(() => parseConfig(text, "run.yaml")).toThrow(ConfigError);
    expect(() => parseConfig(text, "run.yaml")).toThrow(/^run\.yaml:4: rollout\.rollouts_per_task: .*number/);
  });

  it("rejects misspelt keys instead of ignoring them", () => {
    expect(() => parseConfig("rollout:\n  rollout_per_task: 4\n", "run.yaml")).toThrow("run.yaml:2: rollout.rollout_per_task: unknown key");
  });

  it("checks combinations of mode and environment", () => {
    expect(() => parseConfig("mode: grpo\n", "c.yaml")).toThrow(/environment: mode grpo needs environment: simulator or real/);
    expect(() => parseConfig("mode: envace\nenvironment: real\n", "c.yaml")).toThrow(/c\.yaml:2: environment: mode envace rehearses/);
    expect(parseConfig("mode: grpo\nenvironment: simulator\n", "c.yaml").environment).toBe("simulator");
  });

  it("refuses at load a Tinker loss strategy that cannot express the actor's loss, naming both keys", () => {
    const tinker = (extra: string) =>
      `model: { type: hf, path: m }\nbackend:\n  type: tinker\n  base_url: http://127.0.0.1:1/\n  base_model: m\n${extra}init_from: null\n`;
    // Before, the default (native, with the default dual clip) loaded and failed at the first GRPO step.
    expect(parseConfig(tinker(""), "t.yaml").backend).toMatchObject({ loss_strategy: "surrogate" });
    expect(() => parseConfig(tinker("  loss_strategy: native\n"), "t.yaml")).toThrow(
      /^t\.yaml:6: backend\.loss_strategy: native Tinker losses cannot express actor\.clip_ratio_c/,
    );
    expect(() => parseConfig(tinker("  loss_strategy: native\nactor: { clip_ratio_c: null, kl_coef: 0.001 }\n"), "t.yaml")).toThrow(/actor\.kl_coef/);
    expect(parseConfig(tinker("  loss_strategy: native\nactor: { clip_ratio_c: null }\n"), "t.yaml").backend).toMatchObject({ loss_strategy: "native" });
  });

  it("refuses rollout settings under which the learner cannot score what the sampler drew", () => {
    expect(() => parseConfig("rollout: { top_p: 0.9 }\n", "r.yaml")).toThrow(
      /^r\.yaml:1: rollout\.top_p: training rollouts must sample the whole distribution/,
    );
    expect(() => parseConfig("rollout: { temperature: 0 }\n", "r.yaml")).toThrow(/rollout\.temperature/);
    expect(parseConfig("rollout: { temperature: 0.7 }\neval: { top_p: 0.9 }\n", "r.yaml").rollout.temperature).toBe(0.7);
    const tinker =
      "init_from: null\nmodel: { type: hf, path: m }\nbackend: { type: tinker, base_url: http://127.0.0.1:1/, base_model: m }\nrollout: { temperature: 0.7 }\n";
    expect(() => parseConfig(tinker, "t.yaml")).toThrow(/rollout\.temperature: a Tinker backend scores the model at temperature 1 only/);
    // Left out, the temperature is the evaluation's 0.6, or 1 where the backend scores at 1 only.
    expect(parseConfig("", "r.yaml").rollout.temperature).toBe(0.6);
    expect(parseConfig(tinker.replace("rollout: { temperature: 0.7 }\n", ""), "t.yaml").rollout.temperature).toBe(1);
  });

  it("refuses mini-batches that would split a step's task groups, naming both keys", () => {
    expect(() => parseConfig("rollout: { tasks_per_step: 8 }\nactor:\n  ppo_mini_batch_size: 3\n", "m.yaml")).toThrow(
      "m.yaml:3: actor.ppo_mini_batch_size: actor.ppo_mini_batch_size 3 must divide rollout.tasks_per_step 8, so every mini-batch holds whole groups",
    );
    expect(parseConfig("rollout: { tasks_per_step: 8 }\nactor: { ppo_mini_batch_size: 2, ppo_epochs: 2 }\n", "m.yaml").actor).toMatchObject({
      ppo_mini_batch_size: 2,
      ppo_epochs: 2,
    });
    expect(parseConfig("", "m.yaml").actor).toMatchObject({ ppo_mini_batch_size: null, ppo_epochs: 1 });
  });

  it("refuses at load what CM2 data cannot do: a real environment, a reward other than the checklist judge", () => {
    const cm2 = "data: { source: cm2, path: x.jsonl }\n";
    for (const type of ["consistent", "verifiable"]) {
      expect(() => parseConfig(`${cm2}reward: { type: ${type} }\n`, "c.yaml")).toThrow(
        `c.yaml:2: reward.type: reward type ${type} needs the built-in domain's outcome check; data source cm2 has none: use reward.type: checklist with a reward.judge`,
      );
    }
    // Left out, the reward is the default's (consistent): refused alike, naming the section's key.
    expect(() => parseConfig(cm2, "c.yaml")).toThrow(/^c\.yaml: reward\.type: reward type consistent needs/);
    const judged = `${cm2}reward: { type: checklist, judge: { base_url: "http://127.0.0.1:1/v1", model: j } }\n`;
    expect(() => parseConfig(`${judged}mode: grpo\nenvironment: real\n`, "c.yaml")).toThrow(
      "c.yaml:4: environment: environment: real: data source cm2 has no real environment (its records hold reference dialogues, not tools that run); use mode envace, or grpo with environment: simulator",
    );
    expect(() => parseConfig("data: { source: verl }\nreward: { type: checklist }\n", "c.yaml")).toThrow(
      /data\.path: data source verl needs a path\n.*reward\.judge: a checklist reward needs a judge/,
    );
    expect(parseConfig(judged, "c.yaml").reward).toMatchObject({ type: "checklist" });
    expect(parseConfig("reward: { type: consistent }\n", "c.yaml").reward.type).toBe("consistent");
  });

  it("refuses declined-write rows where there is no gold solver or no Rehearse row is trained, naming the key", () => {
    const judged = 'reward: { type: checklist, judge: { base_url: "http://127.0.0.1:1/v1", model: j } }\n';
    expect(() => parseConfig(`data: { source: cm2, path: x.jsonl }\n${judged}sft: { declined_writes: true }\n`, "d.yaml")).toThrow(
      "d.yaml:3: sft.declined_writes: sft.declined_writes needs the built-in domain's gold solver; data source cm2 has none",
    );
    expect(() => parseConfig("sft: { roles: [act], declined_writes: true }\n", "d.yaml")).toThrow(
      "d.yaml:1: sft.declined_writes: sft.declined_writes adds Rehearse rows; add rehearse to sft.roles (or sft.curriculum.roles)",
    );
    const staged = "sft:\n  roles: [act]\n  declined_writes: true\n  curriculum: { roles: [act, rehearse], epochs: 1, lr: 0.001 }\n";
    expect(parseConfig(staged, "d.yaml").sft.declined_writes).toBe(true);
    expect(parseConfig("", "d.yaml").sft.declined_writes).toBe(false);
  });

  it("refuses reflect rows and the compact reflect prompt outside the built-in domain, naming the key", () => {
    const judged = 'reward: { type: checklist, judge: { base_url: "http://127.0.0.1:1/v1", model: j } }\n';
    expect(() => parseConfig(`data: { source: cm2, path: x.jsonl }\n${judged}sft: { roles: [act, reflect] }\n`, "r.yaml")).toThrow(
      "r.yaml:3: sft.roles: reflect rows are judged by the built-in domain's outcome check; data source cm2 has none",
    );
    expect(() => parseConfig(`data: { source: cm2, path: x.jsonl }\n${judged}rollout: { reflect_prompt: compact }\n`, "r.yaml")).toThrow(
      "r.yaml:3: rollout.reflect_prompt: the compact reflect prompt is the built-in domain's; data source cm2 has none",
    );
    expect(parseConfig("sft: { roles: [act, rehearse, reflect] }\nrollout: { reflect_prompt: compact }\n", "r.yaml")).toMatchObject({
      sft: { roles: ["act", "rehearse", "reflect"] },
      rollout: { reflect_prompt: "compact" },
    });
    expect(parseConfig("", "r.yaml").rollout.reflect_prompt).toBe("default");
    expect(() => parseConfig("sft: { roles: [act, judge] }\n", "r.yaml")).toThrow(
      'r.yaml:1: sft.roles[1]: Invalid option: expected one of "act"|"rehearse"|"reflect"',
    );
  });

  it("refuses a separate Rehearse reward where no Rehearse row trains or baselines mix roles", () => {
    const message =
      "a separate Rehearse reward needs the built-in domain, a mode that trains the Rehearse role (envace, per-role) and algorithm.role_wise: true";
    expect(() => parseConfig("mode: grpo\nenvironment: real\nreward: { type: consistent, rehearse_type: verifiable }\n", "c.yaml")).toThrow(
      `c.yaml:3: reward.rehearse_type: ${message}`,
    );
    expect(() => parseConfig("algorithm: { role_wise: false }\nreward: { type: consistent, rehearse_type: verifiable }\n", "c.yaml")).toThrow(message);
    expect(parseConfig("reward: { type: consistent, rehearse_type: verifiable }\n", "c.yaml").reward.rehearse_type).toBe("verifiable");
  });

  it("gives Rehearse rows the verifiable reward by default only where they train role-wise on the consistent one", () => {
    const rehearse = (text: string) => parseConfig(text, "c.yaml").reward.rehearse_type;
    expect(rehearse("")).toBe("verifiable");
    expect(rehearse("mode: per-role\n")).toBe("verifiable");
    expect(rehearse("reward: { type: consistent, rehearse_type: consistent }\n")).toBe("consistent");
    expect(rehearse("mode: grpo\nenvironment: real\n")).toBeUndefined();
    expect(rehearse("algorithm: { role_wise: false }\n")).toBeUndefined();
    expect(rehearse("reward: { type: verifiable }\n")).toBeUndefined();
  });

  it("validates rehearsal settings", () => {
    expect(parseConfig('eval:\n  rehearsal: [none, "parallel:2", "sequential:3"]\n', "c.yaml").eval.rehearsal).toHaveLength(3);
    expect(() => parseConfig('eval:\n  rehearsal: ["parallel:0"]\n', "c.yaml")).toThrow(/eval\.rehearsal\[0\]: expected none, parallel:N or sequential:N/);
  });

  it("reports YAML syntax errors with their line", () => {
    expect(() => parseConfig("mode: envace\nrollout: [\n", "bad.yaml")).toThrow(/^bad\.yaml:\d+: /);
  });

  it("accepts JSON", () => {
    expect(parseConfig('{"mode": "per-role", "seed": 3}', "c.json")).toMatchObject({ mode: "per-role", seed: 3 });
  });
});
