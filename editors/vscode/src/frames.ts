// Pure helpers for the live "executing" marker (no vscode import, so the
// unit test runs them under plain node). The server computes what is shown
// (docs/lsp.md, "Live line"): which frames are library code, each frame's
// name, the library call and the status text; nothing here works it out again.

export interface Frame {
  function?: string;
  file?: string;
  line?: number;
  user?: boolean;
  /** not the program's own code */
  library?: boolean;
  /** "module.function", as the server names it */
  name?: string;
}

/** The params of hotline/executing ({uri: null} when the marker goes). */
export interface Executing {
  uri: string | null;
  line?: number;
  thread?: string | null;
  since_s?: number;
  stack?: Frame[];
  /** the library call the running line is in, or null */
  call?: string | null;
  /** "▶ 2.3 s · numpy.linalg.inv" */
  text?: string;
}

/** The params of hotline/runEnded. */
export interface RunEnded {
  uri?: string | null;
  outcome?: 'done' | 'failed' | 'stopped';
  reason?: string;
  exitStatus?: number;
  signal?: number;
  elapsed_s?: number;
  samples?: number;
  /** set when the "run" was an attach (hotline.attach) */
  attachedPid?: number;
  /** true when that attach had memory on (hotline.attach {memory: true}) */
  memory?: boolean;
}

/** One entry of hotline.listProcesses (docs/attach.md). */
export interface PyProcess {
  pid: number;
  command: string;
  cwd: string;
  main: string;
  python: string | null;
  inWorkspace: boolean;
  canAttach: boolean;
  why?: string;
  /** what to call it, when the server knows better than its command
   * ("marimo kernel: notebook.py") */
  label?: string;
  /** a marimo kernel or server: its notebook, and a kernel's server pid */
  marimo?: { role: 'kernel' | 'server'; notebook: string; server?: number };
}

export interface ProcessItem {
  label: string;
  description: string;
  detail: string;
  proc: PyProcess;
}

/** Quick-pick rows for hotline.listProcesses (this workspace's programs
 * first, then by pid, a marimo kernel just before its server: the kernel
 * runs the cells) and the picker's title; memory: "Attach to process with
 * memory…". */
export function attachItems(procs: PyProcess[], memory: boolean): { title: string; items: ProcessItem[] } {
  const rank = (p: PyProcess) => (p.marimo?.role === 'kernel' && p.marimo.server ? p.marimo.server - 0.5 : p.pid);
  const sorted = [...procs].sort((a, b) => Number(b.inWorkspace) - Number(a.inWorkspace) || rank(a) - rank(b));
  const items = sorted.map((p) => ({
    label: `${p.pid}  ${p.label ?? (p.main || p.command.split(' ')[0]).replace(/^.*[/\\]/, '')}`,
    description: [p.python ? `Python ${p.python}` : '', p.inWorkspace ? 'this workspace' : ''].filter((x) => x).join(' · '),
    detail: p.canAttach ? p.command : `${p.command} — ${p.why ?? 'cannot attach'}`,
    proc: p,
  }));
  return {
    title: memory
      ? 'Hotline: attach with memory (loads Hotline\'s agent into the process until Detach)'
      : 'Hotline: attach to a running Python process',
    items,
  };
}

/** What "attach with memory" does to the target, asked before it is done
 * (docs/attach.md, "Memory"): the only attach that changes the process. */
export function memoryAttachWarning(p: PyProcess): string {
  return (
    `Attach to ${p.pid} with memory? gdb stops the process for a moment at its next allocator call, ` +
    'maps one 4 KiB page in it and loads Hotline\'s agent (memory hooks and a sampler thread), ' +
    'which unloads itself on Detach; the process runs on. Needs gdb and permission to trace the ' +
    'process (docs/attach.md lists the Python versions).'
  );
}

/** The status-bar and hover text: the server's. */
export function statusText(e: Executing): string {
  return typeof e.text === 'string' ? e.text : '▶';
}

export interface FrameItem {
  label: string;
  description: string;
  detail: string;
  frame: Frame;
}

/** Quick-pick rows for the frames (innermost first) and the picker's title. */
export function frameItems(e: Executing): { title: string; items: FrameItem[] } {
  const items = (e.stack ?? [])
    .filter((f): f is Frame => typeof f === 'object' && f !== null)
    .map((f) => ({
      label: `${f.library ? '$(library)' : '$(file-code)'} ${f.function ?? '?'}`,
      description: `${(f.file ?? '?').replace(/^.*[/\\]/, '')}:${f.line ?? '?'}`,
      detail: `${f.library ? 'library' : 'your code'} · ${f.name ?? f.function ?? '?'} · ${f.file ?? '?'}`,
      frame: f,
    }));
  const secs = typeof e.since_s === 'number' ? e.since_s : 0;
  return { title: `Running for ${secs.toFixed(1)} s${e.call ? ' in ' + e.call : ''} (innermost first)`, items };
}
