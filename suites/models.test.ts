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
    const doc = t.json(ex);
    t.schema('model-list', doc, ex);
    // The envelope is judged either way; entries' ids only where there are entries.
    if (Array.isArray((doc as { data?: unknown } | null)?.data) && (doc as { data: unknown[] }).data.length === 0) t.note('the list has no entries: no entry id was judged');
  });

  clause('models/entry-object', 'MOD-1', 'each entry has object "model"', async (t) => {
    const ex = await answered(t);
    const data = (t.json(ex) as any)?.data;
    if (!Array.isArray(data)) t.fail('a data array', JSON.stringify(data)?.slice(0, 80) ?? 'none', ex);
    if (data.length === 0) t.inconclusive('the model list has no entries, so no entry\'s object to judge (RES-MOD-1 judges the missing models)');
    const odd = data.filter((m: any) => m?.object !== 'model').map((m: any) => `${m?.id}: ${JSON.stringify(m?.object)}`);
    t.check(odd.length === 0, 'object "model" on every entry', odd.join(', '), ex);
  }, { level: 'SHOULD' });

  clause('models/json-200', 'MOD-2', 'GET /models with a valid key and no body is 200 application/json', async (t) => {
    const ex = await list();
    t.status(ex, 200);
    t.mediaType(ex, 'application/json');
  });
});
