// A few requests before the measured run: connections, the target's code paths and
// our own JIT warm up, so the first second of the run does not carry cold-start
// latency. They are drawn from the run's workload (its lengths, its shared prefix, so
// a prefix cache is warm as it would be in service), from a copy, so the measured run
// sends what it would have sent without them. Their outcomes are not recorded. A target that answers none of them at
// the transport level is unreachable: the run stops there (exit 2) instead of
// producing a report full of refused connections.
import { sendOnce } from '../scenarios/drive.ts';
import { requestFactory } from '../engine/request-factory.ts';
import { Workload } from '../workload/workload.ts';
import type { ScenarioContext } from '../scenarios/context.ts';

export interface WarmUpResult { sent: number; answered: number; firstFailure?: string }

export async function warmUp(ctx: ScenarioContext, stream: boolean, n: number): Promise<WarmUpResult> {
  let answered = 0;
  let sent = 0;
  let firstFailure: string | undefined;
  const workload = ctx.workload && ctx.scenario !== 'rate-limit' ? new Workload(ctx.workload.spec) : undefined;
  const make = requestFactory({ stream, key: ctx.target.keys.main, keyLabel: 'warmup', brainShare: 0, target: ctx.target, options: ctx.options, workload });
  const batch = Math.min(5, n);
  while (sent < n && !ctx.stop.stopped) {
    const size = Math.min(batch, n - sent);
    const outs = await Promise.all(Array.from({ length: size }, (_, i) => sendOnce(ctx, make, 1_000_000 + sent + i)));
    sent += size;
    for (const o of outs) {
      if (o.status !== undefined) answered++;
      else firstFailure ??= `${o.failure}: ${o.failureDetail ?? ''}`;
    }
    if (answered === 0 && sent >= batch) break;
  }
  return { sent, answered, firstFailure };
}
