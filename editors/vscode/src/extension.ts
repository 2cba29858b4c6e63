// Hotline for VS Code: starts `hotline lsp` for Python files through
// vscode-languageclient (CodeLens, inlay hints, hovers, diagnostics and
// $/progress are the client's native features), adds the Profile / Stop /
// Clear / Show commands, and draws the live "executing" marker from the
// server's hotline/executing notification (gutter icon, whole-line
// highlight with an overview-ruler mark, status-bar item with a frame picker;
// the text and frame names are the server's); hotline/runEnded ends a run.
// "Show flame graph" is a webview of the server's report (flame.ts).
// All mutable state lives in one `Hotline` instance per activation.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { FlameView } from './flame';
import { attachItems, Executing, frameItems, memoryAttachWarning, PyProcess, RunEnded, statusText } from './frames';
import { chooseServer, ServerChoice } from './server';

/** Settings the extension handles itself and does not send to the server. */
const CLIENT_ONLY = ['serverPath', 'python', 'args', 'askForArguments', 'executing'];

class Hotline {
  client: LanguageClient | undefined;
  readonly out = vscode.window.createOutputChannel('Hotline');
  readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  readonly deco: vscode.TextEditorDecorationType;
  exec: Executing | undefined;
  running = false;
  /** settles when the last start() settles; commands wait on it */
  ready: Promise<void> = Promise.resolve();
  /** the server the last start() ran (server.ts) */
  server: ServerChoice | undefined;

  constructor(readonly ctx: vscode.ExtensionContext) {
    this.deco = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      gutterIconPath: ctx.asAbsolutePath('media/executing.svg'),
      gutterIconSize: 'contain',
      backgroundColor: new vscode.ThemeColor('editor.wordHighlightStrongBackground'),
      borderColor: new vscode.ThemeColor('editorWarning.foreground'),
      borderStyle: 'solid',
      borderWidth: '0 0 0 2px',
      overviewRulerColor: new vscode.ThemeColor('editorWarning.foreground'),
      overviewRulerLane: vscode.OverviewRulerLane.Full,
    });
    this.status.name = 'Hotline: executing line';
    this.status.command = 'hotline.pickFrame';
    this.status.tooltip = 'Hotline: the running line and the library call under it (click for the frames)';
    ctx.subscriptions.push(this.out, this.status, this.deco);
  }

  config() {
    return vscode.workspace.getConfiguration('hotline');
  }

  /** The server's settings: the "hotline" section minus client-only keys,
   * minus empty strings and 0 timeouts (the server's defaults apply then). */
  serverSettings(): Record<string, unknown> {
    const all = JSON.parse(JSON.stringify(this.config())) as Record<string, unknown>;
    for (const k of CLIENT_ONLY) delete all[k];
    const prune = (o: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(o)) {
        if (v === '' || (k === 'timeout_s' && v === 0)) delete o[k];
        else if (v && typeof v === 'object' && !Array.isArray(v)) prune(v as Record<string, unknown>);
      }
    };
    prune(all);
    return all;
  }

  /** The folder whose interpreter picks the server: the active editor's, else the first. */
  serverResource(): vscode.Uri | undefined {
    const doc = vscode.window.activeTextEditor?.document.uri;
    const folder = (doc && vscode.workspace.getWorkspaceFolder(doc)) ?? vscode.workspace.workspaceFolders?.[0];
    return folder?.uri ?? doc;
  }

  /** hotline.serverPath, else `hotline` in the selected interpreter's
   * environment (pip-installed there: its agent matches that Python), else
   * `hotline` on PATH, else the bundled bin/hotline (server.ts). */
  async chooseServer(): Promise<ServerChoice & { python: string }> {
    const python = await this.python(this.serverResource());
    const choice = chooseServer({
      setting: this.config().get<string>('serverPath', ''),
      python,
      pathEnv: process.env.PATH ?? '',
      bundled: this.ctx.asAbsolutePath(path.join('bin', 'hotline')),
    });
    return { ...choice, python };
  }

  /** The Python extension's interpreter, else hotline.python, else
   * <workspace>/.venv/bin/python, else python3. */
  async python(resource: vscode.Uri | undefined): Promise<string> {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (ext) {
      try {
        const api = ext.isActive ? ext.exports : await ext.activate();
        const env = api?.environments?.getActiveEnvironmentPath?.(resource);
        if (env?.path && fs.existsSync(env.path)) return env.path;
        const det = api?.settings?.getExecutionDetails?.(resource);
        if (det?.execCommand?.[0]) return det.execCommand[0];
      } catch (e) {
        this.out.appendLine(`python extension: ${e}`);
      }
    }
    const set = this.config().get<string>('python', '');
    if (set) return set;
    const folder = resource && vscode.workspace.getWorkspaceFolder(resource);
    if (folder) {
      const venv = path.join(folder.uri.fsPath, '.venv', 'bin', 'python');
      if (fs.existsSync(venv)) return venv;
    }
    return 'python3';
  }

  /** A new interpreter selected in the Python extension: restart the server
   * when that changes which hotline runs (another environment's). */
  async watchInterpreter(): Promise<void> {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (!ext) return;
    try {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const ev = api?.environments?.onDidChangeActiveEnvironmentPath;
      if (typeof ev !== 'function') return;
      this.ctx.subscriptions.push(
        ev(async () => {
          const next = await this.chooseServer();
          if (next.path === this.server?.path) return;
          this.out.appendLine(`interpreter ${next.python}: the server is now ${next.path} (${next.source})`);
          await this.restart();
        }),
      );
    } catch (e) {
      this.out.appendLine(`python extension: ${e}`);
    }
  }

  /** Starts the server; commands wait on this.ready, which covers choosing
   * the server too (the Python extension may take a while to answer). */
  start(): Promise<void> {
    this.ready = this.startClient();
    return this.ready;
  }

  private async startClient(): Promise<void> {
    const choice = await this.chooseServer();
    this.server = choice;
    const command = choice.path;
    const from = choice.source === 'interpreter' ? `the environment of ${choice.python}` : choice.source;
    this.out.appendLine(`starting ${command} lsp (${from}; interpreter ${choice.python})`);
    const serverOptions: ServerOptions = { command, args: ['lsp'] };
    const clientOptions: LanguageClientOptions = {
      // files, and the Python cells of Jupyter notebooks (the server maps
      // ipykernel's cell files to them: docs/notebooks.md, "Cells in the editor")
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'vscode-notebook-cell', language: 'python' },
      ],
      outputChannel: this.out,
      initializationOptions: { ...this.serverSettings(), executing: true },
    };
    const client = new LanguageClient('hotline', 'Hotline', serverOptions, clientOptions);
    client.registerFeature({
      fillClientCapabilities(caps) {
        caps.experimental = { ...(caps.experimental ?? {}), hotlineExecuting: true, hotlineRunEnded: true };
      },
      initialize() {},
      getState: () => ({ kind: 'static' }),
      clear() {},
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        this.setExecuting(undefined);
        this.setRunning(false);
      }
    });
    client.onNotification('hotline/executing', (p: Executing) => this.setExecuting(p));
    client.onNotification('hotline/runEnded', (p: RunEnded) => this.runEnded(p));
    this.client = client;
    await client.start();
  }

  async restart(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) await c.stop().catch((e) => this.out.appendLine(`stop: ${e}`));
    await this.start();
  }

  // ---- live marker ----

  setExecuting(p: Executing | undefined): void {
    const live = !!p && typeof p.uri === 'string' && this.config().get<boolean>('executing.enabled', true);
    this.exec = live ? p : undefined;
    this.paint();
  }

  /** hotline/runEnded: the server sends it after the run's final data, so the
   * views asked again now show the finished run (VS Code can keep lenses of
   * a fetch made during the run even though later fetches answered newer). */
  runEnded(p: RunEnded): void {
    this.out.appendLine(`run ended: ${p?.outcome ?? '?'} (${p?.reason ?? ''})`);
    this.setRunning(false);
    void vscode.commands.executeCommand('setContext', 'hotline.attached', false);
    this.exec = undefined;
    this.paint();
    this.refreshViews();
  }

  /** Makes VS Code ask the server again for lenses and hints of open documents. */
  refreshViews(): void {
    const c = this.client;
    if (!c || !c.isRunning()) return;
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.languageId !== 'python') continue;
      c.getFeature('textDocument/codeLens')?.getProvider(doc)?.onDidChangeCodeLensEmitter.fire();
      c.getFeature('textDocument/inlayHint')?.getProvider(doc)?.onDidChangeInlayHints.fire();
    }
  }

  paint(): void {
    const e = this.exec;
    for (const ed of vscode.window.visibleTextEditors) {
      const here = e && e.uri && ed.document.uri.toString() === vscode.Uri.parse(e.uri).toString();
      const line = e?.line ?? 0;
      ed.setDecorations(
        this.deco,
        here && line < ed.document.lineCount
          ? [{ range: new vscode.Range(line, 0, line, 0), hoverMessage: statusText(e!) }]
          : [],
      );
    }
    if (e) {
      this.status.text = statusText(e);
      this.status.show();
    } else {
      this.status.hide();
    }
  }

  setRunning(on: boolean): void {
    this.running = on;
    void vscode.commands.executeCommand('setContext', 'hotline.running', on);
    if (on) void vscode.commands.executeCommand('setContext', 'hotline.hasResults', true);
  }

  async pickFrame(): Promise<void> {
    const e = this.exec;
    if (!e || !e.stack?.length) {
      void vscode.window.showInformationMessage('Hotline: nothing is running');
      return;
    }
    const { title, items } = frameItems(e);
    const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'Open a frame' });
    if (!pick?.frame.file) return;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(pick.frame.file));
    const line = Math.max(0, (pick.frame.line ?? 1) - 1);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0) });
  }

  // ---- commands ----

  async execute(command: string, arg: object): Promise<unknown> {
    await this.ready.catch(() => undefined); // a command right after activation waits for the server
    if (!this.client || !this.client.isRunning()) {
      void vscode.window.showErrorMessage('Hotline: the language server is not running (see Output ▸ Hotline)');
      return undefined;
    }
    try {
      return await this.client.sendRequest('workspace/executeCommand', { command, arguments: [arg] });
    } catch (err) {
      void vscode.window.showErrorMessage(`Hotline: ${err instanceof Error ? err.message : err}`);
      return undefined;
    }
  }

  /** A request that fails silently (the flame graph's poll): the error is thrown. */
  async request(command: string, arg: object): Promise<unknown> {
    if (!this.client || !this.client.isRunning()) throw new Error('the language server is not running');
    return this.client.sendRequest('workspace/executeCommand', { command, arguments: [arg] });
  }

  /** Hotline: Attach to process… (docs/attach.md): a quick pick over the
   * server's hotline.listProcesses, this workspace's programs first; the
   * editor then shows what it shows during a run. memory: "Attach to process
   * with memory…", which injects the agent (asked first: it changes the
   * process). */
  async attachProcess(memory = false): Promise<void> {
    const procs = (await this.execute('hotline.listProcesses', {})) as PyProcess[] | undefined;
    if (!procs) return;
    if (procs.length === 0) {
      void vscode.window.showInformationMessage('Hotline: no Python process to attach to');
      return;
    }
    const { title, items } = attachItems(procs, memory);
    const pick = await vscode.window.showQuickPick(items, {
      title,
      placeHolder: 'pid, program or Python version',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return;
    if (!pick.proc.canAttach) {
      void vscode.window.showErrorMessage(`Hotline: ${pick.proc.why ?? 'cannot attach'}`);
      return;
    }
    if (memory) {
      const go = 'Attach with memory';
      const ok = await vscode.window.showWarningMessage(memoryAttachWarning(pick.proc), { modal: true }, go);
      if (ok !== go) return;
    }
    this.out.appendLine(`hotline.attach ${pick.proc.pid}${memory ? ' (memory)' : ''}`);
    this.setRunning(true);
    void vscode.commands.executeCommand('setContext', 'hotline.attached', true);
    const r = await this.execute('hotline.attach', memory ? { pid: pick.proc.pid, memory: true } : { pid: pick.proc.pid });
    if (!r) {
      this.setRunning(false);
      void vscode.commands.executeCommand('setContext', 'hotline.attached', false);
    }
  }

  /** Hotline: Profile cells of this notebook. An extension cannot reach the
   * notebook's kernel without the Jupyter extension's API, so this puts the
   * line the user runs there, `%load_ext hotline`, in a new first cell (or
   * on the clipboard): run, it streams the kernel to this editor. A
   * notebook that has the line already gets no second one. */
  async profileNotebook(): Promise<void> {
    const nb = vscode.window.activeNotebookEditor?.notebook;
    const line = '%load_ext hotline';
    const has = nb
      ? nb.getCells().findIndex((c) => c.kind === vscode.NotebookCellKind.Code &&
          c.document.getText().split('\n').some((l) => l.trim() === line))
      : -1;
    const importable =
      'hotline must be importable in the kernel: `pip install hotline-profiler` in its environment ' +
      '(from a clone of Hotline: `pip install .`)';
    const how =
      has >= 0
        ? `This notebook has \`${line}\` (cell ${has + 1}): run it in the kernel, then every cell run after ` +
          `it shows its live line, hints and lenses here. ${importable}.`
        : `Run \`${line}\` in this notebook's kernel: every cell run after it shows its live line, ` +
          `hints and lenses here (the kernel must run in this workspace). ${importable}.`;
    const insert = 'Insert the cell';
    const copy = 'Copy';
    const pick = await vscode.window.showInformationMessage(
      `Hotline: ${how}`, ...(nb && has < 0 ? [insert] : []), copy);
    if (pick === copy) {
      await vscode.env.clipboard.writeText(line);
    } else if (pick === insert && nb) {
      const edit = new vscode.WorkspaceEdit();
      const cell = new vscode.NotebookCellData(vscode.NotebookCellKind.Code, line, 'python');
      edit.set(nb.uri, [vscode.NotebookEdit.insertCells(0, [cell])]);
      await vscode.workspace.applyEdit(edit);
    }
  }

  async profile(ask: boolean): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    if (!ed || ed.document.languageId !== 'python' || ed.document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage('Hotline: open a Python file first');
      return;
    }
    let args = this.config().get<string[]>('args', []);
    if (ask || this.config().get<boolean>('askForArguments', false)) {
      const text = await vscode.window.showInputBox({
        title: 'Hotline: program arguments',
        prompt: 'Arguments for the program (split on spaces; quote with "…")',
        value: args.join(' '),
      });
      if (text === undefined) return;
      args = (text.match(/"[^"]*"|\S+/g) ?? []).map((a) => a.replace(/^"(.*)"$/, '$1'));
    }
    if (ed.document.isDirty) await ed.document.save();
    const uri = ed.document.uri;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    const arg = {
      uri: uri.toString(),
      args,
      python: await this.python(uri),
      cwd: folder ? folder.uri.fsPath : path.dirname(uri.fsPath),
    };
    this.out.appendLine(`hotline.run ${JSON.stringify(arg)}`);
    this.setRunning(true);
    const r = await this.execute('hotline.run', arg);
    if (!r) this.setRunning(false);
  }
}

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  const h = new Hotline(ctx);
  const reg = (id: string, fn: () => unknown) => ctx.subscriptions.push(vscode.commands.registerCommand(id, fn));
  reg('hotline.profileFile', () => h.profile(false));
  reg('hotline.profileWithArgs', () => h.profile(true));
  reg('hotline.stopRun', () => h.execute('hotline.stop', {}));
  reg('hotline.clearResults', async () => {
    await h.execute('hotline.clear', {});
    void vscode.commands.executeCommand('setContext', 'hotline.hasResults', false);
  });
  reg('hotline.showProfileText', async () => {
    const r = (await h.execute('hotline.showProfile', { show: false })) as { text?: string } | undefined;
    if (r?.text) {
      const doc = await vscode.workspace.openTextDocument({ content: r.text, language: 'plaintext' });
      await vscode.window.showTextDocument(doc, { preview: true });
    }
  });
  reg('hotline.pickFrame', () => h.pickFrame());
  reg('hotline.profileNotebook', () => h.profileNotebook());
  const flame = new FlameView(
    (c, a) => h.execute(c, a),
    (c, a) => h.request(c, a),
    (m) => h.out.appendLine(m),
  );
  ctx.subscriptions.push(flame);
  reg('hotline.showFlameGraph', () => flame.show());
  reg('hotline.attachProcess', () => h.attachProcess());
  reg('hotline.attachProcessWithMemory', () => h.attachProcess(true));
  reg('hotline.detachProcess', () => h.execute('hotline.detach', {}));
  reg('hotline.restartServer', () => h.restart());
  reg('hotline.openProfileFile', async (file?: vscode.Uri) => {
    // a test's profile (pytest --hotline writes .hotline/tests/*.jsonl) or a saved JSON
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    const pick = file ? [file] : await vscode.window.showOpenDialog({
      canSelectMany: false,
      defaultUri: root ? vscode.Uri.joinPath(root, '.hotline', 'tests') : undefined,
      filters: { 'Hotline profiles': ['jsonl', 'json'] },
      openLabel: 'Show this profile',
    });
    if (!pick?.length) return;
    const r = (await h.execute('hotline.openProfile', { path: pick[0].fsPath })) as
      { program?: string; seconds?: number } | undefined;
    if (r) {
      void vscode.commands.executeCommand('setContext', 'hotline.hasResults', true);
      void vscode.window.showInformationMessage(
        `Hotline: showing ${pick[0].fsPath} (${(r.seconds ?? 0).toFixed(2)} s sampled)`);
    }
  });
  ctx.subscriptions.push(
    vscode.window.onDidChangeVisibleTextEditors(() => h.paint()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('hotline')) return;
      if (e.affectsConfiguration('hotline.serverPath')) {
        void h.restart();
        return;
      }
      if (e.affectsConfiguration('hotline.python')) {
        // another interpreter can mean another environment's server (the
        // other settings of the same change still go to the server below)
        void h.chooseServer().then((next) => (next.path !== h.server?.path ? h.restart() : undefined));
      }
      if (e.affectsConfiguration('hotline.executing')) h.setExecuting(h.exec);
      // hints / lenses / thresholds apply without a restart: the server
      // refreshes them when its settings change
      void h.client?.sendNotification('workspace/didChangeConfiguration', {
        settings: { hotline: h.serverSettings() },
      });
    }),
    { dispose: () => void h.client?.stop() },
  );
  await h.start().catch((e) => {
    h.out.appendLine(`cannot start the server: ${e}`);
    void vscode.window.showErrorMessage(`Hotline: cannot start ${h.server?.path ?? 'hotline'} (set hotline.serverPath)`);
  });
  void h.watchInterpreter();
}

export function deactivate(): void {
  /* the client is stopped through ctx.subscriptions */
}
