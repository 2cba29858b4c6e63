// The flame graph page's process filter (server/store/report.html, #proc)
// on a distributed job's profile, in headless Chromium with the network cut
// off: the menu lists the processes with stacks, heaviest first; choosing
// one redraws the graph with that process's stacks only (the root's total =
// its seconds, the root named after it); "All processes" gives the sum back.
//
// usage: node flame_procs.js NODE_MODULES PAGE.html EXPECT.json [SHOT.png]
//   EXPECT.json: {"total_s": s, "procs": [{"pid": n, "seconds": s, "label": "..."}],
//                 "frame": "burn"}: a frame every chosen worker's graph must show
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, page_, expectFile, shot] = process.argv.slice(2);
const { chromium } = require(path.join(modules, 'playwright-core'));
const expect = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
const problems = [];
const check = (ok, msg) => { if (!ok) problems.push(msg); else console.log('ok: ' + msg); };
const near = (a, b) => Math.abs(a - b) <= 1e-6 + 1e-6 * Math.abs(b);

async function main() {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    await page.route(/^(?!file:)/, (r) => { problems.push('network: ' + r.request().url()); return r.abort(); });
    page.on('pageerror', (e) => problems.push('page error: ' + e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
    await page.goto('file://' + path.resolve(page_));
    const flame = page.locator('#flame');
    await flame.locator('.fr.root').waitFor({ timeout: 10000 });
    const total = () => flame.getAttribute('data-total').then(Number);
    const all = await total();
    check(near(all, expect.total_s), `all processes: root total ${all} = ${expect.total_s} s`);
    check(await page.isVisible('#proc'), 'the process menu is shown (several processes)');
    const opts = await page.$$eval('#proc option', (os) => os.map((o) => ({ v: Number(o.value), t: o.textContent })));
    check(opts[0].v === 0 && /All processes/.test(opts[0].t), `first choice: ${opts[0].t}`);
    for (const want of expect.procs) {
      const o = opts.find((x) => x.v === want.pid);
      check(!!o && o.t.startsWith(want.label), `menu lists ${want.label}: ${o && o.t}`);
      if (!o) continue;
      await page.selectOption('#proc', String(want.pid));
      const t = await total();
      check(near(t, want.seconds), `pid ${want.pid}: root total ${t} = ${want.seconds} s`);
      check(Number(await flame.getAttribute('data-proc')) === want.pid, `pid ${want.pid} shown`);
      const rootText = await flame.locator('.fr.root').textContent();
      check(rootText.startsWith(want.label), `root named after it: ${rootText}`);
      const names = await page.$$eval('#flame .fr', (ds) => ds.map((d) => d.dataset.name || ''));
      check(names.some((n) => n.startsWith(expect.frame)), `its graph shows ${expect.frame}()`);
    }
    if (shot && expect.procs.length) {
      await page.selectOption('#proc', String(expect.procs[0].pid));
      await page.screenshot({ path: shot, fullPage: false });
    }
    await page.selectOption('#proc', '0');
    check(near(await total(), all), 'All processes again: the first total');
  } finally {
    await browser.close();
  }
  if (problems.length) { console.error('FAIL\n' + problems.join('\n')); process.exit(1); }
}
main().catch((e) => { console.error('FAIL', e); process.exit(1); });
