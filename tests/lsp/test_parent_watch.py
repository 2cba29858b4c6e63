#!/usr/bin/env python3
"""processId: the server exits when a visible client process dies (through a
pidfd where there is one, else a 3 s kill(pid, 0) check). The other half,
a pid that is not visible here, is the transcript processid_invisible.lsp.

Usage: test_parent_watch.py HOTLINE
"""
import json
import os
import subprocess
import sys
import time

TIMEOUT = 10.0


def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def main():
    hotline = os.path.abspath(sys.argv[1])
    client = subprocess.Popen(["sleep", "60"])  # stands in for the editor
    srv = subprocess.Popen([hotline, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        srv.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": client.pid, "rootUri": None, "capabilities": {}}}))
        srv.stdin.flush()
        head = srv.stdout.readline()  # the answer's first header line: initialized
        assert head.startswith(b"Content-Length"), head
        assert srv.poll() is None, "the server exited while its client lives"
        client.kill()
        client.wait()
        t0 = time.monotonic()
        code = srv.wait(timeout=TIMEOUT)
        err = srv.stderr.read().decode("utf-8", "replace")
        assert code == 1, "exit status %d" % code
        assert "client process %d is gone" % client.pid in err, err
        print("PASS: exited %.2f s after its client" % (time.monotonic() - t0))
    finally:
        for p in (client, srv):
            if p.poll() is None:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
