"""The IPython extension: `%load_ext hotline`, then

    %%hotline        profile this cell, print its per-line report under it
    %hotline on|off  profile every cell run meanwhile, a report after each
    %hotline live    show the line running now under the running cell
    %hotline         say what is on

When the editor's Hotline server listens for the workspace (the socket
<workspace>/.hotline/agent.sock, found from the working directory upward),
loading the extension connects the whole kernel to it (hotline.connect())
and the editor shows the live line and the per-line profile. Each cell's
begin and end go into that stream too (`cell` messages): the editor shows a
cell's latest execution only, and its last few times in a lens (issue 22).
`%%hotline` still shows its report under the cell: it reads a copy of the
stream (the agent's tee) while the cell runs. HOTLINE_CONNECT=0 keeps the
kernel off the editor.

The report is text in a terminal IPython; in a Jupyter front end (a display
publisher that is not the terminal's) it is a display_data with text/html (a
table that fits the cell's width) and text/plain (the same text).

Each profiled cell runs under its own agent (hotline.start() with `out` =
a private file, memory on), stopped when the cell ends; the stream is read
back and added up in Python (_report.py): no binary, no server. Between
profiled cells nothing is installed, so unprofiled cells pay nothing. When
the process is profiled already (streaming to the editor, hotline.start()),
the running agent copies its stream to the private file while the cell runs
instead (_agent.tee).

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
(tests/bench/bench_notebook_live.py).

JupyterLab (editors/jupyterlab, docs/notebooks.md "JupyterLab"): loading
the extension in a kernel opens a comm to the target "hotline". When the
JupyterLab extension answers it ({"hello": 1}), every cell is profiled and
the same live thread sends the running line and the call chain under it to
the comm instead of a display; when the cell ends, {"t": "end"} and then the
cell's per-line results ({"t": "lines"}). Without that answer (another
front end, no extension) nothing changes."""
import atexit
import contextvars
import json
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
LAB_TARGET = "hotline"  # the comm the JupyterLab extension registers
LAB_VERSION = 1
LAB_MAX_FRAMES = 100  # frames sent to JupyterLab (the outermost and innermost)

_ext = None


def load(shell):
    global _ext
    if _ext is not None and _ext.shell is shell:
        return
    _ext = Extension(shell)
    _ext.connect()
    _ext.open_lab()
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
        # profiled already (the editor's stream, hotline.start()): a copy of
        # that agent's stream while the cell runs, not an agent of our own
        self.tee = hotline.running()
        self.t0 = time.perf_counter()
        if self.tee:
            from . import _agent
            _agent.tee(self.out)
        else:
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
        return _report.format_report(*self.finish_profile()[:4])

    def finish_profile(self):
        """Stop the agent (or its copy); (profile, sources, wall s, title,
        cell file name)."""
        if self.tee:
            from . import _agent
            try:
                _agent.tee(None)
            except (OSError, RuntimeError):
                pass  # the agent ended meanwhile: the file has what it wrote
        else:
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
        return prof, self.sources, wall, "cell In [%s]" % number, name

    def lab_lines(self, done, cell_id):
        """The {"t": "lines"} message for JupyterLab: the cell's lines with
        time or memory, numbered as in the cell."""
        prof, _sources, wall, _title, name = done
        total = prof.total_wall()
        lines = {}
        for (path, l), e in prof.lines.items():
            if path != name or not (e.wall > 0 or e.alloc >= 0.05):
                continue
            lines[str(l + self.offset)] = {
                "wall": round(e.wall, 4), "py": round(e.py, 4), "nat": round(e.nat, 4),
                "sys": round(e.sys, 4), "pct": round(100 * e.wall / total, 1) if total > 0 else 0,
                "alloc": round(e.alloc, 2), "kept": round(e.kept, 2)}
        return {"t": "lines", "cell_id": cell_id, "wall": round(wall, 3),
                "total": round(total, 3), "peak_mb": round(prof.peak_mb, 1),
                "samples": prof.samples, "lines": lines}


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
        self.comm = None         # the comm to JupyterLab's extension, once opened
        self.lab = False         # ... and that extension answered it
        self.cell_id = None      # the running cell's id (JupyterLab sends it)
        self.cell_run = None     # (cell file, perf_counter at its start): told to the editor

    def tmpdir(self):
        if self._tmp is None or not os.path.isdir(self._tmp):
            self._tmp = tempfile.mkdtemp(prefix="hotline-nb-")  # mode 0700
            # forked children's streams (<file>.<pid>) land here too
            atexit.register(shutil.rmtree, self._tmp, True)
        return self._tmp

    def close(self):
        comm, self.comm, self.lab = self.comm, None, False
        if comm is not None:
            try:
                comm.close()
            except Exception:
                pass
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

    # --- JupyterLab (editors/jupyterlab) ------------------------------------

    def open_lab(self):
        """Open the comm "hotline" when this is a kernel. JupyterLab with the
        extension answers {"hello": 1} (handled after the loading cell, as
        every shell message); a front end without it closes the comm."""
        if getattr(self.shell, "kernel", None) is None:
            return  # a terminal IPython: no front end to ask
        try:
            comm = _create_comm(data={"version": LAB_VERSION})
        except Exception:
            return
        comm.on_msg(self._lab_msg)
        comm.on_close(self._lab_closed)
        self.comm = comm

    def _lab_msg(self, msg):
        data = (msg.get("content") or {}).get("data") or {}
        if isinstance(data, dict) and "hello" in data:
            self.lab = True

    def _lab_closed(self, msg=None):
        self.lab = False
        self.comm = None

    def lab_send(self, data):
        comm = self.comm
        if comm is None or not self.lab:
            return
        try:
            comm.send(data)
        except Exception:
            pass  # never disturb the cell

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
        try:
            return Session(self, cell, offset)
        except Exception as e:  # no agent for this Python, agent refused
            print("hotline: cannot profile: %s" % (e,), file=sys.stderr)
            return None

    def _end(self, session):
        try:
            done = session.finish_profile()
        except Exception as e:
            print("hotline: no report: %s" % (e,), file=sys.stderr)
            return
        self.show_report(done)

    def show_report(self, done):
        """The report under the cell: a display_data with text/html and
        text/plain in a Jupyter front end, the text printed in a terminal."""
        text = _report.format_report(*done[:4])
        if not _display_updates(self.shell):
            print(text)
            return
        try:
            from IPython.display import display
            html = _report.format_html(*done[:4])
            sys.stdout.flush()  # the cell's own output first
            display({"text/plain": text, "text/html": html}, raw=True)
        except Exception:
            print(text)

    # --- the editor: each cell's begin and end in the stream ------------------

    def mark(self, ev, name, wall=None):
        """Tell the editor's server that the cell of file `name` begins or
        ends (a `cell` message in this kernel's stream, after what ran
        before it; docs/agent-protocol.md)."""
        msg = {"t": "cell", "ev": ev, "file": name}
        if wall is not None:
            msg["wall_s"] = round(wall, 4)
        try:
            from . import _agent
            _agent.mark(json.dumps(msg))
        except Exception:
            pass  # never disturb the cell

    def pre_run_cell(self, info=None):
        self.depth += 1
        if self.depth != 1:
            return
        raw = getattr(info, "raw_cell", None) or ""
        self.cell_id = getattr(info, "cell_id", None)
        self.compiled_before = self.compiled()
        self.cell_run = None
        if hotline.connected():
            name = self.cell_name(raw)  # ipykernel's: the hash of this very text
            if name:
                self.mark("begin", name)
                self.cell_run = (name, time.perf_counter())
        lab = self.lab and self.comm is not None
        if (self.on or lab) and self.session is None and not _is_hotline_cell(raw):
            # where the process is profiled already (streaming to the editor,
            # hotline.start()) the Session tees that agent's stream, as
            # %%hotline does: JupyterLab gets its per-line results then too
            self.session = self._begin(raw, 0)
            self.own_session = self.session is not None
        text = self.live and _display_updates(self.shell)
        if text or lab:
            self._live = Live(self, threading.get_ident(), text=text, lab=lab)

    def post_run_cell(self, result=None):
        self.depth = max(0, self.depth - 1)
        if self.depth != 0:
            return
        if self.cell_run is not None:
            name, t0 = self.cell_run
            self.cell_run = None
            self.mark("end", name, time.perf_counter() - t0)
        if self._live:
            self._live.finish()
            self._live = None
        if self.own_session:
            session, self.session, self.own_session = self.session, None, False
            lab = self.lab and self.comm is not None
            try:
                done = session.finish_profile()
            except Exception as e:
                if self.on or lab:
                    print("hotline: no report: %s" % (e,), file=sys.stderr)
                return  # a hook that raises would print IPython's own error
            if self.on:  # not for the `%hotline off` cell itself
                self.show_report(done)
            if lab:
                self.lab_send(session.lab_lines(done, self.cell_id))

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
    under it, in one display that is updated in place and cleared at the end
    (text), and/or the same to JupyterLab's extension over the comm (lab).
    The thread runs in a copy of the cell's context: kernels that keep the
    parent message in a context variable route its updates to this cell."""

    def __init__(self, ext, tid, text=True, lab=False):
        self.ext = ext
        self.tid = tid
        self.text_on, self.lab = text, lab
        self.cell_id = ext.cell_id
        self.pattern = ext.cell_pattern()
        self.stop = threading.Event()
        self.handle = None
        self.shown = None
        self.updates = 0
        self.sent = 0
        self.positions = {}  # code object -> its co_positions(), the user's call
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
        if self.lab:  # the marker goes now, before the per-line results
            self.ext.lab_send({"t": "end", "cell_id": self.cell_id,
                               "wall": round(time.monotonic() - self.t0, 3)})

    def _run(self):
        if self.stop.wait(LIVE_FIRST_S):
            return
        while True:
            c0 = time.thread_time()
            try:
                snap = self.snapshot()
                if snap and self.text_on:
                    text = self.format(snap)
                    if text != self.shown:
                        self.show(text)
                if snap and self.lab and not self.stop.is_set():
                    self.ext.lab_send(self.lab_message(snap))
                    self.sent += 1
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
        snap = self.snapshot()
        return self.format(snap) if snap else None

    def snapshot(self):
        """The cell thread's stack now (cell_snapshot, with the cell's label
        and the time since the cell began), or None when no cell frame is
        on it."""
        pattern = self.pattern
        snap = cell_snapshot(self.tid, lambda p: self.ext.is_cell(p, pattern),
                             self.positions)
        if snap is None:
            return None
        path = snap.pop("path")
        snap.update(label=self.ext.label(path) or "this cell",
                    line=snap["line"] + self.ext.offsets.get(path, 0),
                    elapsed=time.monotonic() - self.t0)
        return snap

    def format(self, snap):
        out = "\u25b6 %s, line %d (%.1f s): %s" % (
            snap["label"], snap["line"], snap["elapsed"], snap["text"])
        lib = snap["lib"][:LIVE_LIB_FRAMES]
        if lib:
            calls = " \u2192 ".join(
                "%s (%s:%d)" % (n, _short(p), l) for p, n, _q, l in reversed(lib))
            more = "\u2026 \u2192 " if len(snap["lib"]) > LIVE_LIB_FRAMES else ""
            out += "\n  under it: " + more + calls
        return out

    def lab_message(self, snap):
        """{"t": "live"} for JupyterLab: the chain from the user's call down
        (outermost first), and every frame for the click."""
        lib = list(reversed(snap["lib"]))  # outermost first
        if len(lib) > LAB_MAX_FRAMES:
            lib = lib[:LAB_MAX_FRAMES // 2] + lib[-(LAB_MAX_FRAMES // 2):]
        chain = chain_of(snap, LAB_MAX_FRAMES)
        frames = [{"name": q, "file": _short(p), "line": l} for p, _n, q, l in lib]
        return {"t": "live", "cell_id": self.cell_id, "line": snap["line"],
                "text": snap["text"], "elapsed": round(snap["elapsed"], 2),
                "chain": chain, "frames": frames}


def cell_snapshot(tid, is_cell, positions):
    """The stack of thread tid now: {path, line (the cell's frame's), text,
    lib (the frames under it, innermost first: (path, name, qualname,
    line)), call (the text of the call the cell's line is in, as
    "gmm.fit"; None if unknown)}, or None when no frame of a file is_cell
    accepts is on it. positions: a dict this fills (code -> co_positions),
    kept by the caller between calls. Shared by the Jupyter and the marimo
    live views (_marimo.py)."""
    frame = sys._current_frames().get(tid)
    stack = []  # innermost first
    cell = None
    while frame is not None and len(stack) < 256:
        code = frame.f_code
        if is_cell(code.co_filename):
            cell = frame
            break
        stack.append((code.co_filename, code.co_name,
                      getattr(code, "co_qualname", code.co_name), frame.f_lineno))
        frame = frame.f_back
    del frame
    if cell is None:
        return None
    path, lineno = cell.f_code.co_filename, cell.f_lineno
    call = call_text(cell, positions) if stack else None
    del cell
    return {"path": path, "line": lineno, "text": linecache.getline(path, lineno).strip()[:80],
            "lib": stack, "call": call}


def call_text(frame, positions):
    """The callee of the call the frame is in ("gmm.fit" in "gmm.fit(X)"),
    from the instruction's columns (Python 3.11+); None if unknown."""
    code = frame.f_code
    pos = positions.get(code)
    if pos is None:
        if not hasattr(code, "co_positions"):
            return None
        pos = positions[code] = list(code.co_positions())
    i = frame.f_lasti // 2
    if not 0 <= i < len(pos):
        return None
    l0, l1, c0, c1 = pos[i]
    if l0 is None or c0 is None:
        return None
    src = linecache.getline(code.co_filename, l0).encode("utf-8")
    part = src[c0:c1 if l1 == l0 else None].decode("utf-8", "replace")
    k = part.find("(")
    callee = part[:k].strip() if k > 0 else ""
    return callee[:60] or None


def chain_of(snap, max_frames=LAB_MAX_FRAMES):
    """The call chain from the user's call down, outermost first: the call's
    text ("gmm.fit"), then the library frames' qualified names (at most
    max_frames: the outermost and the innermost halves)."""
    lib = list(reversed(snap["lib"]))
    if len(lib) > max_frames:
        lib = lib[:max_frames // 2] + lib[-(max_frames // 2):]
    return ([snap["call"]] if snap["call"] else []) + [q for _p, _n, q, _l in lib]


def elide(chain):
    """The chain folded as JupyterLab's footer shows it
    (editors/jupyterlab/src/index.ts, elide): the user's call, the next
    frame, \u2026, the innermost."""
    c = chain if len(chain) <= 4 else [chain[0], chain[1], "\u2026", chain[-1]]
    return " \u2192 ".join(c)


def _create_comm(**kw):
    """A comm to LAB_TARGET: the `comm` package's (ipykernel >= 6.18 sets
    its factory), else ipykernel's own class (older ipykernel)."""
    try:
        import comm as _comm
    except ImportError:
        _comm = None
    if _comm is not None and hasattr(_comm, "create_comm"):
        c = _comm.create_comm(target_name=LAB_TARGET, **kw)
        if type(c).__name__ != "DummyComm":
            return c
    from ipykernel.comm import Comm
    return Comm(target_name=LAB_TARGET, **kw)


def _short(path):
    parts = path.replace(os.sep, "/").split("/")
    for i, p in enumerate(parts):
        if p in ("site-packages", "dist-packages"):
            return "/".join(parts[i + 1:])
    return "/".join(parts[-2:])
