// The `--rehearsal` option of the evaluation commands, read once the same way by each.
import { RehearsalSettingText } from "@envace/rehearsal";
import { UsageError } from "../faults.js";

/** `--rehearsal`'s value in its canonical text form (`none`, `parallel:N`, `sequential:N`), or a usage error naming the option. */
export function rehearsalOption(text: string): string {
  const parsed = RehearsalSettingText.safeParse(text);
  if (!parsed.success) throw new UsageError(`--rehearsal: rehearsal setting ${JSON.stringify(text)}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}
