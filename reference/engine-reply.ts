// Stryker disable all: [not-api] banner
// How a stream is served when the engine model is on: one SSE content chunk per token
// (engine-runtime.ts cuts and counts them), each released as the model produces its
// token, instead of the fixed delays.
import type { EngineJob } from './engine-model.ts';
import { SseWriter, type StreamStep } from './sse-writer.ts';
import { untilAborted } from './latency.ts';
import type { RequestContext } from './request-context.ts';

/** Streams the planned steps, each content chunk once its token exists; the role chunk goes with the first. */
export async function playEngineStream(ctx: RequestContext, steps: StreamStep[], job: EngineJob, choices: number): Promise<void> {
  const writer = new SseWriter(ctx);
  writer.start();
  let sent = 0;
  for (const step of steps) {
    if (ctx.signal.aborted) return;
    if (step.kind === 'hang') {
      await untilAborted(ctx.signal);
      return;
    }
    // Data step s: role chunks (s < choices) with token 1, then one round of content chunks per token.
    const need = Math.min(job.total, Math.max(1, Math.floor(sent / Math.max(1, choices))));
    if (!(await job.until(need))) return;
    await writer.send(step.payload);
    sent++;
  }
  await writer.end();
}

/** Waits for the whole generation (a non-stream reply); false when the request was aborted first. */
export function engineDone(job: EngineJob): Promise<boolean> {
  return job.until(job.total);
}
