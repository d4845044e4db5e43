// MOD: GET /models (spec: Endpoints > GET /models; the list shape comes from the clients, MOD-1 is COMPAT).
import { describe } from 'vitest';
import { clause, type ClauseContext } from '../harness/clause-test.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { listModels, shared } from '../harness/target.ts';

const list = shared(() => listModels());

/** MOD-1 judges the shape of a list; no 200 answer means nothing to judge (SVC-2 and MOD-2 say why). */
async function answered(t: ClauseContext): Promise<Exchange> {
  const ex = await list();
  t.responded(ex);
  if (ex.status !== 200) t.inconclusive(`no model list to judge: HTTP ${ex.status} (see SVC-2, MOD-2)`);
  return ex;
}

describe('MOD: GET /models', () => {
  clause('models/list-shape', 'MOD-1', 'the list is {"object": "list", "data": [...]} with a string id per entry', async (t) => {
    const ex = await answered(t);
    t.schema('model-list', t.json(ex), ex);
  });

  clause('models/entry-object', 'MOD-1', 'each entry has object "model"', async (t) => {
    const ex = await answered(t);
    const data = (t.json(ex) as any)?.data;
    if (!Array.isArray(data)) t.fail('a data array', JSON.stringify(data)?.slice(0, 80) ?? 'none', ex);
    const odd = data.filter((m: any) => m?.object !== 'model').map((m: any) => `${m?.id}: ${JSON.stringify(m?.object)}`);
    t.check(odd.length === 0, 'object "model" on every entry', odd.join(', '), ex);
  }, { level: 'SHOULD' });

  clause('models/json-200', 'MOD-2', 'GET /models with a valid key and no body is 200 application/json', async (t) => {
    const ex = await list();
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
  });
});
