// Pure helpers for the live "executing" marker (no vscode import, so the
// unit test runs them under plain node): the library call a running user line
// is inside, and the status-bar text.

export interface Frame {
  function?: string;
  file?: string;
  line?: number;
  user?: boolean;
}

export interface Executing {
  uri: string | null;
  line?: number;
  thread?: string | null;
  since_s?: number;
  stack?: Frame[];
}

/** A dotted module name for a library file: the path after site-packages,
 * dist-packages or lib/pythonX.Y, else the file name; no .py, no __init__. */
export function moduleOf(file: string | undefined): string | undefined {
  if (!file) return undefined;
  const m =
    /[/\\](?:site|dist)-packages[/\\](.+)$/.exec(file) ||
    /[/\\]lib[/\\]python\d+\.\d+[/\\](.+)$/.exec(file) ||
    /([^/\\]+)$/.exec(file);
  if (!m) return undefined;
  return m[1].replace(/\.py$/, '').replace(/[/\\]__init__$/, '').replace(/[/\\]/g, '.');
}

/** The library frame the running user line called: the non-user frame just
 * above the innermost user frame (stack is innermost first), or undefined. */
export function libraryCall(stack: Frame[] | undefined): string | undefined {
  let lib: Frame | undefined;
  for (const fr of stack ?? []) {
    if (typeof fr !== 'object' || fr === null) continue;
    if (fr.user) break;
    lib = fr;
  }
  if (!lib) return undefined;
  const mod = moduleOf(lib.file);
  const fn = lib.function ?? '?';
  return mod ? `${mod}.${fn}` : fn;
}

/** "▶ 2.3 s · numpy.linalg.inv" (no library part when the line runs its own code). */
export function statusText(e: Executing): string {
  const secs = typeof e.since_s === 'number' ? e.since_s : 0;
  const lib = libraryCall(e.stack);
  return `▶ ${secs.toFixed(1)} s` + (lib ? ` · ${lib}` : '');
}
