// SVC-9 inside a k6 VU: a stream whose reply carries another request's canary, or the
// completion id of an earlier reply of this VU where its first replies showed distinct
// ids (a mock answering one fixed id is legal). The canary rule is the suite's and the
// Node harness's (lib/spec/rules/cross-talk.ts); a VU sees only its own replies, so ids
// repeated across VUs are the Node harness's to find.
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { canariesIn, foreignCanaries } from '../../../lib/spec/rules/cross-talk.ts';
import { logProblem, type Tags } from './chat.ts';
import { cutBody, MAX_WITNESSED, WITNESS_KEY, type Witness } from './witness.ts';

/** Replies that were another request's: 1 or 0 per 2xx stream (threshold count<1: SVC-9 is a MUST). */
export const crossTalk = new Counter('chatgate_cross_talk');

/** Replies whose ids teach whether the target gives each reply its own. */
const LEARN_IDS = 3;
/** Ids a VU remembers (bounded however long it runs). */
const ID_MEMORY = 1000;
const ids = new Set<string>();
const order: string[] = [];
/** Bodies of this VU's last replies by their id, for a repeated id's curl line (4 x 4 KB a VU at most, none once it carried its last witness). */
const BODY_MEMORY = 4;
const bodies = new Map<string, string>();
let witnessed = 0;
let learned = 0;
let distinct = true;

/** The canaries a request body carries: its own (the workload's, in its last user message) and those its history holds. */
function canariesOf(body: Record<string, unknown>): { own?: string; held: string[] } {
  const found = canariesIn(JSON.stringify(body.messages ?? ''));
  return { own: found[found.length - 1], held: found.slice(0, -1) };
}

/** Judges one 2xx stream's reply; returns what broke SVC-9, if anything. */
export function judgeCrossTalk(sent: Record<string, unknown>, content: string, id: string | undefined, tags: Tags): string | undefined {
  let seen: string | undefined;
  let witness: Partial<Witness> = {};
  let text: string | undefined;
  const body = () => (text ??= cutBody(JSON.stringify(sent)));
  const { own, held } = canariesOf(sent);
  const other = own ? foreignCanaries(own, content, held)[0] : undefined;
  if (own && other) {
    seen = `the reply carries another request's canary ${other}, not its own ${own}`;
    witness = { other_canary: other };
  }
  if (id !== undefined) {
    if (ids.has(id)) {
      if (learned < LEARN_IDS) distinct = false;
      else if (distinct && !seen) {
        seen = `the reply carries completion id ${id}, as an earlier reply of this VU did`;
        const earlier = bodies.get(id);
        witness = earlier ? { other_body: earlier } : {};
      }
    } else {
      ids.add(id);
      order.push(id);
      if (order.length > ID_MEMORY) ids.delete(order.shift()!);
    }
    if (learned < LEARN_IDS) learned++;
    if (witnessed < MAX_WITNESSED) {
      bodies.delete(id);
      bodies.set(id, body());
      if (bodies.size > BODY_MEMORY) bodies.delete(bodies.keys().next().value!);
    } else bodies.clear();
  }
  // The first findings' bodies ride on their point as metadata (`--out json` writes it; the merge builds the curl lines).
  const carry = seen !== undefined && witnessed < MAX_WITNESSED;
  if (carry) {
    witnessed++;
    exec.vu.metrics.metadata[WITNESS_KEY] = JSON.stringify({ why: seen, body: body(), ...witness });
  }
  crossTalk.add(seen ? 1 : 0, { ...tags, clause: 'SVC-9' });
  if (carry) delete exec.vu.metrics.metadata[WITNESS_KEY];
  if (seen) logProblem(`a reply was another request's (SVC-9): ${seen}`);
  return seen;
}
