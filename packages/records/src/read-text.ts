import { readFile } from "node:fs/promises";
import { InputError } from "@envace/protocol";

/** A text file's contents; a missing file is one `InputError` line naming it. */
export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new InputError(`${file}: no such file`, { cause: error });
    throw error;
  }
}
