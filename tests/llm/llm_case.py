#!/usr/bin/env python3
"""Run an "Optimize this" transcript against `hotline lsp` with a fake LLM
endpoint on 127.0.0.1 (an ephemeral port) that speaks both the OpenAI chat
completions and the Anthropic messages APIs, records every request and plays
scripted answers.

A case (tests/llm/cases/*.lsp) is a transcript for tests/lsp/transcript.py
plus these lines, which this driver takes out before running it:

    llm-script [{answer}, ...]   answers, each used once: the first whose
                                 "match" (a substring of the request body) fits,
                                 or that has no "match". Fields: "content" (the
                                 model's text, wrapped in the API's format),
                                 "finish" (finish_reason / stop_reason),
                                 "status", "headers", "raw" (body as is),
                                 "json" (body object), "delay_s"
    llm-expect {json}            some recorded request matches (partial match
                                 as in transcript.py: "re:" strings, "..."):
                                 {"path", "headers" (lower-case names), "body"}
    llm-expect-not {json}        no recorded request matches (same matching)
    llm-requests N               exactly N requests reached the endpoint
    llm-env NAME                 the server's environment has NAME=${KEY} (so
                                 that the leak check covers that variable too)
    no-file P                    at the end, ${WORK}/P does not exist (a marker
                                 that workspace code would have written)
    edited-run P EXPR WANT       at the end: ${WORK}/P (as the case wrote it)
                                 with every workspace/applyEdit the server sent
                                 for it applied, then `print(repr(EXPR))`, run
                                 by python3, prints WANT: the edit works

In llm-expect lines ${PY_VERSION} is the version of python3 on PATH (regex-
escaped, for "re:" patterns). Substitutions: ${LLM_URL} (http://127.0.0.1:PORT), ${KEY} (a fresh secret the
server gets in HOTLINE_TEST_LLM_KEY; also in llm-script, so that an answer can
echo it), and those of transcript.py.

After every case, whatever happened: the key's value must appear nowhere in
the server's stderr, in any message it sent, in any file under ${WORK}
(.hotline/ included), in any file written under the temporary directory
since the case began, nor anywhere in a recorded request except its
Authorization / x-api-key header.

Usage: llm_case.py HOTLINE CASE [CASE...]
"""
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lsp"))
import transcript  # noqa: E402

KEY_HEADERS = ("authorization", "x-api-key")


class Fake:
    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def pick(self, body):
        with self.lock:
            for i, a in enumerate(self.script):
                if a.get("match") is None or a["match"] in body:
                    return self.script.pop(i)
        return {"status": 500, "json": {"error": {"message": "fake endpoint: no scripted answer"}}}


def make_handler(fake):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(n).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            with fake.lock:
                fake.requests.append({"path": self.path, "raw": raw, "body": body,
                                      "headers": {k.lower(): v for k, v in self.headers.items()}})
            a = fake.pick(raw)
            fake.stop.wait(a.get("delay_s", 0))
            if "raw" in a:
                out = a["raw"]
            elif "json" in a:
                out = json.dumps(a["json"])
            elif self.path.endswith("/chat/completions"):
                out = json.dumps({"id": "fake", "object": "chat.completion", "model": body.get("model"),
                                  "choices": [{"index": 0, "finish_reason": a.get("finish", "stop"),
                                               "message": {"role": "assistant",
                                                           "content": a.get("content", "")}}]})
            else:
                out = json.dumps({"id": "fake", "type": "message", "role": "assistant",
                                  "content": [{"type": "text", "text": a.get("content", "")}],
                                  "stop_reason": a.get("finish", "end_turn")})
            data = out.encode()
            try:
                self.send_response(a.get("status", 200))
                self.send_header("Content-Type", "application/json")
                for k, v in a.get("headers", {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the server gave up (cancel, timeout)

    return Handler


def run(hotline, case):
    script, expects, count, rest = None, [], None, []
    not_expects, env_names, no_files, edited_runs = [], [], [], []
    for line, _ in transcript.logical_lines(case):
        op, _, arg = line.strip().partition(" ")
        if op == "llm-script":
            script = arg
        elif op == "llm-expect":
            expects.append(arg)
        elif op == "llm-expect-not":
            not_expects.append(arg)
        elif op == "llm-env":
            env_names.append(arg.strip())
        elif op == "no-file":
            no_files.append(arg.strip())
        elif op == "edited-run":
            edited_runs.append(arg.strip().split(" ", 2))
        elif op == "llm-requests":
            count = int(arg)
        else:
            rest.append(line)
    key = "sk-hotline-test-" + secrets.token_hex(12)
    fake = Fake(json.loads(script.replace("${KEY}", key)) if script else [])
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(fake))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % srv.server_address[1]
    tmpdir = tempfile.mkdtemp(prefix="hotline-llm-case-")
    tmpcase = os.path.join(tmpdir, os.path.basename(case))
    with open(tmpcase, "w", encoding="utf-8") as f:
        f.write("\n".join(rest))
    info = {"t0": time.time() - 1}
    try:
        transcript.run_case(hotline, tmpcase, extra_subst={"LLM_URL": url, "KEY": key},
                            extra_env=dict({"HOTLINE_TEST_LLM_KEY": key},
                                           **{n: key for n in env_names}), info=info)
    finally:
        fake.stop.set()
        srv.shutdown()
        srv.server_close()
        leaks = check_key(key, info, fake)
    if leaks:
        raise transcript.Failure("the API key leaked: " + "; ".join(leaks))
    work = info["work"]
    for name in no_files:
        if os.path.exists(os.path.join(work, name)):
            raise transcript.Failure("%s exists: workspace code ran" % name)
    for name, expr, want in edited_runs:
        edited_run(info, work, name, expr, want)
    subst = {"WORK": work, "LLM_URL": url, "KEY": key, "PY_VERSION": python_version()}
    for e in expects:
        for k, v in subst.items():
            e = e.replace("${%s}" % k, v)
        want = json.loads(e)
        if not any(transcript.matches(want, r) for r in fake.requests):
            raise transcript.Failure("no request matched %s; got:\n  %s" % (
                e[:300], "\n  ".join(json.dumps(r)[:1500] for r in fake.requests)))
    for e in not_expects:
        for k, v in subst.items():
            e = e.replace("${%s}" % k, v)
        hit = [r for r in fake.requests if transcript.matches(json.loads(e), r)]
        if hit:
            raise transcript.Failure("a request matched %s: %s" % (e[:300], json.dumps(hit[0])[:1500]))
    if count is not None and len(fake.requests) != count:
        raise transcript.Failure("%d requests reached the endpoint, expected %d" %
                                 (len(fake.requests), count))


def apply_edits(text, edits):
    """text with LSP TextEdits applied (positions in characters: the cases
    are ASCII), last first so that earlier ranges stay where they are."""
    lines = text.split("\n")

    def offset(pos):
        return sum(len(l) + 1 for l in lines[:pos["line"]]) + pos["character"]
    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        a, b = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
    return text


def edited_run(info, work, name, expr, want):
    path = os.path.join(work, name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    n = 0
    for m in info.get("seen", []):
        if m.get("method") != "workspace/applyEdit":
            continue
        for dc in m["params"]["edit"].get("documentChanges", []):
            if urllib.parse.unquote(dc["textDocument"]["uri"]).endswith("/" + name):
                text = apply_edits(text, dc["edits"])
                n += 1
    if not n:
        raise transcript.Failure("edited-run: no edit of %s was sent" % name)
    r = subprocess.run(["python3", "-I", "-c", text + "\nprint(repr(%s))\n" % expr],
                       capture_output=True, text=True, timeout=30, cwd=work)
    if r.stdout.strip() != want:
        raise transcript.Failure("edited-run: %s after the edit gives %r (want %s); the file:\n%s%s"
                                 % (expr, r.stdout.strip(), want, text, r.stderr))


def python_version():
    """The version of `python3` on PATH (the server's default interpreter),
    escaped for a regular expression."""
    out = subprocess.run(["python3", "-c", "import sys; print(sys.version.split()[0])"],
                         capture_output=True, text=True, timeout=30).stdout.strip()
    return re.escape(out).replace("\\", "\\\\")


def check_key(key, info, fake):
    out = []
    if key in info.get("stderr", ""):
        out.append("in the server's stderr")
    if any(key in json.dumps(m, ensure_ascii=False) for m in info.get("seen", [])):
        out.append("in a message to the client")
    work = info.get("work")
    for d, _, files in os.walk(work or "/nonexistent"):
        for name in files:
            p = os.path.join(d, name)
            try:
                with open(p, "rb") as f:
                    if key.encode() in f.read():
                        out.append("in file " + os.path.relpath(p, work))
            except OSError:
                pass
    # anything else the session wrote under the temporary directory (session
    # sockets' folders, temp files of atomic saves) since the case began
    tmp = tempfile.gettempdir()
    for d, dirs, files in os.walk(tmp):
        if work and d.startswith(work):
            continue
        for name in files:
            p = os.path.join(d, name)
            try:
                st = os.lstat(p)
                if st.st_mtime < info.get("t0", 0) or not os.path.isfile(p) or st.st_size > 1 << 22:
                    continue
                with open(p, "rb") as f:
                    if key.encode() in f.read():
                        out.append("in file " + p)
            except OSError:
                pass
    for r in fake.requests:
        if key in r["raw"] or key in r["path"]:
            out.append("in a request body or URL")
        for k, v in r["headers"].items():
            if key in v and k not in KEY_HEADERS:
                out.append("in request header " + k)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    failed = 0
    for case in sys.argv[2:]:
        t0 = time.monotonic()
        try:
            run(sys.argv[1], case)
            print("PASS %s (%.1f s)" % (os.path.basename(case), time.monotonic() - t0))
        except transcript.Failure as e:
            failed += 1
            print("FAIL %s: %s" % (os.path.basename(case), e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
