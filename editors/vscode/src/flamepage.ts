// The flame-graph page for the webview, from the server's --html report
// (hotline.flameGraph {page: true}; server/store/report.html). Pure: no
// vscode import, so that unit.ts checks it.

/** The report page made fit for a VS Code webview: its own CSP (which
 * allows its inline script) is replaced by one that allows only scripts
 * carrying `nonce` and styles from the page itself or the webview, and every
 * <script> gets the nonce. Nothing remote is allowed: default-src 'none'. */
export function webviewHtml(page: string, nonce: string, cspSource: string): string {
  const csp =
    `default-src 'none'; style-src ${cspSource} 'unsafe-inline'; ` + `script-src 'nonce-${nonce}'; img-src data:`;
  const meta = /<meta http-equiv="Content-Security-Policy" content="[^"]*">/;
  if (!meta.test(page)) throw new Error('the report page has no Content-Security-Policy to replace');
  return page
    .replace(meta, `<meta http-equiv="Content-Security-Policy" content="${csp}">`)
    .replace(/<script(?=[ >])/g, `<script nonce="${nonce}"`);
}

/** 32 random alphanumerics for the CSP nonce. */
export function makeNonce(rand: () => number = Math.random): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += abc[Math.floor(rand() * abc.length)];
  return s;
}
