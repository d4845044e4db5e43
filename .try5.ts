import { startReferenceServer } from './reference/server.ts';
import { HttpClient } from './lib/http-client.ts';
import { runCampaign } from './fuzz/campaign.ts';
const ref = await startReferenceServer({ defect: process.env.D });
const http = new HttpClient({ baseUrl: ref.url, timeoutMs: 5000 });
const r = await runCampaign({ send: (s) => http.send(s), auth: { key: ref.keys.main }, models: ['svc-auto','svc'], brainId: ref.brainId,
  fuzz: { runs: Number(process.env.N||200), seed: Number(process.env.S||1), timeMs: 60000, concurrency: 8, maxBodyBytes: 65536, replay: undefined } });
for (const f of r.findings) console.log(f.signature, f.bytes, f.rawCount, f.shrinkRequests, f.notes.join(';'), (f.case.raw ?? JSON.stringify(f.case.body)).slice(0, 160));
console.log(r.summary.rawFailures, r.summary.unattributed, r.summary.shrinkRequests);
await http.close(); await ref.close();
