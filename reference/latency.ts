// Delays injected for load tests and slow variants. Every delay ends early when the
// request is aborted (client gone, server closing), so nothing outlives its socket.

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: [delay-0] delays
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  // Stryker disable next-line BlockStatement: [delay-0] delays
  return new Promise((resolve) => {
    // Stryker disable next-line BlockStatement: [delay-0] delays
    const done = () => {
      clearTimeout(timer);
      // Stryker disable next-line StringLiteral: [delay-0] delays
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    // Stryker disable next-line StringLiteral,ObjectLiteral,BooleanLiteral: [delay-0] delays
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Waits until the request is aborted: how a stalled or never-ending stream "hangs". */
export function untilAborted(signal: AbortSignal): Promise<void> {
  // Stryker disable next-line ConditionalExpression: [hang] EV-10
  if (signal.aborted) return Promise.resolve();
  // Stryker disable next-line ArrowFunction,StringLiteral,ObjectLiteral,BooleanLiteral: [hang] EV-10
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
