// Opens a speedscope file with speedscope's own importer (the pinned npm
// package, tests/pictures/package-lock.json) in headless Chromium with the
// network cut off, the way `speedscope FILE` does (#localProfilePath=), and
// checks that the import succeeded without a warning or an error, that it
// made exactly the expected profiles, and each profile's total weight.
//
// usage: node speedscope_import.js NODE_MODULES FILE.speedscope.json EXPECT.json
//   EXPECT.json: {"profile name": total seconds, ...}, every profile of the
//   file; exits 1 on a mismatch, a missing or an unexpected profile.
//
// speedscope's importer is not exported as a library (the package is the
// built app), so the test watches the app's own objects: every Profile
// assigns this.totalNonIdleWeight in its constructor; a setter on
// Object.prototype, installed before the app's script runs, collects them.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const [modules, file, expectFile] = process.argv.slice(2);
const { chromium } = require(path.join(modules, 'playwright-core'));
const release = path.join(modules, 'speedscope', 'dist', 'release');
const expect = JSON.parse(fs.readFileSync(expectFile, 'utf8'));

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hotline-speedscope-'));
  const js = path.join(tmp, 'profile.js');
  const b64 = fs.readFileSync(file).toString('base64');
  fs.writeFileSync(js, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ` +
                       `${JSON.stringify(b64)})\n`);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--use-angle=swiftshader',
           '--enable-unsafe-swiftshader'],
  });
  const problems = [];
  try {
    const page = await browser.newPage();
    await page.route(/^(?!file:)/, (route) => { problems.push('network: ' + route.request().url());
                                                  return route.abort(); });
    page.on('dialog', (d) => { problems.push('dialog: ' + d.message()); d.dismiss(); });
    page.on('pageerror', (e) => problems.push('page error: ' + e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning' || /Failed to load/.test(m.text()))
        problems.push(`console ${m.type()}: ${m.text()}`);
    });
    await page.addInitScript(() => {
      window.__profiles = [];
      Object.defineProperty(Object.prototype, 'totalNonIdleWeight', {
        configurable: true,
        set(v) {
          Object.defineProperty(this, 'totalNonIdleWeight',
                                { value: v, writable: true, enumerable: true, configurable: true });
          window.__profiles.push(this);
        },
      });
    });
    const url = 'file://' + path.join(release, 'index.html') + '#localProfilePath=' + js;
    await page.goto(url);
    // imported (the app sets the title) or refused (a dialog, an error): whichever comes first
    const deadline = Date.now() + 30000;
    while (!/ - speedscope$/.test(await page.title()) && !problems.length) {
      if (Date.now() > deadline) throw new Error('speedscope did not load the file in 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    if (problems.length) throw new Error('import failed:\n' + problems.join('\n'));
    const got = await page.evaluate(() => {
      const out = {};
      for (const p of window.__profiles)
        if (typeof p.getName === 'function' && typeof p.getTotalWeight === 'function')
          out[p.getName()] = { weight: p.getTotalWeight(), unit: p.getWeightUnit() };
      return out;
    });
    console.log('title:', await page.title());
    const extra = Object.keys(got).filter((n) => !(n in expect));
    if (extra.length) problems.push(`profiles not expected: ${JSON.stringify(extra)}`);
    for (const [name, seconds] of Object.entries(expect)) {
      const g = got[name];
      if (!g) problems.push(`no profile named ${JSON.stringify(name)} (got ${Object.keys(got)})`);
      else if (g.unit !== 'seconds') problems.push(`${name}: unit ${g.unit}`);
      else if (Math.abs(g.weight - seconds) > 1e-6)
        problems.push(`${name}: total weight ${g.weight} != ${seconds}`);
      else console.log(`ok: ${name}: ${g.weight} ${g.unit}`);
    }
  } finally {
    await browser.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (problems.length) {
    console.error('FAIL\n' + problems.join('\n'));
    process.exit(1);
  }
}
main().catch((e) => { console.error('FAIL', e); process.exit(1); });
