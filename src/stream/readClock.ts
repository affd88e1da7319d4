/** The clock's reading, or undefined when it throws or is not a finite number (a string, a Date, NaN…). */
export function readClock(clock: () => number): number | undefined {
  try {
    const at: unknown = clock();
    return typeof at === 'number' && Number.isFinite(at) ? at : undefined;
  } catch {
    return undefined;
  }
}
