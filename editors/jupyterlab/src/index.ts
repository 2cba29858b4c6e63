/* Hotline in JupyterLab (docs/notebooks.md, "JupyterLab").
 *
 * `%load_ext hotline` in the kernel opens a comm to the target "hotline";
 * this extension answers it (hello), and from then on the kernel profiles
 * every cell and sends, while a cell runs, a few times a second:
 *   {t: "live", cell_id, line, text, elapsed, chain, frames}
 * and when it ends {t: "end", cell_id} then {t: "lines", cell_id, lines}.
 * Here: a line decoration `hotline-executing` on the running line of the
 * cell's CodeMirror editor, a footer under the cell with the call chain from
 * the user's call down (the middle elided; a click shows every frame), and
 * after the cell each line's time and memory at its end. */
import { NotebookActions, INotebookTracker } from '@jupyterlab/notebook';
import type { Cell, Comm, Kernel, NotebookPanel } from '@jupyterlab/notebook';
import { RangeSetBuilder, StateEffect, StateField, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, WidgetType } from '@codemirror/view';

const TARGET = 'hotline';
const VERSION = 1;

interface Frame { name: string; file: string; line: number }
interface LiveMsg {
  t: 'live'; cell_id?: string; count?: number; line: number; text: string;
  elapsed: number; chain: string[]; frames: Frame[];
}
interface LineResult { wall: number; pct: number; py: number; nat: number; sys: number; alloc: number; kept: number }
interface LinesMsg {
  t: 'lines'; cell_id?: string; wall: number; total: number; peak_mb: number;
  lines: { [line: string]: LineResult };
}
type Msg = LiveMsg | LinesMsg | { t: 'end'; cell_id?: string; wall?: number };

/* --- the editor: one state field holds the marker and the results ------ */

const setMarker = StateEffect.define<number | null>();
const setResults = StateEffect.define<Map<number, string> | null>();

class ResultWidget extends WidgetType {
  constructor(readonly text: string) { super(); }
  eq(other: ResultWidget): boolean { return other.text === this.text; }
  toDOM(): HTMLElement {
    const s = document.createElement('span');
    s.className = 'hotline-line-result';
    s.textContent = this.text;
    return s;
  }
}

interface FieldState { marker: number | null; results: Map<number, string> | null; deco: DecorationSet }

function build(doc: Text, marker: number | null, results: Map<number, string> | null): DecorationSet {
  const b = new RangeSetBuilder<Decoration>();
  for (let n = 1; n <= doc.lines; n++) {
    const line = doc.line(n);
    if (marker === n) {
      b.add(line.from, line.from, Decoration.line({ class: 'hotline-executing' }));
    }
    const r = results && results.get(n);
    if (r) {
      b.add(line.to, line.to, Decoration.widget({ widget: new ResultWidget(r), side: 1 }));
    }
  }
  return b.finish();
}

const field = StateField.define<FieldState>({
  create: () => ({ marker: null, results: null, deco: Decoration.none }),
  update(s, tr) {
    let { marker, results } = s;
    let changed = false;
    for (const e of tr.effects) {
      if (e.is(setMarker)) { marker = e.value; changed = true; }
      if (e.is(setResults)) { results = e.value; changed = true; }
    }
    if (tr.docChanged && results) { results = null; changed = true; } // stale
    if (!changed) {
      return tr.docChanged ? { marker, results, deco: s.deco.map(tr.changes) } : s;
    }
    return { marker, results, deco: build(tr.state.doc, marker, results) };
  },
  provide: f => EditorView.decorations.from(f, s => s.deco)
});

function view(cell: Cell): EditorView | null {
  const ed = cell.editor as { editor?: EditorView } | null;
  const v = ed && ed.editor;
  if (!v || !v.state) return null;
  if (v.state.field(field, false) === undefined) {
    v.dispatch({ effects: StateEffect.appendConfig.of(field) });
  }
  return v;
}

function dispatch(cell: Cell, effects: StateEffect<unknown>[]): void {
  const v = view(cell);
  if (v) v.dispatch({ effects });
}

/* --- the footer under the cell ----------------------------------------- */

function footer(cell: Cell, create: boolean): HTMLElement | null {
  let el = cell.node.querySelector(':scope > .hotline-footer') as HTMLElement | null;
  if (!el && create) {
    el = document.createElement('div');
    el.className = 'hotline-footer';
    el.title = 'Hotline: click for every frame';
    el.addEventListener('click', () => el!.classList.toggle('hotline-expanded'));
    const input = cell.node.querySelector(':scope > .jp-Cell-inputWrapper');
    if (input) input.insertAdjacentElement('afterend', el);
    else cell.node.appendChild(el);
  }
  return el;
}

/** The chain as shown folded: the user's call, the next frame, …, the innermost. */
export function elide(chain: string[]): string {
  const c = chain.length > 4 ? [chain[0], chain[1], '\u2026', chain[chain.length - 1]] : chain;
  return c.join(' \u2192 ');
}

function showLive(cell: Cell, m: LiveMsg): void {
  dispatch(cell, [setMarker.of(m.line > 0 ? m.line : null), setResults.of(null)]);
  const el = footer(cell, true)!;
  el.classList.remove('hotline-done');
  const chain = m.chain && m.chain.length ? elide(m.chain) : 'line ' + m.line;
  el.replaceChildren();
  const head = document.createElement('div');
  head.className = 'hotline-head';
  const c = document.createElement('span');
  c.className = 'hotline-chain';
  c.textContent = chain;
  const w = document.createElement('span');
  w.className = 'hotline-where';
  w.textContent = '  \u00b7 line ' + m.line + ', ' + m.elapsed.toFixed(1) + ' s';
  head.append(c, w);
  const all = document.createElement('ol');
  all.className = 'hotline-frames';
  for (const f of m.frames || []) {
    const li = document.createElement('li');
    li.textContent = f.name + '  (' + f.file + ':' + f.line + ')';
    all.appendChild(li);
  }
  el.append(head, all);
}

function endLive(cell: Cell): void {
  dispatch(cell, [setMarker.of(null)]);
  const el = footer(cell, false);
  if (el && !el.classList.contains('hotline-done')) el.remove();
}

function fmtS(x: number): string {
  return x >= 10 ? x.toFixed(1) + ' s' : x >= 0.001 ? x.toFixed(3) + ' s' : '';
}

function fmtMB(x: number): string {
  return (x >= 100 ? x.toFixed(0) : x.toFixed(1)) + ' MB';
}

function showLines(cell: Cell, m: LinesMsg): void {
  const res = new Map<number, string>();
  let hot = 0, hotPct = 0;
  for (const k of Object.keys(m.lines || {})) {
    const r = m.lines[k];
    const parts: string[] = [];
    if (r.wall > 0) parts.push(fmtS(r.wall) + ' ' + r.pct.toFixed(0) + '%');
    if (r.alloc >= 0.05) parts.push('alloc ' + fmtMB(r.alloc) + (r.kept >= 0.05 ? ', kept ' + fmtMB(r.kept) : ''));
    if (parts.length) res.set(Number(k), parts.join(' \u00b7 '));
    if (r.pct > hotPct) { hotPct = r.pct; hot = Number(k); }
  }
  dispatch(cell, [setMarker.of(null), setResults.of(res)]);
  const el = footer(cell, true)!;
  el.classList.add('hotline-done');
  el.classList.remove('hotline-expanded');
  el.replaceChildren();
  const head = document.createElement('div');
  head.className = 'hotline-head';
  let t = 'hotline: ' + m.wall.toFixed(2) + ' s wall';
  if (hot) t += ', hottest line ' + hot + ' (' + hotPct.toFixed(0) + '%)';
  if (m.peak_mb) t += ', memory peak ' + m.peak_mb.toFixed(1) + ' MB';
  head.textContent = t;
  el.append(head);
}

/* --- the kernel ---------------------------------------------------------- */

function findCell(panel: NotebookPanel, id: string | undefined): Cell | null {
  const cells = panel.content.widgets;
  if (id) {
    for (const c of cells) if (c.model.id === id) return c;
  }
  for (const c of cells) { // no cell id from the kernel: the running one
    const m = c.model as { executionState?: string };
    if (c.model.type === 'code' && m.executionState === 'running') return c;
  }
  return null;
}

function attach(panel: NotebookPanel, kernel: Kernel | null | undefined, seen: WeakSet<object>): void {
  if (!kernel || seen.has(kernel)) return;
  seen.add(kernel);
  kernel.registerCommTarget(TARGET, (comm: Comm) => {
    const live = new Set<Cell>();
    comm.onMsg = msg => {
      const m = msg.content.data as unknown as Msg;
      const cell = findCell(panel, m.cell_id);
      if (!cell) return;
      if (m.t === 'live') { live.add(cell); showLive(cell, m); }
      else if (m.t === 'end') { live.delete(cell); endLive(cell); }
      else if (m.t === 'lines') showLines(cell, m);
    };
    comm.onClose = () => { for (const c of live) endLive(c); live.clear(); };
    comm.send({ hello: VERSION });
  });
}

const plugin = {
  id: 'hotline-profiler:plugin',
  description: 'The running line, its call chain and per-line profile of a cell (Hotline).',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: unknown, tracker: INotebookTracker): void => {
    const seen = new WeakSet<object>();
    tracker.widgetAdded.connect((_: unknown, panel: NotebookPanel) => {
      const sc = panel.sessionContext;
      sc.kernelChanged.connect((_s: unknown, args: { newValue: Kernel | null }) => attach(panel, args.newValue, seen));
      attach(panel, sc.session && sc.session.kernel, seen);
      void sc.ready.then(() => attach(panel, sc.session && sc.session.kernel, seen));
    });
    // a cell that ended without the kernel's word (kernel died, interrupted
    // before the hook): its marker goes with it
    NotebookActions.executed.connect((_: unknown, args: { cell: Cell }) => {
      dispatch(args.cell, [setMarker.of(null)]);
      const el = footer(args.cell, false);
      if (el && !el.classList.contains('hotline-done')) el.remove();
    });
  }
};

export default plugin;
