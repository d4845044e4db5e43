import { startReferenceServer } from './reference/server.ts';
import { HttpClient } from './lib/http-client.ts';
import { runCampaign } from './fuzz/campaign.ts';
import { DEFECTS } from './reference/defects.ts';
const runs = Number(process.env.N || 200);
for (const [name, d] of Object.entries(DEFECTS).filter(([, d]) => d.foundBy === 'fuzz')) {
  const row: string[] = [];
  for (const seed of [1, 2, 3]) {
    const ref = await startReferenceServer({ defect: name });
    const http = new HttpClient({ baseUrl: ref.url, timeoutMs: 5000 });
    const t0 = Date.now();
    const r = await runCampaign({ send: (s) => http.send(s), auth: { key: ref.keys.main }, models: ['svc-auto','svc'], brainId: ref.brainId,
      fuzz: { runs, seed, timeMs: 60000, concurrency: 8, maxBodyBytes: 65536, replay: undefined } });
    const caught = d.clauses.filter((c) => r.findings.some((f) => f.clause === c));
    const sizes = r.findings.filter((f) => d.clauses.includes(f.clause)).map((f) => `${f.clause}:${f.bytes}b/${f.fields}f`).join(' ');
    row.push(`s${seed} ${caught.length}/${d.clauses.length} ${Date.now()-t0}ms n=${r.findings.length} ${sizes}`);
    await http.close(); await ref.close();
  }
  console.log(name.padEnd(32), row.join(' | '));
}
