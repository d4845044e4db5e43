// MOD: GET /models (spec: Endpoints > GET /models; the list shape comes from the clients, MOD-1 is COMPAT).
import { describe } from 'vitest';
import { clause } from '../harness/clause-test.ts';
import { listModels, shared } from '../harness/target.ts';

const list = shared(() => listModels());

describe('MOD: GET /models', () => {
  clause('MOD-1', 'the list is {"object": "list", "data": [...]} with a string id per entry', async (t) => {
    const ex = await list();
    t.status(ex, 200);
    t.schema('model-list', t.json(ex), ex);
  });

  clause('MOD-1', 'each entry has object "model"', async (t) => {
    const ex = await list();
    t.status(ex, 200);
    const data = (t.json(ex) as any)?.data;
    if (!Array.isArray(data)) t.fail('a data array', JSON.stringify(data)?.slice(0, 80) ?? 'none', ex);
    const odd = data.filter((m: any) => m?.object !== 'model').map((m: any) => `${m?.id}: ${JSON.stringify(m?.object)}`);
    t.check(odd.length === 0, 'object "model" on every entry', odd.join(', '), ex);
  }, { level: 'SHOULD' });

  clause('MOD-2', 'GET /models with a valid key and no body is 200 application/json', async (t) => {
    const ex = await list();
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
  });
});
