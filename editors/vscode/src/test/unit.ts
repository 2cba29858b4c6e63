// Unit checks of the pure helpers (node out/test/unit.js); exits 1 on failure.
// They show what the extension draws from the server's fields, as sent.
import * as assert from 'assert';
import { makeNonce, webviewHtml } from '../flamepage';
import { frameItems, statusText } from '../frames';

const stack = [
  { function: '_raw', file: '/x/site-packages/numpy/linalg/_impl.py', line: 9, user: false, library: true, name: 'numpy.linalg._impl._raw' },
  { function: 'inv', file: '/x/site-packages/numpy/linalg/linalg.py', line: 3, user: false, library: true, name: 'numpy.linalg.linalg.inv' },
  { function: 'main', file: '/p/app.py', line: 5, user: true, library: false, name: 'app.main' },
];
const e = { uri: 'file:///p/app.py', line: 4, since_s: 2.34, stack, call: 'numpy.linalg.linalg.inv', text: '▶ 2.3 s · numpy.linalg.linalg.inv' };
assert.strictEqual(statusText(e), '▶ 2.3 s · numpy.linalg.linalg.inv');
// the text is the server's, not recomputed from since_s / stack
assert.strictEqual(statusText({ ...e, text: 'server says' }), 'server says');
assert.strictEqual(statusText({ uri: 'file:///p/app.py', line: 4 }), '▶');
const { title, items } = frameItems(e);
assert.strictEqual(title, 'Running for 2.3 s in numpy.linalg.linalg.inv (innermost first)');
assert.deepStrictEqual(items.map((i) => i.label), ['$(library) _raw', '$(library) inv', '$(file-code) main']);
assert.strictEqual(items[1].description, 'linalg.py:3');
assert.strictEqual(items[1].detail, 'library · numpy.linalg.linalg.inv · /x/site-packages/numpy/linalg/linalg.py');
assert.strictEqual(items[2].detail, 'your code · app.main · /p/app.py');
// "library" decides, not the path: a frame the server calls library code is shown as one
assert.strictEqual(frameItems({ uri: 'x', stack: [{ function: 'f', file: '/p/app.py', library: true }] }).items[0].label, '$(library) f');
assert.strictEqual(frameItems({ uri: 'x', since_s: 1, call: null }).title, 'Running for 1.0 s (innermost first)');
// the report page in a webview: its CSP replaced, every script with the nonce
const page = '<head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'unsafe-inline\'">' +
  '</head><body><script id="data" type="application/json">{}</script><script>go()</script></body>';
const wv = webviewHtml(page, 'N0NCE', 'vscode-webview://x');
assert.ok(wv.includes(`content="default-src 'none'; style-src vscode-webview://x 'unsafe-inline'; script-src 'nonce-N0NCE'; img-src data:"`), wv);
assert.ok(!wv.includes("'unsafe-inline'\">") && !/script-src 'unsafe-inline'/.test(wv), 'the inline-script allowance is gone');
assert.strictEqual((wv.match(/<script nonce="N0NCE"/g) || []).length, 2);
assert.throws(() => webviewHtml('<html></html>', 'n', 'c'), /no Content-Security-Policy/);
assert.match(makeNonce(), /^[A-Za-z0-9]{32}$/);
console.log('vscode unit: ok');
