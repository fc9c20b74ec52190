import { reply } from "@envace/scripted-server";
import { MAX_SCHEMA_DEPTH } from "@envace/trajectory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_DEPTH } from "./request.js";
import { MODEL, postRaw, startHarness, type Harness } from "./testing/harness.js";

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({ script: () => reply.text("ok") });
});
afterAll(async () => {
  await harness.close();
});

/** A schema of `levels` objects, each the `items` of the one around it, as JSON text (built as text: JSON.stringify itself recurses). */
const nestedSchema = (levels: number): string => `${'{"type":"array","items":'.repeat(levels - 1)}{"type":"string"}${"}".repeat(levels - 1)}`;
const withTool = (schema: string, extra = ""): string =>
  `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]${extra}}`;

describe("deeply nested requests are refused where the request is read", () => {
  it.each([
    ["a tool schema nested 10^5 deep", withTool(nestedSchema(100_000)), "tools[0].function.parameters", `nested deeper than ${MAX_BODY_DEPTH} levels`],
    [
      "the same with rehearsal on",
      withTool(nestedSchema(100_000), ',"envace":{"rehearsal":"parallel:1"}'),
      "tools[0].function.parameters",
      `nested deeper than ${MAX_BODY_DEPTH} levels`,
    ],
    ["the same streamed", withTool(nestedSchema(100_000), ',"stream":true'), "tools[0].function.parameters", `nested deeper than ${MAX_BODY_DEPTH} levels`],
    [
      "content nested 10^5 deep",
      `{"model":"${MODEL}","messages":[{"role":"user","content":${"[".repeat(100_000)}${"]".repeat(100_000)}}]}`,
      "messages[0].content[0]",
      `nested deeper than ${MAX_BODY_DEPTH} levels`,
    ],
    [
      "a tool schema within the body's limit but past the schema limit",
      withTool(nestedSchema(MAX_SCHEMA_DEPTH + 1)),
      "tools[0].function.parameters",
      `nested deeper than ${MAX_SCHEMA_DEPTH} levels`,
    ],
  ])("%s → 400 naming the field and the limit, and nothing reaches the model", async (_name, body, param, limit) => {
    const before = harness.upstream.requests.length;
    const { status, body: answer } = await postRaw(harness.server, body);
    expect(status).toBe(400);
    expect(answer.error).toMatchObject({ type: "invalid_request_error", param, code: "nesting_too_deep" });
    expect(answer.error!.message).toContain(limit);
    expect(harness.upstream.requests.length).toBe(before);
  });

  it("a tool schema nested exactly to the limit is served, and no request above counted as an upstream failure", async () => {
    const before = harness.upstream.scripted.length;
    const { status } = await postRaw(harness.server, withTool(nestedSchema(MAX_SCHEMA_DEPTH)));
    expect(status).toBe(200);
    expect(harness.upstream.scripted.length).toBe(before + 1);
    const metrics = await (await fetch(`${harness.server.url}/metrics`)).text();
    expect(metrics).not.toContain("envace_server_upstream_errors_total{");
    expect(metrics).toContain('envace_server_requests_total{route="/v1/chat/completions",status="400"} 5');
  });
});
