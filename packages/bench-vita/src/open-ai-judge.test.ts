import { VerdictParseError } from "@envace/rewards";
import { reply, startScriptedServer } from "@envace/scripted-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAiJudge } from "./run.js";

describe("openAiJudge", () => {
  let server: Awaited<ReturnType<typeof startScriptedServer>>;
  beforeAll(async () => {
    server = await startScriptedServer({ script: [reply.text('{"rubrics": []}'), reply.toolCalls([{ name: "verdict", arguments: {} }])] });
  });
  afterAll(() => server.close());

  it("hands back the judge's text, and a reply without content is a VerdictParseError", async () => {
    const judge = openAiJudge(server.baseURL, "judge-model");
    await expect(judge({ system: "s", user: "u" })).resolves.toBe('{"rubrics": []}');
    const failure = judge({ system: "s", user: "u" });
    await expect(failure).rejects.toBeInstanceOf(VerdictParseError);
    await expect(failure).rejects.toThrow("the judge answered without content");
  });
});
