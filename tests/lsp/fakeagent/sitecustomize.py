"""A stand-in for the Hotline agent, in pure Python, for the LSP tests.

It speaks the wire protocol of docs/agent-protocol.md (hello, str, stack,
delta, now, end) from a sampling thread that reads sys._current_frames(), so
the LSP transcript tests can drive real runs without the C agent. Time is
charged to the innermost frame of the profiled program: `py` when that frame
is the innermost Python frame, `nat` when library code runs under it. It is
not a profiler to measure with: it only has to be truthful about which line
runs.

Like the real agent it dies with the server: when the socket reaches EOF
(the server was killed) or server_pid disappears, the process exits.
"""
import atexit
import json
import os
import socket
import sys
import threading
import time


def _start():
    path = os.environ.get("HOTLINE_SOCKET")
    if not path:
        return
    cfg = json.loads(os.environ.get("HOTLINE_CONFIG", "{}"))
    main = cfg.get("main", "")
    include = os.path.dirname(main) + "/" if main.startswith("/") else os.getcwd() + "/"
    interval = float(cfg.get("interval_ms", 10)) / 1000.0
    server_pid = int(cfg.get("server_pid", 0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    lock = threading.Lock()
    st = {"ending": False, "hz": 0, "strs": {}, "stacks": {}, "lines": {}, "funcs": {},
          "dstacks": {}, "samples": 0, "since": {}, "t0": time.monotonic()}

    def send(obj):
        data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
        with lock:
            try:
                sock.sendall(data)
            except OSError:
                pass

    def sid(s):
        i = st["strs"].get(s)
        if i is None:
            i = len(st["strs"]) + 1
            st["strs"][s] = i
            send({"t": "str", "id": i, "s": s})
        return i

    def frames_of(f):
        out = []
        while f is not None:
            co = f.f_code
            out.append((co.co_filename, getattr(co, "co_qualname", co.co_name), f.f_lineno, co))
            f = f.f_back
        return out

    def user(fn):
        return fn.startswith(include) and "/site-packages/" not in fn and fn != __file__

    send({"t": "hello", "v": 1, "pid": os.getpid(), "ppid": os.getppid(),
          "python": sys.version.split()[0], "executable": sys.executable, "argv": sys.argv,
          "cwd": os.getcwd(), "main": main, "interval_ms": interval * 1000, "clock": "wall"})

    def flush(ts):
        if not st["lines"] and not st["dstacks"]:
            return
        lines = [dict(f=sid(k[0]), l=k[1], py=v[0], nat=v[1], sys=0.0, cpu=v[0] + v[1], n=v[2])
                 for k, v in st["lines"].items()]
        funcs = [dict(f=sid(k[0]), fn=sid(k[1]), first=k[2], last=k[3], py=v[0], nat=v[1], sys=0.0,
                      cpu=v[0] + v[1], n=v[2]) for k, v in st["funcs"].items()]
        stacks = [[k, v[0], v[1]] for k, v in st["dstacks"].items()]
        send({"t": "delta", "ts": ts, "samples": st["samples"], "lines": lines, "funcs": funcs,
              "stacks": stacks})
        st["lines"].clear()
        st["funcs"].clear()
        st["dstacks"].clear()
        st["samples"] = 0

    def sample(dt, main_id):
        f = sys._current_frames().get(main_id)
        if f is None:
            return None
        fr = frames_of(f)
        ui = next((i for i, x in enumerate(fr) if user(x[0])), None)
        if ui is None:
            return fr
        fn, name, line, co = fr[ui]
        native = ui > 0
        v = st["lines"].setdefault((fn, line), [0.0, 0.0, 0])
        v[1 if native else 0] += dt
        v[2] += 1
        last = max((l for _, _, l in co.co_lines() if l), default=co.co_firstlineno) \
            if hasattr(co, "co_lines") else co.co_firstlineno
        key = (fn, name, co.co_firstlineno, last)
        v = st["funcs"].setdefault(key, [0.0, 0.0, 0])
        v[1 if native else 0] += dt
        v[2] += 1
        tup = tuple((sid(a), sid(b), c) for a, b, c, _ in fr)
        k = st["stacks"].get(tup)
        if k is None:
            k = len(st["stacks"]) + 1
            st["stacks"][tup] = k
            send({"t": "stack", "id": k, "fr": [list(x) for x in tup]})
        v = st["dstacks"].setdefault(k, [0, 0.0])
        v[0] += 1
        v[1] += dt
        st["samples"] += 1
        return fr

    def sampler():
        main_id = threading.main_thread().ident
        last = time.monotonic()
        last_delta = last
        last_now = 0.0
        cur = None
        while not st["ending"]:
            time.sleep(interval)
            now = time.monotonic()
            if st["ending"]:
                break
            fr = sample(now - last, main_id)
            last = now
            if now - last_delta >= 0.1:
                flush(now - st["t0"])
                last_delta = now
            if fr and st["hz"] > 0 and now - last_now >= 1.0 / st["hz"]:
                last_now = now
                top = next((x for x in fr if user(x[0])), None)
                key = (top[0], top[2]) if top else None
                if key != cur:
                    cur = key
                    st["since_t"] = now
                send({"t": "now", "ts": now - st["t0"], "threads": [
                    {"tid": main_id, "name": "MainThread", "state": "running",
                     "since_s": now - st.get("since_t", now),
                     "fr": [[sid(a), sid(b), c] for a, b, c, _ in fr]}]})
            if server_pid:
                try:
                    os.kill(server_pid, 0)
                except ProcessLookupError:
                    os._exit(137)

    def reader():
        buf = b""
        while True:
            try:
                chunk = sock.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                if not st["ending"]:
                    os._exit(137)  # the server is gone: do not outlive it
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    m = json.loads(line)
                except ValueError:
                    continue
                if m.get("t") == "now":
                    st["hz"] = int(m.get("hz", 0))
                elif m.get("t") == "stop":
                    st["ending"] = True

    def at_exit():
        st["ending"] = True
        flush(time.monotonic() - st["t0"])
        send({"t": "end", "ts": time.monotonic() - st["t0"], "reason": "exit"})

    atexit.register(at_exit)
    threading.Thread(target=sampler, daemon=True, name="hotline-fake-sampler").start()
    threading.Thread(target=reader, daemon=True, name="hotline-fake-reader").start()


_start()
