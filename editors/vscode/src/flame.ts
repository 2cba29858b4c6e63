// "Hotline: Show flame graph": the --html report's flame graph, line table,
// memory footprint and leaks in a webview beside the editor
// (docs/pictures.md). The page comes from the server once
// (hotline.flameGraph {page: true}); while the panel is visible the
// extension asks every POLL_MS for data newer than the version it holds and
// posts it to the page, which redraws in place (zoom and search kept), so a
// run or an attach shows live. A click on a frame zooms there and opens its
// file at its line in the editor.
import * as vscode from 'vscode';
import { makeNonce, webviewHtml } from './flamepage';

const POLL_MS = 1000;

interface FlameReply {
  version: number;
  running: boolean;
  page?: string;
  data?: unknown;
  unchanged?: boolean;
}

type Request = (command: string, arg: object) => Promise<unknown>;

export class FlameView {
  private panel: vscode.WebviewPanel | undefined;
  private timer: NodeJS.Timeout | undefined;
  private version = 0;
  private busy = false;

  /** loud: the command's request (shows errors); quiet: the poll's. */
  constructor(
    private readonly loud: Request,
    private readonly quiet: Request,
    private readonly log: (m: string) => void,
  ) {}

  async show(): Promise<void> {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      return;
    }
    const r = (await this.loud('hotline.flameGraph', { page: true })) as FlameReply | undefined;
    if (!r?.page) return;
    const panel = vscode.window.createWebviewPanel(
      'hotline.flameGraph',
      'Hotline: flame graph',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
      { enableScripts: true, localResourceRoots: [], retainContextWhenHidden: true },
    );
    this.panel = panel;
    this.version = r.version;
    panel.webview.html = webviewHtml(r.page, makeNonce(), panel.webview.cspSource);
    panel.webview.onDidReceiveMessage((m) => this.message(m));
    panel.onDidDispose(() => {
      clearInterval(this.timer);
      this.timer = undefined;
      this.panel = undefined;
    });
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    // the page drew the data it came with as "not running": tell it at once
    if (r.running) void this.poll(true);
  }

  private async poll(force = false): Promise<void> {
    const panel = this.panel;
    if (!panel || this.busy || (!panel.visible && !force)) return;
    this.busy = true;
    try {
      const r = (await this.quiet('hotline.flameGraph', force ? {} : { since: this.version })) as
        | FlameReply
        | undefined;
      if (r && !r.unchanged && r.data && this.panel === panel) {
        this.version = r.version;
        await panel.webview.postMessage({ type: 'data', data: r.data, running: r.running });
      }
    } catch (e) {
      this.log(`flame graph: ${e instanceof Error ? e.message : e}`); /* no profile now: keep the last picture */
    } finally {
      this.busy = false;
    }
  }

  private async message(m: { type?: string; file?: string; line?: number }): Promise<void> {
    if (m?.type !== 'open' || typeof m.file !== 'string') return;
    const line = Math.max(0, (m.line ?? 1) - 1);
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(m.file));
      await vscode.window.showTextDocument(doc, {
        viewColumn: vscode.ViewColumn.One,
        selection: new vscode.Range(line, 0, line, 0),
      });
    } catch (e) {
      void vscode.window.showWarningMessage(`Hotline: cannot open ${m.file}: ${e instanceof Error ? e.message : e}`);
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
