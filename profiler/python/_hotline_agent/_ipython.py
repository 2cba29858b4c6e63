"""The IPython extension: `%load_ext hotline`, then

    %%hotline        profile this cell, print its per-line report under it
    %hotline on|off  profile every cell run meanwhile, a report after each
    %hotline live    show the line running now under the running cell
    %hotline         say what is on

When the editor's Hotline server listens for the workspace (the socket
<workspace>/.hotline/agent.sock, found from the working directory upward),
loading the extension connects the whole kernel to it (hotline.connect())
and the editor shows the live line and the per-line profile; the magics then
print no report. HOTLINE_CONNECT=0 keeps the text reports.

Each profiled cell runs under its own agent (hotline.start() with `out` =
a private file, memory on), stopped when the cell ends; the stream is read
back and added up in Python (_report.py): no binary, no server. Between
profiled cells nothing is installed, so unprofiled cells pay nothing.

Which files count as the cell (the agent's include, profiler/walk.c
file_profiled): ipykernel compiles a cell to <tmp>/ipykernel_<pid>/<hash>.py,
plain IPython to "<ipython-input-N-hash>" (a relative name, which the agent
profiles only when a relative include pattern names it). The shell's own
compiler is asked for a probe name (compile.get_code_name) and its
directory, or its prefix up to the first digit plus "*", is included, with
the working directory (the user's own modules). Library code called from a
cell is charged to the cell's line that called it, as for a script.

The live view is a Python thread (not the agent: the agent's `now` stream
needs a server): a few times a second it reads the cell thread's frame
(sys._current_frames) and updates one display (display_id) under the cell;
it clears it when the cell ends. It only holds the GIL for that read and
the message, so a CPU-bound cell loses a fraction of a percent
(tests/bench/bench_notebook_live.py)."""
import atexit
import contextvars
import linecache
import os
import re
import shutil
import sys
import tempfile
import threading
import time

import _hotline_agent as hotline  # this package, by its private name
from . import _report

LIVE_PERIOD_S = 0.25  # Colab's footer moves about this often
LIVE_FIRST_S = 0.3    # a cell shorter than this never shows the footer
LIVE_LIB_FRAMES = 6   # innermost library frames shown under the line

_ext = None


def load(shell):
    global _ext
    if _ext is not None and _ext.shell is shell:
        return
    _ext = Extension(shell)
    _ext.connect()
    shell.register_magic_function(_ext.line_cell_magic, "line_cell", "hotline")
    shell.events.register("pre_run_cell", _ext.pre_run_cell)
    shell.events.register("post_run_cell", _ext.post_run_cell)


def unload(shell):
    global _ext
    if _ext is None:
        return
    _ext.close()
    for name, cb in (("pre_run_cell", _ext.pre_run_cell), ("post_run_cell", _ext.post_run_cell)):
        try:
            shell.events.unregister(name, cb)
        except ValueError:
            pass
    _ext = None


def _display_updates(shell):
    """True when the front end can replace an output in place (ipykernel and
    every Jupyter front end do; a terminal IPython prints each update)."""
    try:
        from IPython.core.displaypub import DisplayPublisher
    except ImportError:
        return False
    pub = getattr(shell, "display_pub", None)
    return pub is not None and type(pub).publish is not DisplayPublisher.publish


class Session:
    """One agent run: a cell (on), or the body of %%hotline. cell: the text
    whose lines the report shows (the cell, or the body with offset 1)."""

    def __init__(self, ext, cell, offset):
        self.ext = ext
        self.cell, self.offset = cell, offset
        self.sources = {}  # path -> _report.Source
        self.hidden = set()  # paths left out of the report
        self.compiled = ext.compiled()
        self.number = None  # the cell's In [N], when known before it runs
        ext.runs += 1
        self.out = os.path.join(ext.tmpdir(), "cell-%d.jsonl" % ext.runs)
        self.t0 = time.perf_counter()
        hotline.start(out=self.out, include=ext.include(), memory=True)

    def this_cell(self):
        """(file name, number) the shell compiled self.cell to, or
        (None, None). Read from what it compiled meanwhile (names are not
        predictable: IPython 9 numbers differently from 8, ipykernel hashes
        the text); the predicted name only where the shell keeps no map."""
        now = self.ext.compiled()
        if now is None:
            return self.ext.cell_name(self.cell), self.ext.shell.execution_count
        new = [(name, num) for name, num in now.items() if self.compiled.get(name) != num]
        want = self.ext.shell.transform_cell(self.cell).strip()
        for name, num in new:
            if "".join(linecache.getlines(name)).strip() == want:
                return name, num
        return new[0] if new else (None, None)

    def finish(self):
        """Stop the agent; the report (str)."""
        hotline.stop()
        wall = time.perf_counter() - self.t0
        name, number = self.this_cell()
        number = self.number if self.number is not None else number
        if name:
            self.sources[name] = _report.Source(
                "In [%s] (this cell)" % number, offset=self.offset,
                lines=self.cell.splitlines(), whole=True)
        try:
            prof = _report.read(self.out)
        finally:
            try:
                os.unlink(self.out)
            except OSError:
                pass
        for (path, _l) in prof.lines:
            if path not in self.sources:
                label = self.ext.label(path)
                if label:
                    self.sources[path] = _report.Source(label)
        for path in self.hidden:
            prof.drop_file(path)
        return _report.format_report(prof, self.sources, wall, "cell In [%s]" % number)


class Extension:
    def __init__(self, shell):
        self.shell = shell
        self.on = False
        self.live = False
        self.depth = 0
        self.runs = 0
        self.session = None      # the running Session
        self.own_session = False  # started by pre_run_cell (on) for this cell
        self._tmp = None
        self._live = None        # the running Live
        self.offsets = {}        # cell file -> line offset (%%hotline bodies: 1)
        self.numbers = {}        # cell file -> In [N] where the shell's map differs
        self.compiled_before = None  # compiled() when the cell began
        self.live_cost_s = 0.0   # CPU seconds the live thread used, all cells
        self.live_ticks = 0

    def tmpdir(self):
        if self._tmp is None or not os.path.isdir(self._tmp):
            self._tmp = tempfile.mkdtemp(prefix="hotline-nb-")  # mode 0700
            # forked children's streams (<file>.<pid>) land here too
            atexit.register(shutil.rmtree, self._tmp, True)
        return self._tmp

    def close(self):
        if self._live:
            self._live.finish()
            self._live = None
        if self.session:
            try:
                self.session.finish()
            except Exception:
                pass
            self.session = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    # --- which files are the cells --------------------------------------

    def cell_name(self, raw, number=None):
        """The file name the shell compiles this cell text to, or None."""
        comp = getattr(self.shell, "compile", None)
        get = getattr(comp, "get_code_name", None)
        if get is None:
            return None
        if number is None:
            number = self.shell.execution_count
        try:
            return get(raw, self.shell.transform_cell(raw), number)
        except Exception:
            return None

    def cell_pattern(self):
        """Include pattern for every cell's file name (see the module doc)."""
        name = self.cell_name("pass\n", 0) or "<ipython-input-0-x>"
        if os.path.isabs(name):
            return os.path.dirname(name)
        m = re.search(r"\d", name)
        return (name[:m.start()] + "*") if m else name

    def is_cell(self, path, pattern=None):
        pat = pattern or self.cell_pattern()
        if pat.endswith("*"):
            return path.startswith(pat[:-1])
        if os.path.isabs(pat) and not os.path.isabs(path):
            return False
        return path == pat or path.startswith(pat.rstrip(os.sep) + os.sep)

    def include(self):
        cwd = os.getcwd()
        inc = [self.cell_pattern(), cwd]
        if os.path.realpath(cwd) != cwd:
            inc.append(os.path.realpath(cwd))
        return inc

    def compiled(self):
        """New dict {file name: execution count} of what the shell compiled
        so far (IPython >= 8), or None."""
        m = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
        return dict(m) if isinstance(m, dict) else None

    def label(self, path):
        """"In [N]" for a cell the shell ran, else None (shown by path)."""
        comp = getattr(self.shell, "compile", None)
        num = self.numbers.get(path, getattr(comp, "_filename_map", {}).get(path))
        return "In [%s]" % num if num is not None else None

    # --- profiling --------------------------------------------------------

    def connect(self):
        """Stream the whole kernel to the editor when its server listens for
        this workspace (hotline.connect(); docs/notebooks.md): the editor
        then shows the live line and the per-line profile, and the magics
        have nothing to add. Without a server: the text reports."""
        if os.environ.get("HOTLINE_CONNECT") == "0":
            return None
        try:
            path = hotline.connect(include=self.include(), memory=True)
        except Exception as e:  # no agent for this Python, agent refused
            print("hotline: not streaming to the editor: %s" % (e,), file=sys.stderr)
            return None
        if path:
            print("hotline: streaming this kernel to the editor (%s)" % path)
        return path

    def _begin(self, cell, offset):
        if hotline.connected():
            print("hotline: this kernel streams to the editor (hotline.connect()):"
                  " the profile is shown there", file=sys.stderr)
            return None
        if hotline.running():
            print("hotline: this process is already profiled (hotline.start());"
                  " no cell report", file=sys.stderr)
            return None
        try:
            return Session(self, cell, offset)
        except Exception as e:  # no agent for this Python, agent refused
            print("hotline: cannot profile: %s" % (e,), file=sys.stderr)
            return None

    def _end(self, session):
        try:
            report = session.finish()
        except Exception as e:
            print("hotline: no report: %s" % (e,), file=sys.stderr)
            return
        print(report)

    def pre_run_cell(self, info=None):
        self.depth += 1
        if self.depth != 1:
            return
        raw = getattr(info, "raw_cell", None) or ""
        self.compiled_before = self.compiled()
        if self.on and self.session is None and not _is_hotline_cell(raw):
            self.session = self._begin(raw, 0)
            self.own_session = self.session is not None
        if self.live and _display_updates(self.shell):
            self._live = Live(self, threading.get_ident())

    def post_run_cell(self, result=None):
        self.depth = max(0, self.depth - 1)
        if self.depth != 0:
            return
        if self._live:
            self._live.finish()
            self._live = None
        if self.own_session:
            session, self.session, self.own_session = self.session, None, False
            if self.on:
                self._end(session)
            else:  # the `%hotline off` cell itself: no report
                try:
                    session.finish()
                except Exception:
                    pass  # a hook that raises would print IPython's own error

    # --- the magics ---------------------------------------------------------

    def line_cell_magic(self, line, cell=None):
        if cell is not None:
            return self.cell_magic(line, cell)
        arg = line.strip()
        if arg == "on":
            self.on = True
        elif arg == "off":
            self.on = False
        elif arg == "live":
            if not _display_updates(self.shell):
                print("hotline: live needs a front end that updates an output in"
                      " place (Jupyter, VS Code, Colab); this shell would print"
                      " every update", file=sys.stderr)
                return
            self.live = True
        elif arg in ("live off", "nolive"):
            self.live = False
        elif arg not in ("", "status"):
            print("usage: %hotline [on|off|live|live off|status], or %%hotline"
                  " on the first line of a cell", file=sys.stderr)
            return
        print("hotline: profiling every cell %s; live view %s" % (
            "on" if self.on else "off", "on" if self.live else "off"))

    def cell_magic(self, line, cell):
        """Run the cell's body with the shell (magics, display of the last
        value and tracebacks as usual), under a fresh agent; the body is the
        cell from its second line, hence offset 1."""
        name = self.cell_name(cell)
        if name:  # ipykernel's names are the text's hash: exact (live view)
            self.offsets[name] = 1
        session = self.session = self._begin(cell, 1)
        if session is None:
            self.shell.run_cell(cell, store_history=False)
            return
        # the one-line wrapper that calls this magic: compiled since the
        # cell began, before the body
        before, now = self.compiled_before, self.compiled()
        if before is not None and now is not None:
            wrapper = {n: k for n, k in now.items() if before.get(n) != k}
            session.hidden.update(wrapper)
            if len(wrapper) == 1:  # the body runs under the next number in IPython 9
                session.number = next(iter(wrapper.values()))
                if name:
                    self.numbers[name] = session.number  # the live footer's label
        try:
            self.shell.run_cell(cell, store_history=False)
        finally:
            self.session = None
            self._end(session)


def _is_hotline_cell(raw):
    """A cell whose first line is %%hotline profiles itself."""
    return raw.lstrip().startswith("%%hotline")


class Live:
    """The footer under a running cell: its line now and the library frames
    under it, in one display that is updated in place and cleared at the end.
    The thread runs in a copy of the cell's context: kernels that keep the
    parent message in a context variable route its updates to this cell."""

    def __init__(self, ext, tid):
        self.ext = ext
        self.tid = tid
        self.pattern = ext.cell_pattern()
        self.stop = threading.Event()
        self.handle = None
        self.shown = None
        self.updates = 0
        self.t0 = time.monotonic()
        ctx = contextvars.copy_context()
        self.thread = threading.Thread(target=ctx.run, args=(self._run,),
                                       name="hotline-live", daemon=True)
        self.thread.start()

    def finish(self):
        self.stop.set()
        self.thread.join()
        if self.handle is not None:
            try:
                self.handle.update({"text/plain": ""}, raw=True)
            except Exception:
                pass

    def _run(self):
        if self.stop.wait(LIVE_FIRST_S):
            return
        while True:
            c0 = time.thread_time()
            try:
                text = self.text()
                if text and text != self.shown:
                    self.show(text)
            except Exception:
                return  # never disturb the cell
            finally:
                # what the footer costs, in this thread (the benchmark reads it)
                self.ext.live_cost_s += time.thread_time() - c0
                self.ext.live_ticks += 1
            if self.stop.wait(LIVE_PERIOD_S):
                return

    def show(self, text):
        from IPython.display import display
        if self.stop.is_set():
            return
        bundle = {"text/plain": text}
        if self.handle is None:
            self.handle = display(bundle, raw=True, display_id=True)
        else:
            self.handle.update(bundle, raw=True)
        self.shown = text
        self.updates += 1

    def text(self):
        """The footer for the cell thread's current stack, or None."""
        frame = sys._current_frames().get(self.tid)
        stack = []  # innermost first
        while frame is not None and len(stack) < 256:
            stack.append((frame.f_code.co_filename, frame.f_code.co_name, frame.f_lineno))
            frame = frame.f_back
        del frame
        for i, (path, _name, lineno) in enumerate(stack):
            if self.ext.is_cell(path, self.pattern):
                break
        else:
            return None
        label = self.ext.label(path) or "this cell"
        text = self.source_line(path, lineno)
        lineno += self.ext.offsets.get(path, 0)
        elapsed = time.monotonic() - self.t0
        out = "\u25b6 %s, line %d (%.1f s): %s" % (label, lineno, elapsed, text)
        lib = stack[:i][:LIVE_LIB_FRAMES]
        if lib:
            calls = " \u2192 ".join(
                "%s (%s:%d)" % (n, _short(p), l) for p, n, l in reversed(lib))
            more = "\u2026 \u2192 " if i > LIVE_LIB_FRAMES else ""
            out += "\n  under it: " + more + calls
        return out

    def source_line(self, path, lineno):
        import linecache
        return linecache.getline(path, lineno).strip()[:80]


def _short(path):
    parts = path.replace(os.sep, "/").split("/")
    for i, p in enumerate(parts):
        if p in ("site-packages", "dist-packages"):
            return "/".join(parts[i + 1:])
    return "/".join(parts[-2:])
