// Unit checks of the pure helpers (node out/test/unit.js); exits 1 on failure.
import * as assert from 'assert';
import { libraryCall, moduleOf, statusText } from '../frames';

assert.strictEqual(moduleOf('/usr/lib/python3/dist-packages/numpy/linalg/linalg.py'), 'numpy.linalg.linalg');
assert.strictEqual(moduleOf('/v/lib/python3.11/site-packages/pkg/__init__.py'), 'pkg');
assert.strictEqual(moduleOf('/usr/lib/python3.11/json/decoder.py'), 'json.decoder');
assert.strictEqual(moduleOf('/home/me/proj/lib/slowlib.py'), 'slowlib');
const stack = [
  { function: '_raw', file: '/x/site-packages/numpy/linalg/_impl.py', user: false },
  { function: 'inv', file: '/x/site-packages/numpy/linalg/linalg.py', user: false },
  { function: 'main', file: '/p/app.py', line: 5, user: true },
];
assert.strictEqual(libraryCall(stack), 'numpy.linalg.linalg.inv');
assert.strictEqual(libraryCall([{ function: 'main', user: true }]), undefined);
assert.strictEqual(libraryCall(undefined), undefined);
assert.strictEqual(statusText({ uri: 'file:///p/app.py', line: 4, since_s: 2.34, stack }), '▶ 2.3 s · numpy.linalg.linalg.inv');
assert.strictEqual(statusText({ uri: 'file:///p/app.py', line: 4 }), '▶ 0.0 s');
console.log('vscode unit: ok');
