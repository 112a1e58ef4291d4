/**
 * Waits for a condition the service reaches on its own (a background loop, a reply's after-work),
 * polling with a deadline. Not a sleep: it returns as soon as the condition holds.
 */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, deadlineMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
