#!/usr/bin/env python3
"""The kernel socket's memory is bounded across connections and given back
(issue 20, item 13; docs/notebooks.md).

PEERS peers connect to <work>/.hotline/agent.sock, each sends an
unfinished line of LINE bytes (under the per-line cap, no newline) and
stays connected. Each peer waits until the server has read everything it
sent (SIOCOUTQ, the bytes still queued, is 0) or closed it. Then:

1. the server's peak resident memory (VmHWM) is under PEAK_MB, and the
   log says which connections were closed for the common cap;
2. the peers leave; once the server counts no connection
   (hotline/debug/state), its resident memory (VmRSS) is under AFTER_MB;
3. the server still answers, and a real agent still connects to it.

Before the fix every peer kept its 16 MiB: the server peaked at ~1 GB and
kept most of it after they left. Usage: test_kernel_memory.py HOTLINE
"""
import fcntl
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import SPAWNED, Client, finish, spawn  # noqa: E402

PEERS = 64
LINE = (16 << 20) - 1
CHUNK = 1 << 20
PEAK_MB = 300
AFTER_MB = 150
TIMEOUT = 120.0
SIOCOUTQ = 0x5411


def status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    raise AssertionError("no %s for %d" % (key, pid))


def peer(path, out, i):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(TIMEOUT)
    out[i] = s
    try:
        s.connect(path)
        left = LINE
        while left:
            n = min(CHUNK, left)
            s.sendall(b"x" * n)
            left -= n
        deadline = time.monotonic() + TIMEOUT  # until the server read it all
        while struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCOUTQ, b"\0" * 4))[0]:
            if time.monotonic() > deadline:
                out[i] = "server did not read"
                return
            time.sleep(0.01)
    except OSError:
        pass  # closed by the server: what the common cap does


def main():
    hotline = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="hotline-kmem-")
    sub = os.path.join(work, "sub")
    os.mkdir(sub)
    sock = os.path.join(work, ".hotline", "agent.sock")
    # the ASan build (tests/run-all.sh) runs this too: its quarantine keeps
    # freed blocks (256 MB by default) and its allocator gives memory back
    # only on its own schedule; without them it measures what the code holds
    asan = [os.environ.get("ASAN_OPTIONS", ""), "quarantine_size_mb=0",
            "allocator_release_to_os_interval_ms=0"]
    os.environ["ASAN_OPTIONS"] = ":".join(o for o in asan if o)
    c = Client(hotline, work)
    socks = [None] * PEERS
    try:
        c.start(work)
        c.log_line(lambda t: t == "kernels: listening on " + sock, "the server listens")
        base = status(c.p.pid, "VmRSS")
        threads = [threading.Thread(target=peer, args=(sock, socks, i)) for i in range(PEERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
            assert not t.is_alive(), "a peer hung"
        assert "server did not read" not in socks, "the server stopped reading a peer"
        peak = status(c.p.pid, "VmHWM")
        r = c.request("hotline/debug/state", {})
        kept = r["result"]["kernels"]["connected"]
        closed = [t for t in c.logs if "connection closed: its unfinished" in t]
        print("1. %d peers x %d bytes: peak %.0f MB (from %.0f MB), %d still connected, "
              "%d closed for the cap" % (PEERS, LINE, peak, base, kept, len(closed)))
        assert peak < PEAK_MB, "peak %.0f MB, bound %d MB" % (peak, PEAK_MB)
        assert closed, "no connection was closed for the common cap"
        for s in socks:
            s.close()
        deadline = time.monotonic() + TIMEOUT
        while c.request("hotline/debug/state", {})["result"]["kernels"]["connected"]:
            assert time.monotonic() < deadline, "the peers' connections stay"
        after = status(c.p.pid, "VmRSS")
        print("2. after they left: %.0f MB resident" % after)
        assert after < AFTER_MB, "resident %.0f MB after the peers left, bound %d MB" % (
            after, AFTER_MB)
        stop = os.path.join(sub, "one.stop")
        _, p = spawn(hotline, sub, "one.py", stop)
        c.log_line(lambda t: t.startswith("kernels: agent of pid %d connected" % p.pid),
                   "a real agent connects afterwards")
        finish([p], stop)
        print("3. a real agent connected afterwards")
        c.stop()
        c = None
    finally:
        for s in socks:
            if isinstance(s, socket.socket):
                s.close()
        if c is not None:
            c.p.kill()
            c.p.wait()
        for p in SPAWNED:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
