"""The IPython extension (profiler/python/_hotline_agent/_ipython.py), for real:
cells run through IPython's InteractiveShell in a fresh process of the
Python under test (shell_driver.py), or through a real ipykernel driven by
jupyter_client (case `kernel`), with the built agent on PYTHONPATH.

usage: test_notebook.py --agent DIR CASE     (run it with the Python under test)
cases: cell on calls leak live kernel editor

A missing IPython, ipykernel or jupyter_client fails (.ci/install-deps
installs python3-ipykernel; CMake registers `kernel` for other Pythons only
where they can import both)."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 120


def fail(msg, *details):
    sys.stderr.write("FAIL: %s\n" % msg)
    for d in details:
        sys.stderr.write("%s\n" % (d,))
    sys.exit(1)


def check(cond, msg, *details):
    if not cond:
        fail(msg, *details)


# --- the report, read back as a person reads it -----------------------------
# Rows are "  %5d %6s %8s %8s %8s <bar 24> %8s %8s  text" (_report.py).

def parse_report(text):
    """{section label: {shown line: row dict}} of every report in text."""
    sections, cur = {}, None
    for row in text.splitlines():
        if re.match(r"^  \S", row) and not row.startswith("  bar:") and "line" not in row[:8]:
            cur = sections.setdefault(row.strip(), {})
            continue
        m = re.match(r"^  ([ \d]{5}) ", row)
        if cur is None or not m or not m.group(1).strip():
            continue

        def num(a, b):
            s = row[a:b].strip().rstrip("%")
            return float(s) if s else 0.0
        cur[int(m.group(1))] = {
            "pct": num(8, 14), "py": num(15, 23), "nat": num(24, 32), "sys": num(33, 41),
            "bar": row[42:66], "alloc": num(67, 75), "kept": num(76, 84),
            "text": row[86:], "row": row}
    return sections


def this_cell(report):
    for label, rows in parse_report(report).items():
        if label.endswith("(this cell)"):
            return rows
    fail("no '(this cell)' section in the report", report)


def run_shell(cells, record_display=False):
    # HOTLINE_CONNECT=0: the text reports, even under a folder an editor's
    # server listens for (docs/notebooks.md, "Streaming into the editor")
    env = dict(os.environ, PYTHONPATH=AGENT, HOTLINE_CONNECT="0")
    env.pop("HOTLINE_SOCKET", None)
    env.pop("HOTLINE_CONFIG", None)
    with tempfile.TemporaryDirectory() as cwd:
        p = subprocess.run([sys.executable, os.path.join(HERE, "shell_driver.py")],
                           input=json.dumps({"cells": cells, "record_display": record_display}),
                           capture_output=True, text=True, cwd=cwd, env=env, timeout=TIMEOUT)
        left = os.listdir(cwd)
    check(p.returncode == 0, "shell driver exited %d" % p.returncode, p.stderr)
    check(not left, "files left in the working directory: %s" % left)
    return json.loads(p.stdout.strip().splitlines()[-1])


BUSY = "while time.perf_counter() - t < 1.0: pass"
CHEAP = "y = sum(range(10))"
SLEEP = "time.sleep(0.5)"
KEEP = "keep = [bytearray(1 << 20) for _ in range(50)]"
CELL = "\n".join(["%%hotline", "import time", "t = time.perf_counter()", BUSY, CHEAP,
                  SLEEP, KEEP, 'print("cell output intact", y)'])


def check_cell_report(rows, report, with_memory=True):
    """The CELL's lines, as shown in the cell (line 1 = %%hotline)."""
    lines = CELL.splitlines()
    busy, cheap, sleep, keep = (lines.index(s) + 1 for s in (BUSY, CHEAP, SLEEP, KEEP))
    for n, src in ((busy, BUSY), (cheap, CHEAP), (sleep, SLEEP)):
        check(n in rows and rows[n]["text"].strip() == src,
              "line %d of the cell is not shown as %r" % (n, src), report)
    b = rows[busy]
    check(b["py"] + b["nat"] >= 0.6 and b["pct"] == max(r["pct"] for r in rows.values()),
          "the busy line (1 s of Python) is not the hot line", report)
    check(rows[cheap]["pct"] < 5, "the cheap line has %.1f%%" % rows[cheap]["pct"], report)
    s = rows[sleep]
    check(s["sys"] >= 0.3 and s["py"] + s["nat"] < 0.1,
          "the sleep line is not shown as system time", report)
    check("\u2588" in b["bar"] and "\u2591" in s["bar"],
          "bars: python for the busy line, system for the sleep", report)
    if with_memory:
        k = rows[keep]
        check(40 <= k["kept"] <= 60 and 40 <= k["alloc"] <= 60,
              "the line keeping 50 MB shows alloc %.1f / kept %.1f MB" % (k["alloc"], k["kept"]),
              report)


def case_cell():
    """%%hotline: a report of the cell's own lines under its own output."""
    res = run_shell(["%load_ext hotline", CELL, "print('next cell')"])
    c = res["cells"][1]
    check(not c["error"], "the cell raised", c)
    out = c["stdout"]
    check(out.startswith("cell output intact 45\nhotline: cell In [2]"),
          "the cell's own output is not intact, before the report", out)
    check(out.count("hotline: ") == 1, "one report", out)
    rows = this_cell(out)
    check_cell_report(rows, out)
    check(len(parse_report(out)) == 1, "only the cell's section (no wrapper line)", out)
    check(res["cells"][2]["stdout"] == "next cell\n", "a later cell is not profiled",
          res["cells"][2])
    print(out)


def case_on():
    """%hotline on: every cell gets its report; off: none."""
    a = "\n".join(["import time", "t = time.perf_counter()", BUSY, "print('A')"])
    b = "\n".join(["import time", SLEEP, "print('B')"])
    res = run_shell(["%load_ext hotline", "%hotline on", a, b, "%hotline off", "print('C')"])
    cells = res["cells"]
    check("hotline: cell" not in cells[1]["stdout"], "the `on` cell itself has no report",
          cells[1])
    for i, (src, mark) in enumerate(((a, "A"), (b, "B")), start=2):
        out = cells[i]["stdout"]
        check(out.startswith(mark + "\nhotline: cell In [%d]" % (i + 1)),
              "cell %d: its output, then its report" % (i + 1), out)
        rows = this_cell(out)
        check(sorted(rows) == list(range(1, len(src.splitlines()) + 1)),
              "cell %d: every line of the cell, numbered as in the cell" % (i + 1), out)
        if mark == "A":
            check(rows[3]["text"].strip() == BUSY and rows[3]["py"] + rows[3]["nat"] >= 0.6,
                  "cell A: the busy line", out)
        else:
            check(rows[2]["text"].strip() == SLEEP and rows[2]["sys"] >= 0.3,
                  "cell B: the sleep line as system", out)
    check("hotline: cell" not in cells[4]["stdout"], "the `off` cell has no report", cells[4])
    check(cells[5]["stdout"] == "C\n", "after off: no report", cells[5])
    print(cells[2]["stdout"], cells[3]["stdout"])


SPIN = "    while time.perf_counter() - t < 0.8: pass"


def case_calls():
    """Time in a function an earlier cell defined: on that cell's line, in
    its own section (In [2]), and on the line of this cell that called it;
    an exception still gets its report."""
    define = "\n".join(["import time", "def spin():", "    t = time.perf_counter()", SPIN])
    call = "\n".join(["%%hotline", "x = 1", "spin()", "1 / 0"])
    res = run_shell(["%load_ext hotline", define, call])
    c = res["cells"][2]
    out = c["stdout"]
    check("ZeroDivisionError" in out + c["stderr"], "the cell's traceback is shown", c)
    sections = parse_report(out[out.index("hotline: cell"):])
    check("In [2]" in sections and 4 in sections["In [2]"], "no section for In [2]", out)
    spin = sections["In [2]"][4]
    check(spin["text"].strip() == SPIN.strip() and spin["py"] + spin["nat"] >= 0.5,
          "the defining cell's busy line", out)
    check(sorted(sections["In [2]"]) == [4], "only lines with data of other cells", out)
    rows = this_cell(out)
    check(rows[3]["text"].strip() == "spin()" and rows[3]["pct"] == 0,
          "the calling line: time goes to the innermost profiled frame", out)
    print(out)


LEAK_CELL = "\n".join([
    "%%hotline", "import time", "leak = []", "churn = None", "t = time.perf_counter()",
    "while time.perf_counter() - t < 1.5:",
    "    leak.append(bytearray(1 << 20))",
    "    churn = [bytearray(1 << 20) for _ in range(2)]",
    "    time.sleep(0.01)"])


def case_leak():
    """The server's leak rule on the cell's timelines: the line that keeps
    1 MB per iteration is flagged, the line that allocates twice as much
    and frees it is not."""
    res = run_shell(["%load_ext hotline", LEAK_CELL])
    out = res["cells"][1]["stdout"]
    rows = this_cell(out)
    leak, churn = rows[7], rows[8]
    check(leak["text"].strip().startswith("leak.append") and "LEAK?" in leak["text"],
          "the leaking line is not flagged", out)
    check(leak["kept"] >= 20, "the leaking line keeps %.1f MB" % leak["kept"], out)
    check(churn["alloc"] >= 2 * leak["kept"] * 0.8 and churn["kept"] <= 4
          and "LEAK?" not in churn["text"], "the churn line is flagged or miscounted", out)
    check(out.count("LEAK?") == 1, "exactly one line flagged", out)
    print(out)


LIVE_CELL = "\n".join([
    "import time, textwrap",
    "print('before')",
    "t = time.perf_counter()",
    "while time.perf_counter() - t < 1.5: textwrap.fill(TEXT, 30)",
    "print('after')"])


def check_live(displays, report_where):
    """displays: [{text, id, update}] of one cell, in order."""
    check(displays, "no display published by the live view", report_where)
    ids = {d["id"] for d in displays}
    check(len(ids) == 1 and None not in ids, "one display, with an id", displays)
    check(not displays[0]["update"] and all(d["update"] for d in displays[1:]),
          "created once, then updated in place", displays)
    shown = [d["text"] for d in displays[:-1]]
    check(any(("line 4" in t and "textwrap.fill(TEXT, 30)" in t) for t in shown),
          "no update names the running line (4)", displays)
    check(any("under it:" in t and "textwrap" in t.split("under it:")[1] for t in shown),
          "no update shows the library frames under the line", displays)
    check(displays[-1]["text"] == "" and displays[-1]["update"],
          "the display is not cleared when the cell ends", displays)


def case_live():
    """%hotline live: updates naming the running line, cleared at the end,
    the cell's own output untouched."""
    res = run_shell(["%load_ext hotline", "TEXT = 'lorem ipsum dolor ' * 200",
                     "%hotline live", LIVE_CELL, "print('later')"], record_display=True)
    cells, displays = res["cells"], res["displays"]
    live = displays[cells[2]["displays_upto"]:cells[3]["displays_upto"]]
    check(cells[3]["stdout"] == "before\nafter\n", "the cell's output is not intact",
          cells[3])
    check_live(live, cells[3])
    check(len(displays) == cells[4]["displays_upto"] == cells[3]["displays_upto"],
          "a short cell shows no footer", displays)
    check(all(d["thread"] in ("hotline-live", "MainThread") for d in live), "threads", live)
    print("%d display messages: %s" % (len(live), json.dumps(live[1:3])))
    # a shell that prints every display (terminal IPython) is refused
    res = run_shell(["%load_ext hotline", "%hotline live", "%hotline"])
    check("needs a front end" in res["cells"][1]["stderr"]
          and "live view off" in res["cells"][2]["stdout"],
          "live accepted by a shell that cannot update in place", res["cells"])


def run_kernel(cells, env):
    """[[iopub messages] per cell] of cells run in a real ipykernel."""
    try:
        import jupyter_client  # noqa: F401
        import ipykernel  # noqa: F401
    except ImportError as e:
        print("FAIL: %s (install python3-ipykernel)" % e)
        sys.exit(1)
    from jupyter_client.manager import start_new_kernel
    # the kernel's debugger warns about frozen modules on every start
    env = dict(env, PYTHONPATH=AGENT, PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("HOTLINE_CONFIG", None)
    with tempfile.TemporaryDirectory() as cwd:
        km, kc = start_new_kernel(kernel_name="python3", cwd=cwd, env=env,
                                  startup_timeout=TIMEOUT)
        try:
            res = []
            for src in cells:
                msgs = []
                reply = kc.execute_interactive(src, timeout=TIMEOUT,
                                               output_hook=msgs.append)
                check(reply["content"]["status"] == "ok", "cell failed: %r" % src, reply, msgs)
                res.append(msgs)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return res


def stream(msgs):
    return "".join(m["content"]["text"] for m in msgs
                   if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")


def check_display_report(msgs):
    """The %%hotline report of a kernel's cell: one display_data after the
    cell's own output, with text/plain (the terminal's table) and text/html
    (a table that fits the cell: the hot line's source text, escaped, and its
    share). Returns the text."""
    out = stream(msgs)
    check(out == "cell output intact 45\n", "kernel: the cell's own output, intact", out)
    shown = [m for m in msgs if m["msg_type"] == "display_data"
             and "hotline: cell" in m["content"]["data"].get("text/plain", "")]
    check(len(shown) == 1, "kernel: one display_data with the report", msgs)
    first_disp = min(i for i, m in enumerate(msgs) if m["msg_type"] == "display_data")
    last_out = max(i for i, m in enumerate(msgs) if m["msg_type"] == "stream")
    check(last_out < first_disp, "kernel: the report comes after the cell's output", msgs)
    data = shown[0]["content"]["data"]
    text, page = data["text/plain"], data.get("text/html", "")
    check(text.startswith("hotline: cell In ["), "kernel: text/plain is the text report", text)
    check_cell_report(this_cell(text), text, with_memory=True)
    import html
    rows = [r for r in page.split("<tr>") if ">%s</td>" % html.escape(BUSY) in r]
    check(rows, "text/html: no row with the hot line's source text, escaped", page)
    share = re.search(r">(\d+\.\d)% <span", rows[0])
    check(share and float(share.group(1)) >= 50, "text/html: the hot line's share and bar",
          rows[0])
    for css in ("width:100%", "table-layout:fixed", "white-space:pre", "overflow:hidden",
                "text-overflow:ellipsis", "max-width:"):
        check(css in page, "text/html: no %r (it must fit the cell's width)" % css, page)
    check(re.search(r"<th[^>]*>alloc MB</th>", page), "text/html: memory columns", page)
    return text, page


def case_kernel():
    """A real ipykernel through jupyter_client: %%hotline report as a
    display_data (text/plain and text/html) under the cell's output, live
    view as display_data + update_display_data."""
    env = dict(os.environ, HOTLINE_CONNECT="0")
    env.pop("HOTLINE_SOCKET", None)
    res = run_kernel(["%load_ext hotline", "TEXT = 'lorem ipsum dolor ' * 200", CELL,
                      "%hotline live", LIVE_CELL], env)
    out, _page = check_display_report(res[2])
    live = [{"text": m["content"]["data"].get("text/plain"),
             "id": m["content"]["transient"].get("display_id"),
             "update": m["msg_type"] == "update_display_data"}
            for m in res[4] if m["msg_type"] in ("display_data", "update_display_data")]
    check(stream(res[4]) == "before\nafter\n", "kernel: the live cell's output", res[4])
    check_live(live, res[4])
    print(out)
    print("%d live messages" % len(live))


class FakeEditor:
    """A Unix socket where the kernel's agent streams, as the editor's
    server's: everything it receives is kept (bytes)."""

    def __init__(self, path):
        import socket
        import threading
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(8)
        self.data = []
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        import threading
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self.read, args=(conn,), daemon=True).start()

    def read(self, conn):
        while True:
            b = conn.recv(1 << 16)
            if not b:
                return
            with self.lock:
                self.data.append(b)

    def messages(self):
        with self.lock:
            raw = b"".join(self.data)
        out = []
        for line in raw.split(b"\n"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out


def case_editor():
    """The kernel streams to the editor (`%load_ext hotline` found a server's
    socket): %%hotline still shows its report under the cell (a copy of the
    agent's stream while the cell runs), and the stream tells the editor
    where each cell began and ended (`cell` messages, issue 22)."""
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "agent.sock")
        editor = FakeEditor(sock)
        env = dict(os.environ, HOTLINE_SOCKET=sock)
        env.pop("HOTLINE_CONNECT", None)
        res = run_kernel(["%load_ext hotline", CELL, "x = 1"], env)
        check("streaming this kernel to the editor" in stream(res[0]),
              "the kernel did not connect to the socket", res[0])
        text, _page = check_display_report(res[1])
        cells = [m for m in editor.messages() if m.get("t") == "cell"]
    check(any(m.get("t") == "hello" for m in editor.messages()), "no hello on the socket")
    files = {m["file"] for m in cells}
    check(len(cells) >= 4 and all("ipykernel_" in f for f in files),
          "the stream's cell messages", cells)
    ends = [m for m in cells if m["ev"] == "end"]
    busy = [m for m in ends if m["wall_s"] >= 1.4]
    check(len(busy) == 1 and 1.4 <= busy[0]["wall_s"] <= 3.0,
          "the %%hotline cell's end with its wall seconds (~1.5 s)", cells)
    check([m["ev"] for m in cells if m["file"] == busy[0]["file"]] == ["begin", "end"],
          "one begin, then one end, per cell", cells)
    print(text)
    print("cell messages: %s" % json.dumps(cells))


CASES = {"cell": case_cell, "on": case_on, "calls": case_calls, "leak": case_leak, "live": case_live,
         "kernel": case_kernel, "editor": case_editor}

if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) != 3 or args[0] != "--agent" or args[2] not in CASES:
        sys.stderr.write(__doc__)
        sys.exit(2)
    AGENT = os.path.abspath(args[1])
    try:
        import IPython  # noqa: F401
    except ImportError:
        fail("%s has no IPython: install python3-ipykernel (.ci/install-deps)"
             % sys.executable)
    CASES[args[2]]()
