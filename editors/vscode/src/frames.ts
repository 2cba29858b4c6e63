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
