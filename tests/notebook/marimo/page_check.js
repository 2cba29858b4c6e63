// Drives `marimo edit --headless` in headless Chromium (playwright-core,
// pinned in tests/pictures) for test_marimo_page.py: runs the notebook's
// first cell (`hotline.marimo()`), then the slider's cell, then the hot
// cell, reads that cell's output while it runs and after it. Prints one
// JSON object.
// usage: node page_check.js URL SHOTS_DIR   (NODE_PATH = pictures-node/node_modules)
const { chromium } = require('playwright-core');

const [url, shots] = process.argv.slice(2);
const sleep = ms => new Promise(r => setTimeout(r, ms));

(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'] });
  const out = { live: [], errors: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.on('pageerror', e => out.errors.push(String(e)));
    await page.goto(url);
    const cells = page.locator('.marimo-cell');
    await cells.nth(1).waitFor({ timeout: 90000 });
    const run = i => cells.nth(i).locator('[data-testid=run-button]:visible').first().click();
    // cell 1: hotline.marimo(); its line in the cell's console says it is on
    // (a click before the page's session is ready does nothing: again, every 5 s)
    let t0 = Date.now(), tried = 0;
    while (!/hotline: on/.test(await cells.nth(0).innerText())) {
      if (Date.now() - t0 > 60000) throw new Error('cell 1 did not run: ' + await cells.nth(0).innerText());
      if (Date.now() - tried > 5000) {
        tried = Date.now();
        await run(0);
      }
      await sleep(100);
    }
    out.cell1 = await cells.nth(0).innerText();
    // cell 3: the loop. An in-page poller records (epoch ms) when the live
    // part, once seen, goes; the cell's last line prints the kernel's clock.
    await page.evaluate(() => {
      const w = window;
      w.__hl = { seen: null, cleared: null, table: null };
      const cell = document.querySelectorAll('.marimo-cell')[2];
      const tick = () => {
        if (cell.querySelector('.hotline-live')) w.__hl.seen = Date.now();
        else if (w.__hl.seen !== null && w.__hl.cleared === null) w.__hl.cleared = Date.now();
        if (w.__hl.table === null && cell.querySelector('.hotline-lines')) w.__hl.table = Date.now();
        if (w.__hl.cleared === null || w.__hl.table === null) setTimeout(tick, 10);
      };
      tick();
    });
    const c2 = cells.nth(2);
    // cell 2: the slider (n_components); then the loop's cell, which reads
    // it (marimo runs a cell's dependents only once they ran: this one is
    // clicked)
    await run(1);
    await cells.nth(1).locator('[role=slider]').first().waitFor({ timeout: 120000 });
    out.slider = await cells.nth(1).innerText();
    await run(2);
    const start = Date.now();
    let shot = false;
    while (Date.now() - start < 120000) { /* a bound: the loop takes 5-8 s here, more on a loaded machine */
      const s = await c2.evaluate(el => {
        const l = el.querySelector('.hotline-live');
        return { where: l ? l.querySelector('.hotline-where').textContent : null,
                 chain: l ? l.querySelector('.hotline-chain').textContent : null,
                 table: !!el.querySelector('.hotline-lines') };
      });
      s.t = (Date.now() - start) / 1000;
      if (s.where !== null) out.live.push(s);
      // the picture: the hot line on screen before and after it was taken
      const onHot = () => c2.evaluate(el => {
        const w = el.querySelector('.hotline-live .hotline-where');
        return !!w && /gmm\.fit\(temp\)/.test(w.textContent);
      });
      if (!shot && out.live.length >= 10 && s.where && /gmm\.fit\(temp\)/.test(s.where)) {
        await page.screenshot({ path: shots + '/marimo-running.png' });
        shot = await onHot();
      }
      if (s.table) break;
      await sleep(150);
    }
    await page.waitForFunction(() => window.__hl.cleared !== null, null, { timeout: 5000 }).catch(() => {});
    out.timing = await page.evaluate(() => window.__hl);
    await c2.getByText(/^truth /).first().waitFor({ timeout: 10000 }).catch(() => {});
    out.cell2 = await c2.innerText();
    out.rows = await c2.evaluate(el => Array.from(el.querySelectorAll('.hotline-lines tr[data-line]')).map(
      r => ({ line: +r.dataset.line, text: r.children[1].textContent,
              s: r.querySelector('.hotline-s').textContent, pct: r.querySelector('.hotline-pct').textContent })));
    out.summary = await c2.locator('.hotline-summary').innerText().catch(() => null);
    out.live_after = await c2.locator('.hotline-live').count();
    // the picture: the cell's bottom (the table, its console) on screen
    await c2.evaluate(el => el.scrollIntoView({ block: 'end' }));
    await page.screenshot({ path: shots + '/marimo-after.png' });
  } catch (e) {
    out.errors.push('driver: ' + (e && e.stack || e));
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
})();
