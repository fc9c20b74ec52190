import { JudgeVerdict } from "@envace/rewards";
import { reply, type Reply } from "@envace/scripted-server";

/**
 * A scripted checklist judge's reply: a verdict with `answer`, valid against the judge's own
 * schema. The trainer reads only the answer, so every reasoning field the schema asks for (and
 * any it adds later) holds a placeholder.
 */
export function verdictReply(answer: boolean): Reply {
  const reasoning = Object.fromEntries(JudgeVerdict.keyof().options.flatMap((field) => (field === "answer" ? [] : [[field, "(scripted)"]])));
  return reply.text(JSON.stringify(JudgeVerdict.parse({ ...reasoning, answer })));
}
