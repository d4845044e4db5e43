import { chromium } from 'playwright-core';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox','--disable-gpu','--disable-background-networking'] });
const p = await b.newPage(); await p.setViewportSize({ width: 1400, height: 900 });
await p.goto('file://' + process.argv[2]); await p.waitForTimeout(500);
const ys = process.argv.slice(4).map(Number);
for (const [i, y] of ys.entries()) await p.screenshot({ path: `${process.argv[3]}-${i}.png`, fullPage: true, clip: { x: 0, y, width: 1400, height: 1500 } });
const hs = await p.evaluate(() => [...document.querySelectorAll('h2')].map(h => h.textContent + '@' + Math.round(h.getBoundingClientRect().top + scrollY)));
console.log(hs.join('\n'));
await b.close();
