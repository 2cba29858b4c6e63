# Fake Hotline agent for tests/run: imported at start-up through PYTHONPATH
# (as the real bootstrap is), it connects to $HOTLINE_SOCKET and sends a fixed,
# scripted wire stream (docs/agent-protocol.md), so `hotline run` can be tested
# without the real agent. FAKE_AGENT selects a script:
#   normal (default): hello, strings, a stack, one delta, `end` at exit
#   error:            an `error` message, then close
#   garbage:          bad lines, an unknown type, then the normal stream
#   noend:            like normal but never sends `end` (crash / os._exit path)
# In every mode but error, a server `{"t":"now","hz":N}` with N > 0 is answered
# with one `now` message (thread "MainThread", frames main:1 < <module>:5).
# Per process the delta charges the main script: line 1 py 0.5 s, line 2
# nat 0.3 s, line 3 sys 0.2 s (n 50/30/20), function "main" lines 1-3.
import atexit
import json
import os
import socket
import sys


def _run():
    path = os.environ.get("HOTLINE_SOCKET")
    if not path:
        return
    mode = os.environ.get("FAKE_AGENT", "normal")
    cfg = json.loads(os.environ.get("HOTLINE_CONFIG", "{}"))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)

    def send(obj):
        s.sendall((json.dumps(obj) + "\n").encode())

    v = sys.version_info
    send({"t": "hello", "v": 1, "pid": os.getpid(), "ppid": os.getppid(),
          "python": "%d.%d.%d" % (v[0], v[1], v[2]), "executable": sys.executable,
          "argv": sys.argv, "cwd": os.getcwd(), "main": cfg.get("main"),
          "interval_ms": cfg.get("interval_ms", 10.0), "clock": "wall+thread-cpu",
          "future_field": {"ignored": True}})
    if mode == "error":
        send({"t": "error", "msg": "no agent built for Python %d.%d" % (v[0], v[1])})
        s.close()
        return
    if mode == "garbage":
        s.sendall(b"this is not json\n[1,2,3]\n{\"no_t\":1}\n")
        send({"t": "from_the_future", "x": 1})
        send({"t": "delta", "lines": [{"f": 99, "l": 1, "py": 1.0}]})  # undefined id
    main = cfg.get("main") or "?"
    send({"t": "str", "id": 1, "s": main})
    send({"t": "str", "id": 2, "s": "main"})
    send({"t": "str", "id": 3, "s": "<module>"})
    send({"t": "stack", "id": 1, "fr": [[1, 2, 1], [1, 3, 5]]})
    send({"t": "delta", "ts": 0.1, "samples": 100,
          "lines": [{"f": 1, "l": 1, "py": 0.5, "nat": 0.0, "sys": 0.0, "cpu": 0.5, "n": 50},
                    {"f": 1, "l": 2, "py": 0.0, "nat": 0.3, "sys": 0.0, "cpu": 0.6, "n": 30},
                    {"f": 1, "l": 3, "py": 0.0, "nat": 0.0, "sys": 0.2, "cpu": 0.0, "n": 20}],
          "funcs": [{"f": 1, "fn": 2, "first": 1, "last": 3, "py": 0.5, "nat": 0.3,
                     "sys": 0.2, "cpu": 1.1, "n": 100}],
          "stacks": [[1, 100, 1.0]],
          "threads": [{"tid": os.getpid(), "name": "MainThread", "py": 0.5, "nat": 0.3,
                       "sys": 0.2}]})
    if mode == "noend":
        return  # the socket stays open until the process dies

    def end():
        try:
            send({"t": "end", "ts": 0.2, "reason": "exit"})
            s.close()
        except OSError:
            pass

    atexit.register(end)

    def serve():
        import signal
        # like the real agent's threads: never take the program's signals
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        buf = b""
        while True:
            try:
                data = s.recv(4096)
            except OSError:
                return
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("t") == "now" and msg.get("hz", 0) > 0:
                    send({"t": "now", "ts": 0.5, "threads": [
                        {"tid": os.getpid(), "name": "MainThread", "state": "python",
                         "since_s": 0.25, "fr": [[1, 2, 1], [1, 3, 5]]}]})

    import threading
    threading.Thread(target=serve, daemon=True).start()
    globals()["_sock"] = s  # keep the connection open for the process lifetime


_run()
