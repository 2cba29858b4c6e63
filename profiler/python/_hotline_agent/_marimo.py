"""marimo: `import hotline; hotline.marimo()` in a cell of `marimo edit`
(or `marimo run`) turns on, for that notebook's kernel, what `%load_ext
hotline` does in JupyterLab (docs/notebooks.md, "marimo, inside marimo"):

- while a cell runs, its output area shows the cell's line running now, the
  seconds the agent has charged to it so far, and the call chain under it
  from the user's call down (the middle elided), updated every 0.25 s;
- when the cell ends, that goes and the cell's per-line results (seconds,
  share, memory) take its place; a cell that shows a value of its own (or
  raised) keeps it, and the results go to its console as text instead.

How: marimo runs every cell through its kernel's cell hooks
(marimo/_runtime/runner/hooks.py, NotebookCellHooks: pre- and
post-execution). hotline.marimo() adds one of each to the kernel (for the
runs to come) and to the runner of the run it is in (the cells after it
in the same run). The pre-execution hook starts an agent writing to a
private file (as the IPython extension's Session does) and a thread that
reads the cell thread's stack (the Jupyter live view's cell_snapshot) and
the agent's stream as it grows, and sends the cell's output over marimo's
own stream, the way mo.output.replace does from a mo.Thread (a copy of the
kernel's stream for a thread; the cell's own imperative outputs, if any,
stay above ours). The post-execution hook, first of marimo's, stops both
and puts the table in the cell's output with mo.output.append, inside the
cell's execution context: marimo then sends that instead of the empty
output it would send to clear the cell.

Uses marimo's internal modules (hooks, runner, stream): tested with marimo
0.25.2 (tests/notebook/test_marimo_page.py); another version that moved
them gets a clear error from hotline.marimo(), never a broken cell."""
import html
import linecache
import os
import shutil
import sys
import tempfile
import threading
import time

import _hotline_agent as hotline
from . import _cells, _report
from ._ipython import cell_snapshot, chain_of, elide

LIVE_PERIOD_S = 0.25
LIVE_FIRST_S = 0.3  # a cell shorter than this never shows the live part
MAX_ROWS = 200      # lines of the table

_state = {"tmp": None, "runs": 0, "hooked": set()}
_running = {}  # cell id -> Run


def enable():
    """hotline.marimo(): hook this marimo kernel's cells. Returns a line
    saying what is on; raises RuntimeError outside a marimo kernel."""
    try:
        from marimo._runtime.context import get_context
        from marimo._runtime.runner.hooks import Priority
        ctx = get_context()
        kernel = ctx._kernel
        hooks = kernel._hooks
    except Exception as e:
        raise RuntimeError("hotline.marimo() runs in a cell of `marimo edit` or `marimo run`"
                           " (a marimo kernel): %s" % (e,)) from None
    if id(hooks) not in _state["hooked"]:
        _add(hooks, Priority)
        _state["hooked"].add(id(hooks))
    runner = _current_runner(sys._getframe(1))
    if runner is not None and _pre not in runner._hooks.pre_execution_hooks:
        _add(runner._hooks, Priority)  # the cells after this one in this run
    return "hotline: on: a running cell shows its live line, then its per-line results"


def _add(hooks, priority):
    hooks.add_pre_execution(_pre, priority.LATE)  # after marimo's "running" status
    hooks.add_post_execution(_post, priority.EARLY)  # before marimo sends the output


def _current_runner(frame):
    """The marimo Runner whose run this cell is in (a frame of its methods
    up the stack), or None."""
    try:
        from marimo._runtime.runner.cell_runner import Runner
    except ImportError:
        return None
    while frame is not None:
        me = frame.f_locals.get("self")
        if isinstance(me, Runner):
            return me
        frame = frame.f_back
    return None


def _tmpdir():
    if _state["tmp"] is None or not os.path.isdir(_state["tmp"]):
        import atexit
        _state["tmp"] = tempfile.mkdtemp(prefix="hotline-marimo-")  # mode 0700
        atexit.register(shutil.rmtree, _state["tmp"], True)
    return _state["tmp"]


def _pre(cell, ctx=None):
    try:
        for cid, run in list(_running.items()):
            if not _on_stack(run.path):  # its end never came (an interrupt): let it go
                del _running[cid]
                run.abandon()
        if _running:
            return  # a nested run (a cell run from a cell): the outer one shows
        code = cell.body or cell.last_expr
        if code is None:
            return
        _running[cell.cell_id] = Run(cell.cell_id, code.co_filename)
    except Exception:
        pass  # never disturb the cell


def _on_stack(path):
    """True when a frame of the file path is on this thread's stack."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == path:
            return True
        frame = frame.f_back
    return False


def _post(cell, ctx, run_result):
    run = _running.pop(cell.cell_id, None)
    if run is None:
        return
    try:
        run.finish(run_result)
    except Exception as e:
        print("hotline: no per-line results: %s" % (e,), file=sys.stderr)


class Run:
    """One cell's run: the agent (when this process is not profiled
    otherwise), the live thread, the table at the end."""

    def __init__(self, cell_id, path):
        from marimo._runtime.context import get_context
        self.cell_id, self.path = cell_id, path
        self.tid = threading.get_ident()
        self.t0 = time.monotonic()
        self.ctx = get_context()
        self.stream = self.ctx.stream.copy_for_thread()
        self.out = None
        self.prof = _report.Profile()
        self.pending = b""
        self.offset = 0
        self.tee = False
        _state["runs"] += 1
        out = os.path.join(_tmpdir(), "cell-%d.jsonl" % _state["runs"])
        if hotline.running() or hotline.connected():
            # profiled already (streaming to the editor, hotline.start()): a
            # copy of that agent's stream while the cell runs, as the IPython
            # extension's Session does, so the table comes all the same
            from . import _agent
            try:
                _agent.tee(out)
                self.out, self.tee = out, True
            except (OSError, RuntimeError) as e:  # the live part alone
                print("hotline: no per-line results: %s" % (e,), file=sys.stderr)
        else:
            self.out = out
            hotline.start(out=self.out, include=[os.getcwd()], memory=True)
        self.positions = {}
        self.seen = {}  # cell line -> live ticks on it (no agent of ours)
        self.shown = None
        self.updates = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._live, name="hotline-marimo-live",
                                       daemon=True)
        self.thread.start()

    # --- the agent's stream, read as it grows -------------------------------

    def _read(self):
        """Feed what the agent wrote since the last call (whole lines)."""
        if self.out is None:
            return
        try:
            with open(self.out, "rb") as f:
                f.seek(self.offset)
                data = f.read(16 << 20)
        except OSError:
            return
        self.offset += len(data)
        data = self.pending + data
        lines = data.split(b"\n")
        self.pending = lines.pop()
        for raw in lines:
            if raw:
                self.prof.feed(raw.decode("utf-8", "replace"))

    def rows(self):
        """{cell line: _report.Line} of this cell: the agent's lines of the
        cell's file, and of the notebook's lines the agent mapped it to
        (profiler/cells.h), numbered as in the cell again."""
        nlines = len(linecache.getlines(self.path)) or 10 ** 6
        where = {(self.path, 0)}
        got = _cells._answers.get(self.path)
        if got is not None and got[1] is not None:
            where.add(got[1])
        out = {}
        for (p, l), e in self.prof.lines.items():
            for path, delta in where:
                if p == path and 1 <= l - delta <= nlines:
                    out[l - delta] = e
        return out

    # --- while the cell runs --------------------------------------------------

    def _live(self):
        if self.stop.wait(LIVE_FIRST_S):
            return
        is_cell = self.path.__eq__
        while True:
            try:
                snap = cell_snapshot(self.tid, is_cell, self.positions)
                if snap:
                    self._read()
                    line = snap["line"]
                    self.seen[line] = self.seen.get(line, 0) + 1
                    if self.out is not None:
                        e = self.rows().get(line)
                        on_line = e.wall if e is not None else 0.0
                    else:
                        on_line = self.seen[line] * LIVE_PERIOD_S
                    text = live_html(line, on_line, snap["text"], elide(chain_of(snap)))
                    if text != self.shown and not self.stop.is_set():
                        self._send(text)
            except Exception:
                return  # never disturb the cell
            if self.stop.wait(LIVE_PERIOD_S):
                return

    def _send(self, text):
        """The cell's output now: what the cell put there itself (mo.output),
        then the live part."""
        from marimo._messaging.cell_output import CellChannel
        from marimo._messaging.notification_utils import CellNotificationUtils
        data = text
        ec = self.ctx.execution_context
        own = ec.output.stack() if ec is not None and ec.cell_id == self.cell_id else None
        if own is not None:
            from marimo._output.hypertext import Html
            from marimo._plugins.stateless.flex import vstack
            data = vstack([own, Html(text)]).text
        CellNotificationUtils.broadcast_output(
            channel=CellChannel.OUTPUT, mimetype="text/html", data=data,
            cell_id=self.cell_id, status=None, stream=self.stream)
        self.shown = text
        self.updates += 1

    # --- when it ends ---------------------------------------------------------

    def finish(self, run_result):
        """In the post-execution hook (the cell's execution context): the
        live part goes, the table comes."""
        self.stop.set()
        self.thread.join()
        wall = time.monotonic() - self.t0
        if self.out is None:
            self._clear_live(run_result)
            return
        self._stop_agent()
        self._read()
        try:
            os.unlink(self.out)
        except OSError:
            pass
        rows = self.rows()
        quiet = run_result.output is None and run_result.exception is None
        if quiet:
            from marimo import output
            output.append(_Html(table_html(rows, self.prof, wall, self.path)))
        else:  # the cell's value (or its error) keeps the output area
            self._clear_live(run_result)
            print(table_text(rows, self.prof, wall, self.path))

    def _stop_agent(self):
        """Stop our agent, or our copy of the process's own agent's stream."""
        if not self.tee:
            hotline.stop()
            return
        from . import _agent
        try:
            _agent.tee(None)
        except (OSError, RuntimeError):
            pass  # the agent ended meanwhile: the file has what it wrote

    def abandon(self):
        """Stop the thread and the agent, show nothing."""
        self.stop.set()
        self.thread.join()
        if self.out is not None:
            self._stop_agent()
            try:
                os.unlink(self.out)
            except OSError:
                pass

    def _clear_live(self, run_result):
        """marimo sends the cell's value, its error, or an empty output when
        the cell put nothing there itself; only its own imperative output
        (mo.output) would not be sent again: send it, without the live part."""
        if self.shown is None or run_result.output is not None or run_result.exception:
            return
        if run_result.accumulated_output:
            from marimo._runtime.output import _output
            _output.flush()


def _Html(text):
    from marimo._output.hypertext import Html
    return Html(text)


STYLE_LIVE = ("font-family: var(--monospace-font, monospace); font-size: 12px;"
              " border-left: 3px solid #2e7d32; padding: 2px 8px; line-height: 1.5")


def live_html(line, on_line, text, chain):
    """The live part: the line, its seconds so far, its text; the chain."""
    where = "\u25b6 line %d (%.1f s on this line): " % (line, on_line)
    return ('<div class="hotline-live" style="%s"><div class="hotline-where">%s'
            '<code>%s</code></div><div class="hotline-chain" style="color: #555">%s</div>'
            '</div>' % (STYLE_LIVE, html.escape(where), html.escape(text),
                        html.escape(chain or "(in the line's own code)")))


def _table_rows(rows):
    """[(cell line, Line)] with time or memory, by line."""
    return sorted((l, e) for l, e in rows.items() if e.wall > 0 or e.alloc >= 0.05)[:MAX_ROWS]


def _summary(rows, prof, wall):
    total = prof.total_wall()
    hot = max(rows.items(), key=lambda kv: kv[1].wall, default=None)
    s = "hotline: %.2f s wall, %d samples" % (wall, prof.samples)
    if hot is not None and total > 0:
        s += ", hottest line %d (%.0f%%)" % (hot[0], 100 * hot[1].wall / total)
    if prof.peak_mb > 0:
        s += ", memory peak %.1f MB" % prof.peak_mb
    return s, total


TD = "padding: 1px 8px"


def table_html(rows, prof, wall, path):
    """The per-line results: line, source, seconds, share (a bar), and the
    memory columns when some line allocated."""
    summary, total = _summary(rows, prof, wall)
    shown = _table_rows(rows)
    mem = any(e.alloc >= 0.05 for _l, e in shown)
    kept = any(e.kept >= 0.05 for _l, e in shown)
    head = "".join('<th style="%s; text-align: %s">%s</th>' % (TD, a, h) for h, a in (
        ("line", "right"), ("source", "left"), ("s", "right"), ("%", "right"))
        + ((("alloc MB", "right"),) if mem else ()) + ((("kept MB", "right"),) if kept else ()))
    body = []
    for l, e in shown:
        pct = 100 * e.wall / total if total > 0 else 0.0
        cells = ['<td class="hotline-line" style="%s">%d</td>' % (TD, l),
                 '<td style="%s; text-align: left"><code>%s</code></td>' % (TD, html.escape(
                     linecache.getline(path, l).strip()[:80])),
                 '<td class="hotline-s" style="%s">%.3f</td>' % (TD, e.wall),
                 '<td class="hotline-pct" style="%s; min-width: 80px; background:'
                 ' linear-gradient(90deg, rgba(46,125,50,0.3) %.1f%%, transparent %.1f%%)">'
                 '%.1f%%</td>' % (TD, pct, pct, pct)]
        if mem:
            cells.append('<td style="%s">%s</td>' % (
                TD, "%.1f" % e.alloc if e.alloc >= 0.05 else ""))
        if kept:
            cells.append('<td style="%s">%s</td>' % (
                TD, "%.1f" % e.kept if e.kept >= 0.05 else ""))
        body.append('<tr data-line="%d">%s</tr>' % (l, "".join(cells)))
    if not body:
        body.append('<tr><td colspan="4">no samples on this cell\'s lines</td></tr>')
    return ('<div class="hotline-lines" style="font-size: 12px">'
            '<div class="hotline-summary" style="color: #555">%s</div>'
            '<table style="border-collapse: collapse; font-size: 12px; text-align: right">'
            '<thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>' % (
                html.escape(summary), head, "".join(body)))


def table_text(rows, prof, wall, path):
    """The same as text, for the cell's console."""
    summary, total = _summary(rows, prof, wall)
    out = [summary]
    for l, e in _table_rows(rows):
        pct = 100 * e.wall / total if total > 0 else 0.0
        mem = "  alloc %.1f MB" % e.alloc if e.alloc >= 0.05 else ""
        out.append("  line %3d %8.3f s %5.1f%%%s  %s" % (
            l, e.wall, pct, mem, linecache.getline(path, l).strip()[:80]))
    return "\n".join(out)
