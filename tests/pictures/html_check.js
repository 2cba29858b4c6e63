// Drives a `hotline --html` report in headless Chromium with the network cut
// off (any non-file: request fails the test) and checks what a user does
// with it: the flame graph's root total, click-to-zoom, search highlighting,
// one memory-chart point per timeline point; no page or console error.
//
// usage: node html_check.js NODE_MODULES REPORT.html EXPECT.json [SHOTS_DIR]
//   EXPECT.json: {"total_s": seconds, "timeline_points": n, "search": "word"}
//   SHOTS_DIR: also write report-light.png and report-dark.png there
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, report, expectFile, shots] = process.argv.slice(2);
const { chromium } = require(path.join(modules, 'playwright-core'));
const expect = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
const problems = [];
const check = (ok, msg) => { if (!ok) problems.push(msg); else console.log('ok: ' + msg); };

async function main() {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.route(/^(?!file:)/, (r) => { problems.push('network: ' + r.request().url()); return r.abort(); });
    page.on('pageerror', (e) => problems.push('page error: ' + e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
    await page.goto('file://' + path.resolve(report));
    const flame = page.locator('#flame');
    await flame.locator('.fr.root').waitFor({ timeout: 10000 });
    const total = Number(await flame.getAttribute('data-total'));
    check(Math.abs(total - expect.total_s) < 1e-6, `root total ${total} = ${expect.total_s} s`);

    // zoom: click the widest frame under the root; it becomes the full width
    const kids = await page.$$eval('#flame .fr', (ds) => ds.filter((d) => d.style.top === '18px')
      .map((d) => ({ name: d.dataset.name, s: Number(d.dataset.seconds), w: parseFloat(d.style.width) }))
      .sort((a, b) => b.w - a.w));
    check(kids.length > 0, `${kids.length} frames under the root`);
    const target = kids[0];
    const fullW = await flame.evaluate((f) => f.clientWidth);
    await page.evaluate((name) => [...document.querySelectorAll('#flame .fr')]
      .find((d) => d.dataset.name === name && d.style.top === '18px').click(), target.name);
    check(await flame.getAttribute('data-zoom') === target.name, `zoomed into ${target.name}`);
    const zw = await page.$$eval('#flame .fr', (ds, name) => parseFloat(ds.find((d) => d.dataset.name === name &&
      d.style.top === '18px' && !d.classList.contains('anc')).style.width), target.name);
    check(Math.abs(zw - fullW) < 1, `zoomed frame spans the graph (${zw} of ${fullW} px)`);
    await page.click('#reset');
    check(await flame.getAttribute('data-zoom') === 'all', 'reset zooms out');

    // search highlights the matching frames, and only those
    await page.fill('#search', expect.search);
    const hits = await page.$$eval('#flame .fr.hit', (ds) => ds.map((d) => d.dataset.name));
    check(hits.length > 0 && hits.every((n) => n.toLowerCase().includes(expect.search)),
          `search '${expect.search}' highlights ${hits.length} frames`);
    check(/frames match/.test(await page.textContent('#found')), 'search says how much matched');
    const misses = await page.$$eval('#flame .fr:not(.hit)', (ds, q) => ds.filter((d) => d.dataset.name &&
      d.dataset.name.toLowerCase().includes(q)).length, expect.search);
    check(misses === 0, `no matching frame left unhighlighted (${misses})`);

    const pts = await page.locator('#mem circle.pt').count();
    check(pts === expect.timeline_points, `memory chart ${pts} points = ${expect.timeline_points}`);
    const rows = await page.locator('#lines tr').count();
    check(rows > 1, `line table has ${rows - 1} rows`);

    if (shots) {
      await page.fill('#search', '');
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        const box = await page.locator('#flame .fr').nth(1).boundingBox(); // hover: the tooltip
        await page.mouse.move(box.x + 40, box.y + 8);
        await page.screenshot({ path: path.join(shots, `report-${scheme}.png`), fullPage: true });
      }
    }
  } finally {
    await browser.close();
  }
  if (problems.length) { console.error('FAIL\n' + problems.join('\n')); process.exit(1); }
}
main().catch((e) => { console.error('FAIL', e); process.exit(1); });
