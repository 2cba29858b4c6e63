// Which `hotline` binary runs the language server (docs/editors.md, "Which
// server runs"). Pure: no vscode import, so the unit checks run it in node.
import * as fs from 'fs';
import * as path from 'path';

export type IsExecutable = (p: string) => boolean;

export function isExecutableFile(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The first `name` on the PATH string `pathEnv` that is an executable file. */
export function findOnPath(name: string, pathEnv: string, isExec: IsExecutable = isExecutableFile): string | undefined {
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    if (isExec(p)) return p;
  }
  return undefined;
}

export interface ServerChoice {
  /** the executable to run as `<path> lsp` */
  path: string;
  /** where it came from, for the log and the error message */
  source: 'setting' | 'interpreter' | 'PATH' | 'bundled';
}

/**
 * The server, in this order:
 *  1. `hotline.serverPath` when set (the user's explicit choice wins);
 *  2. `hotline` next to the selected interpreter (`<venv>/bin/python` →
 *     `<venv>/bin/hotline`: what `pip install hotline-profiler` put in that
 *     environment), so that its agent was built for that very Python; the
 *     interpreter's path is taken as given, not resolved: a venv's python is
 *     a symlink to the base interpreter, whose folder is not the venv's;
 *  3. `hotline` on PATH;
 *  4. the binary bundled in the extension (bin/hotline, with the agents for
 *     the Pythons it was built with).
 * A bare interpreter name (`python3`) names no environment: step 2 is skipped.
 */
export function chooseServer(o: {
  setting: string;
  python?: string;
  pathEnv: string;
  bundled: string;
  isExec?: IsExecutable;
}): ServerChoice {
  const isExec = o.isExec ?? isExecutableFile;
  if (o.setting) return { path: o.setting, source: 'setting' };
  if (o.python && path.isAbsolute(o.python)) {
    const p = path.join(path.dirname(o.python), 'hotline');
    if (isExec(p)) return { path: p, source: 'interpreter' };
  }
  const onPath = findOnPath('hotline', o.pathEnv, isExec);
  if (onPath) return { path: onPath, source: 'PATH' };
  return { path: o.bundled, source: 'bundled' };
}
