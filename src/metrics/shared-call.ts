// One call in flight at a time, shared: callers that ask while it runs get the same promise, and the next
// call after it settles starts a fresh one (a scrape never gets a reading older than its request).
export function sharedWhileRunning<T>(fn: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= fn().finally(() => {
      running = undefined;
    });
    return running;
  };
}
