/** Version `v` of a whole file: large enough that a write of it is not one page. */
export function fileContents(version: number): string {
  return `${JSON.stringify({ version, pad: String(version).repeat(1 << 18) })}\n`;
}

/** The two files of checkpoint `step`: weights whose every byte is the step, and its state. */
export function checkpointFiles(step: number): [{ name: string; data: Uint8Array }, { name: string; data: string }] {
  return [
    { name: "model.bin", data: new Uint8Array(1 << 18).fill(step) },
    { name: "state.json", data: `${JSON.stringify({ step })}\n` },
  ];
}

/** The text of record `n`, long enough that its line spans more than a few bytes. */
export function lineOf(n: number): string {
  return `record ${n} `.repeat(50);
}
