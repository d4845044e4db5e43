// UNAV: image and video generation do not exist (spec: Unavailable endpoints).
import { describe } from 'vitest';
import { clause, idPart } from '../harness/clause-test.ts';
import { keys, send } from '../harness/target.ts';

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
});
