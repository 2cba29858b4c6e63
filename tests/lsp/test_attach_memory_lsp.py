#!/usr/bin/env python3
"""The editor's "Attach to process with memory…" (issue 13; docs/attach.md,
"In the editor"), against a real `hotline lsp` and tests/attach/mem_target.py
(copied into the workspace, started with setsid: not the server's child):

1. hotline.attach {pid, memory: true}: the reply says memory; the progress
   says the agent is being injected; the include / exclude settings reach
   the helper (its argv), which passes them to the injected agent, and no
   message says they are not applied (tests/attach/test_attach_memory.py
   shows the agent charging by them); hotline/executing names the target's
   line (the `now` requests reach the injected agent through the helper).
2. the target then keeps 100 MiB on its KEEP line: that line's inlay hint
   says "+N MB kept" and its hover "kept", N within 10% of 100.
3. hotline.detach -> hotline/runEnded (reason detached, memory true); the
   target runs on without Hotline (it says so at exit), no `hotline attach`
   helper and no gdb is left, and it finishes with the output and status of
   a run nobody attached to.
4. detach while gdb waits for a safe point (the target blocked in a read):
   runEnded detached, gdb gone, no helper, the target unchanged.
5. errors: `memory` not a boolean is refused; no gdb (HOTLINE_GDB names
   none) -> a showMessage error that says so, runEnded failed / "attach
   failed", the target untouched, the server keeps serving.

Prints what it measured: time from the attach to the first hotline/executing,
from the 100 MiB being kept to the first hint within 10% of it (it may show
a delta taken while the list grew), the MB kept on the line at detach.

Usage: test_attach_memory_lsp.py HOTLINE
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_kernel_socket import Client, TIMEOUT, uri  # noqa: E402
from test_attach_lsp import execute, helpers, is_exec, wait_ended  # noqa: E402

MEM_TARGET = os.path.join(HERE, "..", "attach", "mem_target.py")
WANT_OUT = b"started\ngrown 100\nhotline running at exit: False\n"


def keep_line(text):
    for i, l in enumerate(text.splitlines()):
        if "# KEEP" in l:
            return i  # 0-based
    raise AssertionError("no KEEP line")


def start_target(path, d):
    p = subprocess.Popen([sys.executable, path, d], cwd=os.path.dirname(path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert int(p.stderr.readline()) == p.pid  # it is up (a condition, not a sleep)
    return p


def finish(p, d):
    open(os.path.join(d, "go"), "w").close()
    open(os.path.join(d, "exit"), "w").close()
    out, err = p.communicate(timeout=120)
    return out, err, p.returncode


def procs_on(pid, comm):
    """pids of live `comm` processes (gdb, hotline) whose argv names pid:
    ours, not another test's on the same machine. A gdb's own child is not
    counted: gdb forks one for a moment when it attaches, to probe ptrace's
    options (with gdb's argv); section 4's count saw it 2 times in 10."""
    out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read().strip() != comm:
                    continue
            with open("/proc/%s/cmdline" % d, "rb") as f:
                args = f.read().split(b"\0")
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            zombie = fields[0] == "Z"
            with open("/proc/%s/comm" % fields[1]) as f:
                probe = comm == "gdb" and f.read().strip() == "gdb"
        except OSError:
            continue
        if str(pid).encode() in args and not zombie and not probe:
            out.append(int(d))
    return out


def left(pid):
    """gdb or `hotline attach` helpers still there for pid"""
    return procs_on(pid, "gdb") + [h for h in helpers(pid) if h in procs_on(pid, "hotline")]


def tracer(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("TracerPid:"):
                return int(l.split()[1])
    return 0


class Recording(Client):
    """A client that keeps every message it read: waits in any order."""

    def __init__(self, hotline, work):
        super().__init__(hotline, work)
        self.seen = []

    def next(self, deadline):
        m = super().next(deadline)
        self.seen.append(m)
        return m

    def saw(self, pred, what, timeout=TIMEOUT):
        for m in self.seen:
            if pred(m):
                return m
        return self.wait(pred, what, timeout)


def start(c, work, opts):
    r = c.request("initialize", {
        "processId": None, "rootUri": uri(work),
        "capabilities": {"window": {"workDoneProgress": True},
                         "experimental": {"hotlineExecuting": True},
                         "workspace": {"inlayHint": {"refreshSupport": True},
                                       "codeLens": {"refreshSupport": True}}},
        "initializationOptions": opts})
    assert "result" in r, r
    c.send({"method": "initialized", "params": {}})


def kept_hint(c, u, line):
    r = c.request("textDocument/inlayHint", {"textDocument": {"uri": u}, "range": {
        "start": {"line": line, "character": 0}, "end": {"line": line, "character": 999}}})
    for h in r.get("result") or []:
        m = re.search(r"\+([0-9.]+) MB kept", h["label"] if isinstance(h["label"], str) else "")
        if h["position"]["line"] == line and m:
            return float(m.group(1)), h["label"]
    return None, r.get("result")


def main():
    hotline = os.path.abspath(sys.argv[1])
    if not shutil.which("gdb"):
        print("FAIL gdb is not installed (apt-get install gdb; .ci/install-deps does)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.realpath(tmp)
        path = os.path.join(work, "app", "mem_target.py")
        os.makedirs(os.path.dirname(path))
        shutil.copy(MEM_TARGET, path)
        with open(path) as f:
            text = f.read()
        keep = keep_line(text)
        u = uri(path)
        ref = os.path.join(work, "ref")
        os.mkdir(ref)
        ref_out, _, ref_rc = finish(start_target(path, ref), ref)
        assert ref_out == WANT_OUT and ref_rc == 3, (ref_out, ref_rc)

        d = os.path.join(work, "run")
        os.mkdir(d)
        target = start_target(path, d)
        c = Recording(hotline, work)
        start(c, work, {"hints": {"threshold": 0}, "exclude": ["*/nothing/*"]})
        try:
            c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": u, "languageId": "python", "version": 1, "text": text}}})
            # 1. attach with memory
            t0 = time.monotonic()
            r = execute(c, "hotline.attach", {"pid": target.pid, "memory": True})
            assert r.get("result", {}).get("attached") is True, r
            assert r["result"].get("memory") is True, r
            begin = c.saw(lambda m: m.get("method") == "$/progress" and
                           m["params"]["value"].get("kind") == "begin", "progress begin")
            assert "memory" in begin["params"]["value"].get("message", ""), begin
            assert "gdb" in begin["params"]["value"]["message"], begin
            deadline = time.monotonic() + TIMEOUT
            while True:  # the helper's argv (once it has exec'd: a condition)
                helper_args = []
                for h in procs_on(target.pid, "hotline"):
                    try:
                        with open("/proc/%d/cmdline" % h, "rb") as f:
                            helper_args.append(f.read().split(b"\0"))
                    except OSError:
                        pass
                if any(b"--memory" in a and b"--exclude" in a and b"*/nothing/*" in a
                       for a in helper_args):
                    break
                assert time.monotonic() < deadline, helper_args
                time.sleep(0.01)
            m = c.wait(lambda m: is_exec(m, u), "executing in the target", 60)
            t_exec = time.monotonic() - t0
            assert not [m for m in c.seen if m.get("method") == "window/showMessage" and
                        "not applied" in m["params"]["message"]], "an include/exclude note"
            print("1. attached with memory: %r; executing line %d after %.2f s"
                  % (begin["params"]["value"]["message"], m["params"]["line"] + 1, t_exec))

            # 2. the 100 MiB on the KEEP line
            open(os.path.join(d, "go"), "w").close()
            assert target.stdout.readline() == b"started\n"
            assert target.stdout.readline() == b"grown 100\n"
            t_grown = time.monotonic()
            kept, got = None, None
            deadline = time.monotonic() + 60
            while kept is None or abs(kept - 100) > 10:
                assert time.monotonic() < deadline, "no memory hint on line %d: %r" % (
                    keep + 1, got)
                c.wait(lambda m: m.get("method") == "workspace/inlayHint/refresh",
                       "a hint refresh", max(0.1, deadline - time.monotonic()))
                kept, got = kept_hint(c, u, keep)
            t_hint = time.monotonic()
            hover = c.request("textDocument/hover", {"textDocument": {"uri": u},
                                                     "position": {"line": keep, "character": 8}})
            hv = (hover.get("result") or {}).get("contents", {}).get("value", "")
            assert "kept" in hv and "MB" in hv, hover
            print("2. hint %r (%.1f MB kept, truth 100 MiB) %.2f s after the target grew, "
                  "%.2f s after the attach" % (got, kept, t_hint - t_grown, t_hint - t0))

            # 3. detach
            r = execute(c, "hotline.detach", {})
            assert r["result"] == {"detached": True, "pid": target.pid}, r
            ended = wait_ended(c)
            assert ended["reason"] == "detached" and ended["outcome"] == "stopped", ended
            assert ended.get("memory") is True and ended["attachedPid"] == target.pid, ended
            assert target.poll() is None, "the target died at detach"
            assert not left(target.pid), "gdb or helper left: %r" % left(target.pid)
            assert tracer(target.pid) == 0, "gdb still traces the target"
            kept_after, _ = kept_hint(c, u, keep)
            assert kept_after is not None and abs(kept_after - 100) <= 10, kept_after
            out, err, rc = finish(target, d)
            out = b"started\ngrown 100\n" + out  # the two lines read above
            assert out == ref_out and rc == ref_rc, (out, err, rc)
            print("3. detached after %.1f s, %d samples, %.1f MB kept on the line; the target "
                  "ran on and finished as unattached (%r, %d)"
                  % (ended["elapsed_s"], ended["samples"], kept_after, out, rc))
        finally:
            if target.poll() is None:
                finish(target, d)
            if c.p.poll() is None:
                c.stop()

        # 4. detach while gdb still waits for a safe point (the target is
        # blocked in a read): gdb takes its breakpoints out and goes, the
        # target is unchanged
        d = os.path.join(work, "idle")
        os.mkdir(d)
        target = subprocess.Popen([sys.executable, path, d, "idle"], cwd=os.path.dirname(path),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, start_new_session=True)
        assert int(target.stderr.readline()) == target.pid
        c = Recording(hotline, work)
        start(c, work, {})
        try:
            r = execute(c, "hotline.attach", {"pid": target.pid, "memory": True})
            assert r.get("result", {}).get("attached") is True, r
            deadline = time.monotonic() + TIMEOUT
            while tracer(target.pid) == 0:
                assert time.monotonic() < deadline, "gdb never attached"
                time.sleep(0.02)
            while len(left(target.pid)) != 2:  # gdb traces before /proc shows all of it
                assert time.monotonic() < deadline, "the check sees gdb and the helper: %r" % left(
                    target.pid)
                time.sleep(0.02)
            r = execute(c, "hotline.detach", {})
            assert r["result"]["detached"] is True, r
            ended = wait_ended(c)
            assert ended["reason"] == "detached" and ended["outcome"] == "stopped", ended
            deadline = time.monotonic() + TIMEOUT
            while tracer(target.pid) != 0 or left(target.pid):
                assert time.monotonic() < deadline, "gdb or the helper left: %r" % left(
                    target.pid)
                time.sleep(0.02)
            assert target.poll() is None, "the target died"
            target.stdin.write(b"\n")
            target.stdin.flush()
            out, err, rc = finish(target, d)
            assert out == ref_out and rc == ref_rc, (out, err, rc)
            print("4. detached while gdb waited: no gdb left, the target unchanged")
        finally:
            if target.poll() is None:
                target.stdin.write(b"\n")
                target.stdin.flush()
                finish(target, d)
            c.stop()

        # 5. no gdb
        d = os.path.join(work, "nogdb")
        os.mkdir(d)
        target = start_target(path, d)
        os.environ["HOTLINE_GDB"] = os.path.join(work, "no-gdb-here")
        try:
            c = Recording(hotline, work)
        finally:
            del os.environ["HOTLINE_GDB"]
        start(c, work, {})
        try:
            r = execute(c, "hotline.attach", {"pid": target.pid, "memory": "yes"})
            assert "error" in r and "memory" in r["error"]["message"], r
            r = execute(c, "hotline.attach", {"pid": target.pid, "memory": True})
            assert r.get("result", {}).get("attached") is True, r
            m = c.wait(lambda m: m.get("method") == "window/showMessage" and
                       m["params"]["type"] == 1, "an error message")
            msg = m["params"]["message"]
            assert "with memory" in msg and "needs gdb" in msg, msg
            ended = wait_ended(c)
            assert ended["outcome"] == "failed" and ended["reason"] == "attach failed", ended
            assert target.poll() is None, "the target was harmed"
            procs = execute(c, "hotline.listProcesses", {})["result"]
            assert any(p["pid"] == target.pid for p in procs), procs
            print("5. %s" % msg)
            out, err, rc = finish(target, d)
            assert out == ref_out and rc == ref_rc, (out, err, rc)
        finally:
            if target.poll() is None:
                finish(target, d)
            c.stop()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
