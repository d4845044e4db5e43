import { caseArbitrary } from './fuzz/generators.ts';
import { caseAt, caseSeed } from './fuzz/campaign.ts';
import { features } from './fuzz/signature.ts';
const arb = caseArbitrary({ models: ['svc-auto','svc'], brainId: '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c', maxBodyBytes: 65536 });
for (let i = 0; i < 200; i++) { const c = caseAt(arb, caseSeed(1, i), '0'); const b = c.body as any; if (b && typeof b==='object' && typeof b.temperature === 'string' && c.kind==='bad-message') { console.log(i, JSON.stringify(b).slice(0,300)); console.log(features(b).join(' ')); } }
