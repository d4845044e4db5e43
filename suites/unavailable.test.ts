// UNAV: image and video generation do not exist (spec: Unavailable endpoints).
import { describe } from 'vitest';
import { clause, idPart } from '../harness/clause-test.ts';
import { brainId, config, keys, models, send } from '../harness/target.ts';

const IMAGE = ['/images/generations', '/images/edits', '/images/variations'];
const VIDEO = ['/videos', '/videos/generations'];
const body = { model: 'svc', prompt: 'a lighthouse at dusk', n: 1 };

describe('UNAV: endpoints that must not exist', () => {
  for (const [id, paths] of [['UNAV-1', IMAGE], ['UNAV-2', VIDEO]] as const) {
    for (const path of paths) {
      clause(`unavailable/not-served/${idPart(path)}`, id, `POST ${path} does not succeed`, async (t) => {
        const ex = await send({ method: 'POST', path, auth: keys.main, json: body });
        t.responded(ex);
        t.check(ex.status! < 200 || ex.status! >= 300, 'a status outside 2xx', `HTTP ${ex.status}`, ex);
      });
    }
  }
  for (const path of [...IMAGE, ...VIDEO, '/chatgate-no-such-path']) {
    clause(`unavailable/404/${idPart(path)}`, 'UNAV-3', `POST ${path} answers 404 with an error body`, async (t) => {
      t.errorBody(await send({ method: 'POST', path, auth: keys.main, json: body }), 404);
    });
  }
  // A real route's path with a segment after it, or under an unknown segment, is an
  // unknown path too: a router that matches a route anywhere in the path fails here.
  // Read when a test runs: collecting the tests (--list-tests) has no target.
  const base = () => new URL(config.targetUrl!).pathname.replace(/\/+$/, '');
  const nested: [string, string, () => string | undefined][] = [
    ['after-brain-route', 'POST /brains/{id}/chat/<unknown segment>', () => brainId && `/brains/${encodeURIComponent(brainId)}/chat/chatgate-no-such-path`],
    ['before-brain-route', 'POST /<unknown segment>/<base path>/brains/{id}/chat', () => brainId && `/chatgate-no-such-path${base()}/brains/${encodeURIComponent(brainId)}/chat`],
    ['before-model', 'POST /<unknown segment>/<base path>/models/<model>', () => `/chatgate-no-such-path${base()}/models/${encodeURIComponent(models[0]!)}`],
  ];
  for (const [label, what, pathOf] of nested) {
    clause(`unavailable/404/${label}`, 'UNAV-3', `${what}, a real route's path with an unknown segment, answers 404 with an error body`, async (t) => {
      const path = pathOf();
      if (!path) return t.skip('BRAIN_ID is not set: no brain route to probe around');
      t.errorBody(await send({ method: 'POST', path, auth: keys.main, json: body }), 404);
    });
  }
});
