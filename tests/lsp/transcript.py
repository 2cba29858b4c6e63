#!/usr/bin/env python3
"""Run one LSP transcript against the built `hotline` binary, through pipes.

A transcript (tests/lsp/*.lsp) is a readable list of steps, one per line:

    # comment
    --> {json}          send a message (framed with Content-Length)
    -->* [{json}, ...]  send several messages in one write
    ==> "raw string"    send raw bytes (a JSON string literal, for bad framing)
    <-- {json}          wait for the next server message that matches (partial
                        match: only the fields written here are compared;
                        arrays must have the same length unless the last
                        element is "..."), skipping others; 10 s timeout
    <!- {json}          no server message matching this may appear during the
                        whole run (checked at the end)
    close               close the server's stdin
    exit N              wait for the server to exit and check its status
    write-file P TEXT   create a file P (relative to the case's work dir),
                        TEXT as a JSON string literal
    write-repeat P N {"head": H, "piece": X, "tail": T}
                        create a file P of H, then X N times, then T (a big
                        file no transcript line could hold)
    args A B ...        extra arguments for `hotline lsp` (first step only)
    reply {json}        answer the last server request matched by `<--` (its id
                        is filled in), e.g. reply {"result": null}
    kill-server         SIGKILL the server (and reap it)
    restart             start a new server in the same ${WORK} (after exit or
                        kill-server)
    no-process TEXT     wait until no process has TEXT in its command line
                        (10 s timeout; TEXT usually names a file in ${WORK})
    wait-file P         wait until file P (relative to ${WORK}) exists
    symlink P TARGET    create a symlink P (relative to ${WORK}) pointing to TARGET
    mkfifo P            create a FIFO P (relative to ${WORK})
    chmod P MODE        chmod P (relative to ${WORK}) to MODE (octal, e.g. 0755)
    file-is P {json}    check P (relative to ${WORK}, not followed): "type"
                        ("file", "dir", "symlink", "fifo"), "mode" ("0600"),
                        "text" (exact content), "contains" (a line equal to it)
    max-rss MB          the server's peak resident memory so far is under MB

In messages, ${WORK} is a fresh temporary directory, ${WORK_URI} its file://
URI, and ${ROOT} the repository root. Lines ending with a backslash continue
on the next line.

Usage: transcript.py HOTLINE CASE [CASE...]
"""
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

TIMEOUT = float(os.environ.get("HOTLINE_TEST_TIMEOUT", "10"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Failure(Exception):
    pass


def frame(obj):
    body = json.dumps(obj, ensure_ascii=False).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_messages(stream, out):
    """Parse Content-Length framed messages from stream into queue out."""
    buf = b""
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            out.put(None)
            return
        buf += chunk
        while True:
            sep = buf.find(b"\r\n\r\n")
            if sep < 0:
                break
            headers = buf[:sep].decode("ascii", "replace").split("\r\n")
            length = None
            for h in headers:
                k, _, v = h.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            if length is None:
                out.put(("error", "server sent a header block without Content-Length: %r" % headers))
                return
            if len(buf) < sep + 4 + length:
                break
            body = buf[sep + 4: sep + 4 + length]
            buf = buf[sep + 4 + length:]
            try:
                out.put(("msg", json.loads(body)))
            except ValueError as e:
                out.put(("error", "server sent invalid JSON: %s: %r" % (e, body[:200])))


def matches(expected, actual):
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return False
        if expected and expected[-1] == "...":
            exp = expected[:-1]
            return len(actual) >= len(exp) and all(matches(e, a) for e, a in zip(exp, actual))
        return len(expected) == len(actual) and all(matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, str) and expected.startswith("re:"):
        return isinstance(actual, str) and re.search(expected[3:], actual) is not None
    if isinstance(expected, float) or isinstance(actual, float):
        return isinstance(actual, (int, float)) and not isinstance(actual, bool) and \
            abs(expected - actual) < 1e-9
    return expected == actual and type(expected) == type(actual)


def processes_with(text):
    """pids (other than ours) whose command line contains text."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            out.append((int(pid), cmd.strip()))
    return out


def logical_lines(path):
    """The lines of a case file, a trailing backslash joining a line to the
    next; yields (line, number of the last physical line read)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + lines[i]
            i += 1
        yield line, i


def parse_steps(path, subst):
    steps = []
    for line, i in logical_lines(path):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        for k, v in subst.items():
            s = s.replace("${%s}" % k, v)
        op, _, rest = s.partition(" ")
        steps.append((op, rest.strip(), i))
    return steps


def check_file(where, path, want):
    import stat
    try:
        st = os.lstat(path)
    except OSError as e:
        raise Failure("%s: %s: %s" % (where, path, e))
    kinds = {"file": stat.S_ISREG, "dir": stat.S_ISDIR, "symlink": stat.S_ISLNK,
             "fifo": stat.S_ISFIFO}
    if "type" in want and not kinds[want["type"]](st.st_mode):
        raise Failure("%s: %s is not a %s (mode %o)" % (where, path, want["type"], st.st_mode))
    if "mode" in want and stat.S_IMODE(st.st_mode) != int(want["mode"], 8):
        raise Failure("%s: %s has mode %04o, expected %s" % (
            where, path, stat.S_IMODE(st.st_mode), want["mode"]))
    if "text" in want or "contains" in want:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if "text" in want and text != want["text"]:
            raise Failure("%s: %s holds %r, expected %r" % (where, path, text[:200], want["text"]))
        if "contains" in want and want["contains"] not in text.splitlines():
            raise Failure("%s: %s has no line %r: %r" % (where, path, want["contains"], text[:200]))


def run_case(hotline, path, extra_subst=None, extra_env=None, info=None):
    """extra_subst: more ${NAME} substitutions; extra_env: more environment
    for the server; info (a dict, optional) receives "work", "stderr" and
    "seen" (every server message) even when the case fails."""
    work = tempfile.mkdtemp(prefix="hotline-lsp-")
    subst = {"WORK": work, "WORK_URI": "file://" + urllib.parse.quote(work), "ROOT": ROOT}
    subst.update(extra_subst or {})
    steps = parse_steps(path, subst)
    args = []
    env = dict(os.environ)
    env.update(extra_env or {})
    while steps and steps[0][0] == "args":
        args = steps[0][1].split()
        steps = steps[1:]
    stderr_chunks = []
    threads = []

    def spawn():
        p = subprocess.Popen([hotline, "lsp"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=work, env=env)
        qq = queue.Queue()
        threading.Thread(target=read_messages, args=(p.stdout, qq), daemon=True).start()
        t = threading.Thread(target=lambda: stderr_chunks.append(p.stderr.read()), daemon=True)
        t.start()
        threads.append(t)
        return p, qq

    proc, q = spawn()
    seen = []
    forbidden = []
    eof = False
    last_matched = None

    def next_message(deadline):
        nonlocal eof
        if eof:
            return None
        try:
            item = q.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise Failure("timed out")
        if item is None:
            eof = True
            return None
        if item[0] == "error":
            raise Failure(item[1])
        seen.append(item[1])
        return item[1]

    try:
        for op, rest, lineno in steps:
            where = "%s:%d" % (os.path.basename(path), lineno)
            if op == "-->":
                proc.stdin.write(frame(json.loads(rest)))
                proc.stdin.flush()
            elif op == "-->*":
                proc.stdin.write(b"".join(frame(m) for m in json.loads(rest)))
                proc.stdin.flush()
            elif op == "==>":
                proc.stdin.write(json.loads(rest).encode("utf-8", "surrogateescape"))
                proc.stdin.flush()
            elif op == "<--":
                want = json.loads(rest)
                deadline = time.monotonic() + TIMEOUT
                skipped = []
                while True:
                    try:
                        msg = next_message(deadline)
                    except Failure as e:
                        raise Failure("%s: %s waiting for %s; got meanwhile:\n  %s" % (
                            where, e, rest, "\n  ".join(json.dumps(m)[:int(os.environ.get("TRANSCRIPT_SHOW", "300"))] for m in skipped)))
                    if msg is None:
                        raise Failure("%s: server closed its output while waiting for %s; got:\n  %s"
                                      % (where, rest, "\n  ".join(json.dumps(m)[:int(os.environ.get("TRANSCRIPT_SHOW", "300"))] for m in skipped)))
                    if matches(want, msg):
                        last_matched = msg
                        break
                    skipped.append(msg)
            elif op == "<!-":
                forbidden.append((where, json.loads(rest)))
            elif op == "close":
                proc.stdin.close()
            elif op == "exit":
                try:
                    code = proc.wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    raise Failure("%s: server did not exit" % where)
                # collect what is left to check forbidden patterns
                while next_message(time.monotonic() + TIMEOUT) is not None:
                    pass
                if code != int(rest):
                    raise Failure("%s: exit status %d, expected %s" % (where, code, rest))
            elif op == "write-file":
                name, _, text = rest.partition(" ")
                full = os.path.join(work, name)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as f:
                    f.write(json.loads(text))
            elif op == "write-repeat":
                name, _, rest2 = rest.partition(" ")
                count, _, spec = rest2.partition(" ")
                spec = json.loads(spec)
                full = os.path.join(work, name)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as f:
                    f.write(spec.get("head", "") + spec["piece"] * int(count) + spec.get("tail", ""))
            elif op == "reply":
                if not last_matched or "id" not in last_matched or "method" not in last_matched:
                    raise Failure("%s: reply without a matched server request" % where)
                ans = json.loads(rest)
                ans["jsonrpc"] = "2.0"
                ans["id"] = last_matched["id"]
                proc.stdin.write(frame(ans))
                proc.stdin.flush()
            elif op == "kill-server":
                proc.kill()
                proc.wait()
                while next_message(time.monotonic() + TIMEOUT) is not None:
                    pass
            elif op == "restart":
                if proc.poll() is None:
                    raise Failure("%s: restart while the server still runs" % where)
                proc, q = spawn()
                eof = False
            elif op == "no-process":
                deadline = time.monotonic() + TIMEOUT
                while True:
                    found = processes_with(rest)
                    if not found:
                        break
                    if time.monotonic() > deadline:
                        for pid, _ in found:  # leave no orphan behind a failed case
                            try:
                                os.kill(pid, 9)
                            except OSError:
                                pass
                        raise Failure("%s: processes still running: %s" % (where, found))
                    time.sleep(0.05)
            elif op == "symlink":
                name, _, target = rest.partition(" ")
                full = os.path.join(work, name)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                os.symlink(target, full)
            elif op == "mkfifo":
                full = os.path.join(work, rest)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                os.mkfifo(full)
            elif op == "chmod":
                name, _, mode = rest.partition(" ")
                os.chmod(os.path.join(work, name), int(mode, 8))
            elif op == "file-is":
                name, _, want = rest.partition(" ")
                check_file(where, os.path.join(work, name), json.loads(want))
            elif op == "max-rss":
                with open("/proc/%d/status" % proc.pid) as f:
                    hwm = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")]
                if not hwm or hwm[0] / 1024 >= float(rest):
                    raise Failure("%s: server peak RSS %s MB, limit %s MB" % (
                        where, hwm[0] // 1024 if hwm else "?", rest))
            elif op == "wait-file":
                full = os.path.join(work, rest)
                deadline = time.monotonic() + TIMEOUT
                while not os.path.exists(full):
                    if time.monotonic() > deadline:
                        raise Failure("%s: %s never appeared" % (where, rest))
                    time.sleep(0.05)
            else:
                raise Failure("%s: unknown step %r" % (where, op))
        for where, pat in forbidden:
            for m in seen:
                if matches(pat, m):
                    raise Failure("%s: forbidden message appeared: %s" % (where, json.dumps(m)[:300]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for t in threads:
            t.join(TIMEOUT)
        err = b"".join(c for c in stderr_chunks if c).decode("utf-8", "replace")
        if info is not None:
            info.update(work=work, stderr=err, seen=seen)
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                       "WARNING: ThreadSanitizer"):
            if marker in err:
                raise Failure("sanitizer report in server stderr:\n" + err[-4000:])
    return True


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    hotline = sys.argv[1]
    failed = 0
    for case in sys.argv[2:]:
        try:
            run_case(hotline, case)
            print("PASS %s" % os.path.basename(case))
        except Failure as e:
            failed += 1
            print("FAIL %s: %s" % (os.path.basename(case), e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
