// Unit checks of the pure helpers (node out/test/unit.js); exits 1 on failure.
// They show what the extension draws from the server's fields, as sent.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { makeNonce, webviewHtml } from '../flamepage';
import { attachItems, frameItems, memoryAttachWarning, statusText } from '../frames';
import { chooseServer, findOnPath } from '../server';

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
// "Attach to process…" and "… with memory": this workspace's programs first, then by pid;
// the memory picker's title and the question before it say what it does to the process
const procs = [
  { pid: 30, command: 'python3 other.py', cwd: '/o', main: '/o/other.py', python: '3.12.1', inWorkspace: false, canAttach: true },
  { pid: 40, command: 'python3 app.py', cwd: '/p', main: '/p/app.py', python: '3.11.7', inWorkspace: true, canAttach: true },
  { pid: 20, command: 'sleep 60', cwd: '/', main: '', python: null, inWorkspace: false, canAttach: false, why: 'not a Python process' },
];
const plain = attachItems(procs, false);
assert.deepStrictEqual(plain.items.map((i) => i.label), ['40  app.py', '20  sleep', '30  other.py']);
assert.strictEqual(plain.items[0].description, 'Python 3.11.7 · this workspace');
assert.strictEqual(plain.items[1].detail, 'sleep 60 — not a Python process');
assert.strictEqual(plain.title, 'Hotline: attach to a running Python process');
assert.strictEqual(procs[0].pid, 30, 'the server\'s list is not reordered in place');
const mem = attachItems(procs, true);
assert.match(mem.title, /with memory .*agent.*until Detach/);
assert.deepStrictEqual(mem.items.map((i) => i.proc.pid), [40, 20, 30]);
// a running `marimo edit`: the kernel (it runs the cells) named and listed before its server
const nb = '/p/notebook.py';
const marimo = attachItems([
  { pid: 50, command: 'python marimo edit notebook.py', cwd: '/p', main: nb, python: '3.11.7', inWorkspace: true, canAttach: true,
    label: 'marimo server: notebook.py', marimo: { role: 'server', notebook: nb } },
  { pid: 55, command: 'python -c from multiprocessing.spawn import spawn_main', cwd: '/p', main: nb, python: '3.11.7', inWorkspace: true,
    canAttach: true, label: 'marimo kernel: notebook.py', marimo: { role: 'kernel', notebook: nb, server: 50 } },
  ...procs,
], false);
assert.deepStrictEqual(marimo.items.map((i) => i.label).slice(0, 3),
  ['40  app.py', '55  marimo kernel: notebook.py', '50  marimo server: notebook.py']);
const warn = memoryAttachWarning(procs[1]);
assert.match(warn, /^Attach to 40 with memory\?/);
for (const w of ['gdb', '4 KiB page', "Hotline's agent", 'unloads itself on Detach', 'runs on']) assert.ok(warn.includes(w), w);
// which hotline runs the server (server.ts): the setting, else the selected
// interpreter's environment (pip-installed there), else PATH, else the bundled one
{
  const have = (...files: string[]) => (p: string) => files.includes(p);
  const base = { setting: '', pathEnv: '/usr/local/bin:/usr/bin', bundled: '/ext/bin/hotline' };
  const venv = { ...base, python: '/p/.venv/bin/python', isExec: have('/p/.venv/bin/hotline', '/usr/bin/hotline') };
  assert.deepStrictEqual(chooseServer(venv), { path: '/p/.venv/bin/hotline', source: 'interpreter' });
  // the explicit setting wins over every discovery
  assert.deepStrictEqual(chooseServer({ ...venv, setting: '/opt/h/hotline' }), { path: '/opt/h/hotline', source: 'setting' });
  // an environment without hotline: PATH, then the bundled one
  assert.deepStrictEqual(chooseServer({ ...venv, isExec: have('/usr/bin/hotline') }), { path: '/usr/bin/hotline', source: 'PATH' });
  assert.deepStrictEqual(chooseServer({ ...venv, isExec: have() }), { path: '/ext/bin/hotline', source: 'bundled' });
  // a bare interpreter name names no environment (not ./hotline)
  assert.deepStrictEqual(chooseServer({ ...base, python: 'python3', isExec: have('hotline') }), { path: '/ext/bin/hotline', source: 'bundled' });
  assert.deepStrictEqual(chooseServer({ ...base, isExec: have() }).source, 'bundled');
  // the first PATH entry that has it; empty entries skipped
  assert.strictEqual(findOnPath('hotline', ':/a:/b', have('/b/hotline', 'hotline')), '/b/hotline');
  // on disk: a venv whose python is a symlink to the base interpreter still
  // gives the venv's hotline (the path is not resolved)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hotline-unit-'));
  try {
    const bin = path.join(tmp, 'venv', 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.symlinkSync(process.execPath, path.join(bin, 'python'));
    fs.writeFileSync(path.join(bin, 'hotline'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(tmp, 'hotline'), 'not executable', { mode: 0o644 });
    const disk = { setting: '', pathEnv: tmp, bundled: '/ext/bin/hotline' };
    assert.deepStrictEqual(chooseServer({ ...disk, python: path.join(bin, 'python') }),
      { path: path.join(bin, 'hotline'), source: 'interpreter' });
    // a file that is not executable is passed over
    assert.deepStrictEqual(chooseServer(disk).source, 'bundled');
    fs.chmodSync(path.join(bin, 'hotline'), 0o644);
    assert.deepStrictEqual(chooseServer({ ...disk, python: path.join(bin, 'python') }).source, 'bundled');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
console.log('vscode unit: ok');
