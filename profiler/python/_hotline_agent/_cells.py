"""Notebook cells compiled under temporary names, mapped to the notebook's
own file and lines (profiler/cells.h says the C half).

marimo compiles a cell of notebook.py to <tmp>/marimo_<pid>/
__marimo__cell_<id>_.py, a file that exists only in linecache (except in
`python notebook.py`, `marimo run`, or with DEBUGPY_RUNNING set, where it
compiles under notebook.py's own name and lines, and nothing is to do).
The sampler queues each such name it meets; this module's thread takes the
cell's code from linecache, finds it in the body of an `@app.cell`
function of a notebook file, and answers with the line offset, so the
samples, the live line and the memory rows of the cell land on
notebook.py. A cell whose code is not in any notebook file (edited in
`marimo edit` and not saved yet) keeps its temporary name.

Which files are notebooks: first the `__file__` of the running cell's
globals (marimo sets it to the notebook), then the .py files named on this
process's command line and on its parent's (the `marimo edit notebook.py`
server whose kernel this is), and the .py files of the working directory
that create a marimo App, read again when they change.

The thread starts when marimo is imported (an audit hook on "import" sees
it; a hook stays for the process's life, so it only compares a name) or
at once when it already is. It waits inside the agent without the GIL,
costs nothing while no cell runs, and ends when the agent stops (an attach
that lets go leaves no thread behind; it adds no audit hook either).
ast and threading are imported when marimo is: every `hotline run` loads
this module at start-up, where they cost ~1.5 ms (docs/benchmarks.md)."""
import os
import stat
import sys

_state = {"hook": False, "pid": 0}
_files = {}   # notebook path -> ((mtime_ns, size), [(first line, [lines])] of its cells)
_answers = {}  # cell file -> (linecache entry, answer) last given
MAX_NOTEBOOK = 4 << 20  # bytes: bigger .py files are not read
MAX_SCAN = 200          # .py files of the working directory looked at
_OPEN = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
         | getattr(os, "O_NOCTTY", 0))


def install(hook=True):
    """Called after the agent starts; never raises. hook=False (an attach,
    which must leave nothing behind): only when marimo is loaded already."""
    try:
        if "marimo" in sys.modules:
            _start()
        elif hook and not _state["hook"]:
            _state["hook"] = True
            sys.addaudithook(_on_audit)
    except Exception:
        pass


def _on_audit(event, args):
    if event == "import" and args and args[0] == "marimo" and _state["pid"] != os.getpid():
        _start()


def _start():
    if _state["pid"] == os.getpid():
        return
    _state["pid"] = os.getpid()  # a forked child starts its own
    import threading
    t = threading.Thread(target=_loop, name="hotline-cells", daemon=True)
    t.start()


def _loop():
    from . import _agent
    try:
        names = _agent.cell_files(0.0)  # first: the sampler leaves this thread out
    except Exception:
        return
    import linecache  # noqa: F401 (imported here, not when a cell waits)
    try:
        for path in notebooks():  # read now: the first answer then needs no I/O
            _cells_of(path)
    except Exception:
        pass
    while True:
        for name in names:
            try:
                _answer(_agent, name)
            except Exception:
                pass
        try:
            names = _agent.cell_files(1.0)
            if not names and not _agent.is_running():
                _state["pid"] = 0  # the agent stopped: so does this thread
                return
        except Exception:
            return


def _answer(agent, name):
    import linecache
    entry = linecache.cache.get(name)
    if entry is None:
        return
    last = _answers.get(name)
    if last is not None and last[0] is entry:
        return  # same code as the last answer: still true
    # First from the notebooks as last read, answered at once (no I/O: a
    # cell that just started waits for it), then checked against the files
    # as they are now, answered again if that differs.
    hint = _running_file(name)
    if hint is not None and hint not in _files:
        _cells_of(hint)  # one file read: the notebook the running cell names
    found = find(entry[2], ([hint] if hint else []) + list(_files), fresh=False)
    if found is not None:
        agent.cell_map(name, found[0], found[1])
    now = find(entry[2], ([hint] if hint else []) + notebooks())
    _answers[name] = (entry, now)
    if now is not None and now != found:
        agent.cell_map(name, now[0], now[1])
    elif now is None and (found is not None or (last is not None and last[1] is not None)):
        agent.cell_map(name, None)


def _running_file(name):
    """The notebook a running cell of the file `name` names: marimo gives
    its cells a __main__ whose __file__ is the notebook (also in `marimo
    edit` of a folder, where no command line names it). None if no thread
    runs that cell now or it names no .py file."""
    for frame in sys._current_frames().values():
        depth = 0
        while frame is not None and depth < 200:
            if frame.f_code.co_filename == name:
                f = frame.f_globals.get("__file__")
                if isinstance(f, str) and f.endswith(".py") and os.path.isabs(f):
                    return os.path.normpath(f)
                return None
            frame, depth = frame.f_back, depth + 1
    return None


def find(code_lines, candidates=None, fresh=True):
    """(notebook path, delta) for a cell's code (lines as linecache keeps
    them): line L of the cell is line L + delta of the notebook; or None.
    fresh=False: the files as last read, without looking at them."""
    lines = [line.rstrip("\r\n").rstrip() for line in code_lines]
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    end = len(lines)
    while end > first and not lines[end - 1].strip():
        end -= 1
    want = lines[first:end]
    if not want:
        return None
    for path in (candidates if candidates is not None else notebooks()):
        cells = _cells_of(path) if fresh else _files.get(path, (None, []))[1]
        for start, body in cells:
            at = _find_block(body, want)
            if at >= 0:
                return path, start + at - (first + 1)
    return None


def _find_block(body, want):
    n = len(want)
    for i in range(len(body) - n + 1):
        if body[i] == want[0] and body[i:i + n] == want:
            return i
    return -1


def _read_file(path, limit=MAX_NOTEBOOK):
    """The bytes of path when it is a regular file of at most limit bytes,
    else None. The folder is not trusted: a `*.py` there may be a FIFO (an
    open that waits for a writer, O_NONBLOCK does not), a device or a link
    to one (/dev/zero: a read that never ends); the type is checked on the
    open descriptor (no race with a rename) and the read is bounded even
    for a file that grows meanwhile."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, n = [], 0
        while n <= limit:
            b = os.read(fd, min(1 << 16, limit + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        return b"".join(chunks) if n <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _cells_of(path):
    """[(line number of the first body line, dedented body lines)] of the
    @app.cell functions of path; cached by size and modification time."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    key = (st.st_mtime_ns, st.st_size)
    got = _files.get(path)
    if got is not None and got[0] == key:
        return got[1]
    cells = []
    src = _read_file(path)
    if src is not None:
        try:
            cells = _parse(src)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            cells = []
    _files[path] = (key, cells)
    return cells


def _is_cell_decorator(d):
    import ast
    if isinstance(d, ast.Call):
        d = d.func
    return isinstance(d, ast.Attribute) and d.attr in ("cell", "function", "class_definition")


def _parse(src):
    import ast
    tree = ast.parse(src)
    text = src.decode("utf-8", "replace").splitlines()
    cells = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not any(_is_cell_decorator(d) for d in node.decorator_list) or not node.body:
            continue
        indent = node.body[0].col_offset
        # from the line after the signature (comments before the first
        # statement belong to the cell) to the function's end
        begin = node.body[0].lineno - 1
        while begin - 1 >= node.lineno and _comment_or_blank(text[begin - 1]):
            begin -= 1
        body = []
        for line in text[begin:node.end_lineno]:
            line = line.rstrip()
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
        cells.append((begin + 1, body))
    return cells


def _comment_or_blank(line):
    s = line.strip()
    return not s or s.startswith("#")


def _py_args(argv, cwd):
    out = []
    for a in argv:
        if a.endswith(".py") and not a.startswith("-"):
            p = a if os.path.isabs(a) else os.path.join(cwd, a)
            if os.path.isfile(p):
                out.append(os.path.normpath(p))
    return out


def notebooks():
    """The candidate notebook files, most likely first."""
    seen, out = set(), []

    def add(paths):
        for p in paths:
            if p not in seen:
                seen.add(p)
                out.append(p)

    cwd = os.getcwd()
    add(_py_args(sys.argv, cwd))
    try:
        ppid = os.getppid()
        with open("/proc/%d/cmdline" % ppid, "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        add(_py_args(argv, os.readlink("/proc/%d/cwd" % ppid)))
    except OSError:
        pass
    try:
        names = sorted(n for n in os.listdir(cwd) if n.endswith(".py"))[:MAX_SCAN]
    except OSError:
        names = []
    for n in names:
        p = os.path.join(cwd, n)
        if p not in seen and _inside(p, cwd) and _is_notebook(p):
            add([p])
    return out


def _inside(path, folder):
    """A file of the folder, not a link out of it (the folder is not
    trusted: its links may name anything on the machine)."""
    try:
        if not os.path.islink(path):
            return True
        real, top = os.path.realpath(path), os.path.realpath(folder)
        return real.startswith(top.rstrip("/") + "/")
    except (OSError, ValueError):
        return False


def _is_notebook(path):
    src = _read_file(path)
    return src is not None and b"marimo.App(" in src
