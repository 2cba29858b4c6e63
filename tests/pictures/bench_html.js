// Benchmark, not a test: how long the --html report takes to show its flame
// graph for a big profile (issue 15: 50,000 distinct stacks in under a
// second). Prints milliseconds from navigation start to the first drawn
// flame graph (the page's data-flame-ms) and to the load event, best of 3.
// usage: node bench_html.js NODE_MODULES REPORT.html
'use strict';
const path = require('path');
const [modules, report] = process.argv.slice(2);
const { chromium } = require(path.join(modules, 'playwright-core'));
(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
                                          args: ['--no-sandbox', '--disable-background-networking'] });
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.route(/^(?!file:)/, (r) => r.abort());
    await page.goto('file://' + path.resolve(report));
    await page.waitForFunction(() => document.body.dataset.flameMs, null, { timeout: 60000 });
    const r = await page.evaluate(() => ({ flame: Number(document.body.dataset.flameMs),
      frames: document.querySelectorAll('#flame .fr').length }));
    runs.push(r);
    await page.close();
  }
  await browser.close();
  const best = runs.reduce((a, b) => (b.flame < a.flame ? b : a));
  console.log(`flame graph drawn after ${best.flame} ms (best of 3: ${runs.map((r) => r.flame).join(', ')} ms), ` +
              `${best.frames} frame boxes`);
})().catch((e) => { console.error(e); process.exit(1); });
