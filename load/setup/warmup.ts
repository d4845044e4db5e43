// A few requests before the measured run: connections, the target's code paths and
// our own JIT warm up, so the first second of the run does not carry cold-start
// latency. Their outcomes are not recorded. A target that answers none of them at
// the transport level is unreachable: the run stops there (exit 2) instead of
// producing a report full of refused connections.
import { requestOnce } from '../scenarios/drive.ts';
import type { ScenarioContext } from '../scenarios/context.ts';

export interface WarmUpResult { sent: number; answered: number; firstFailure?: string }

export async function warmUp(ctx: ScenarioContext, stream: boolean, n: number): Promise<WarmUpResult> {
  let answered = 0;
  let sent = 0;
  let firstFailure: string | undefined;
  const spec = { stream, key: ctx.target.keys.main, keyLabel: 'warmup', brainShare: 0 };
  const batch = Math.min(5, n);
  while (sent < n && !ctx.stop.stopped) {
    const size = Math.min(batch, n - sent);
    const outs = await Promise.all(Array.from({ length: size }, (_, i) => requestOnce(ctx, spec, 1_000_000 + sent + i)));
    sent += size;
    for (const o of outs) {
      if (o.status !== undefined) answered++;
      else firstFailure ??= `${o.failure}: ${o.failureDetail ?? ''}`;
    }
    if (answered === 0 && sent >= batch) break;
  }
  return { sent, answered, firstFailure };
}
