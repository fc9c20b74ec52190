/**
 * Named points between the steps of a durable write (after the data, after the fsync, after the
 * rename). Nothing listens in a normal process: a fault-injection test installs a listener that
 * kills the process at one point, to check what a crash there leaves behind.
 */
let listener: ((point: string) => void) | undefined;

/** Install (or with `undefined`, remove) the one listener told of every crash point passed. */
export function onCrashPoint(next: ((point: string) => void) | undefined): void {
  listener = next;
}

export function crashPoint(point: string): void {
  listener?.(point);
}
