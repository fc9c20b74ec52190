import { readFileSync } from "node:fs";

/**
 * A small delivery task in upstream's format (`fixtures/delivery-task.json`): one store with one
 * product, the user's address, one day's weather. Other packages' tests read the file itself.
 */
export const DELIVERY_TASK_FILE = new URL("fixtures/delivery-task.json", import.meta.url);

/** The fixture task under the id `id`. */
export function deliveryTask(id = "T1"): Record<string, unknown> {
  return { ...(JSON.parse(readFileSync(DELIVERY_TASK_FILE, "utf8")) as Record<string, unknown>), id };
}
