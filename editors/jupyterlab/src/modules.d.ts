/* The few JupyterLab 4 types this extension uses, declared here instead of
 * installing @jupyterlab/notebook and its tree (hundreds of MB) only for
 * their types: at run time the module is JupyterLab's own shared singleton
 * (never bundled; package.json "sharedPackages"). Cell, Comm, Kernel and
 * NotebookPanel are the shapes used (type-only, erased). The test in a real
 * JupyterLab (tests/notebook/test_jupyterlab.py) checks them. */
declare module '@jupyterlab/notebook' {
  export interface Signal<S, A> {
    connect(fn: (sender: S, args: A) => void): boolean;
  }
  export interface CommMsg { content: { data: { [k: string]: unknown } } }
  export interface Comm {
    send(data: { [k: string]: unknown }): unknown;
    onMsg: (msg: CommMsg) => void | PromiseLike<void>;
    onClose: (msg: CommMsg) => void | PromiseLike<void>;
  }
  export interface Kernel {
    registerCommTarget(name: string, cb: (comm: Comm, msg: CommMsg) => void): void;
  }
  export interface Cell {
    node: HTMLElement;
    editor: unknown;
    model: { id: string; type: string };
  }
  export interface NotebookPanel {
    content: { widgets: ReadonlyArray<Cell> };
    sessionContext: {
      session: { kernel: Kernel | null } | null;
      kernelChanged: Signal<unknown, { newValue: Kernel | null }>;
      ready: Promise<void>;
    };
  }
  export interface INotebookTracker {
    widgetAdded: Signal<unknown, NotebookPanel>;
  }
  export const INotebookTracker: unknown;
  export namespace NotebookActions {
    const executed: Signal<unknown, { cell: Cell }>;
  }
}
