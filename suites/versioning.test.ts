// VER: the version in the base address (spec: Versioning).
import { describe } from 'vitest';
import { clause } from '../harness/clause-test.ts';
import { config, http, keys, send } from '../harness/target.ts';

describe('VER: versioning', () => {
  // A base URL without /v1 never gets this far: the runner refuses it as a
  // configuration error (exit 2) before any request. This test records the base used.
  clause('versioning/v1-base', 'VER-1', 'the base URL ends with the path segment /v1', async (t) => {
    const path = new URL(config.targetUrl!).pathname;
    t.check(/\/v1$/.test(path), 'a base path ending in /v1', path);
  });

  clause('versioning/v2-models', 'VER-2', 'whether GET /v2/models answers', async (t) => {
    const v2 = http.base.pathname.replace(/\/v1\/$/, '/v2/models');
    const ex = await send({ method: 'GET', path: { root: v2 }, auth: keys.main });
    t.observe(ex.status === undefined ? `no answer (${ex.error?.message})` : `GET ${v2} answered HTTP ${ex.status}`);
  });
});
