// replies-swapped-under-concurrency and replies-swapped-after-cancel: a connection or
// result pool that hands a finished reply to the wrong waiting request (OpenAI's March
// 2023 incident had this shape after cancellations). Two replies planned while at least
// SWAP_IN_FLIGHT requests are in flight trade their content, usage and id: each finished
// reply waits in the pool a little, and the next one to come while it waits takes its place.
// reply-of-previous-request: a reply cache keyed on the wrong thing, one request behind:
// each reply is the previous request's, whatever key sent it (no concurrency needed).
import type { RequestContext } from './request-context.ts';
import type { ReplyPlan } from './completion.ts';
import { sleep } from './latency.ts';
// Stryker disable all: [gate] replies-swapped-under-concurrency replies-swapped-after-cancel reply-of-previous-request SVC-9

/** Requests in flight from which replies are swapped. */
export const SWAP_IN_FLIGHT = 2;
/** How long a reply waits for a partner to swap with, ms. */
const PAIR_WAIT_MS = 100;

type Reply = Pick<ReplyPlan, 'id' | 'choices' | 'usage'>;
interface Pool { waiting?: { plan: ReplyPlan; done: () => void }; cancelled: boolean; previous?: Reply }
const pools = new WeakMap<object, Pool>();

function poolOf(ctx: RequestContext): Pool {
  let p = pools.get(ctx.state);
  if (!p) pools.set(ctx.state, (p = { cancelled: false }));
  return p;
}

/** Called with every planned reply; swaps it with another's when the defect is on. */
export async function crossTalk(ctx: RequestContext, plan: ReplyPlan): Promise<void> {
  if (ctx.defect('reply-of-previous-request')) {
    const pool = poolOf(ctx);
    const mine: Reply = { id: plan.id, choices: plan.choices, usage: plan.usage };
    if (pool.previous) Object.assign(plan, pool.previous);
    pool.previous = mine;
    return;
  }
  const always = ctx.defect('replies-swapped-under-concurrency');
  const afterCancel = ctx.defect('replies-swapped-after-cancel');
  if (!always && !afterCancel) return;
  const pool = poolOf(ctx);
  // A client that goes away before its reply ended arms the after-cancel pool.
  ctx.signal.addEventListener('abort', () => { pool.cancelled = true; }, { once: true });
  if (afterCancel && !pool.cancelled) return;
  const partner = pool.waiting;
  if (partner && ctx.state.counters.inFlight >= SWAP_IN_FLIGHT) {
    pool.waiting = undefined;
    const mine = { id: plan.id, choices: plan.choices, usage: plan.usage };
    Object.assign(plan, { id: partner.plan.id, choices: partner.plan.choices, usage: partner.plan.usage });
    Object.assign(partner.plan, mine);
    partner.done();
    return;
  }
  await new Promise<void>((resolve) => {
    const entry = { plan, done: resolve };
    pool.waiting = entry;
    void sleep(PAIR_WAIT_MS, ctx.signal).then(() => {
      if (pool.waiting === entry) pool.waiting = undefined;
      resolve();
    });
  });
}
