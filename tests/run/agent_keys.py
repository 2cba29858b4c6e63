#!/usr/bin/env python3
"""Every key the real agent emits is in protocol/agent_keys.h.

Plays the server: listens on a Unix socket, starts a small program with the
agent booted as `hotline run` boots it (PYTHONPATH + HOTLINE_SOCKET +
HOTLINE_BOOT), asks for `now` snapshots, and records the whole stream until
the agent closes it. The program allocates (memory deltas), runs two
threads, and, with --nvml, scripts the NVML stand-in (GPU deltas). Then
agent_keys_check checks every key of every message, and must have seen every
kind of message and entry the program produces. First it is shown a line
with a key that is not in the table, and must reject it (the check can fail).

With --hotline, `hotline attach --connect` is recorded the same way (it
writes with the agent's builders, protocol/agent_emit.h, so a new row of
the table cannot miss it): attached to a plain Python program (two
threads, a Python child it names in a `log`) and to a process that is not
Python (its `error`).

usage: agent_keys.py --checker BIN --agent BUILD/python --python PY [--nvml LIB]
                     [--hotline BIN]
"""
import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time

PROG = r'''
import os, threading, time
def work():
    keep = []
    for i in range(40):
        keep.append(bytearray(256 * 1024))
        if i % 4 == 0:
            keep.pop(0)
        time.sleep(0.005)
    return len(keep)
def gpu():
    lib = os.environ.get("FAKE_NVML")
    if lib:
        import ctypes
        ctypes.CDLL(lib).fake_nvml_set(50, ctypes.c_longlong(64))
t = threading.Thread(target=work, name="worker")
t.start()
gpu()
work()
t.join()
time.sleep(0.3)
'''


# attach's target: no agent; two threads, and a Python child that lives
# long enough to be named (a children scan a second, two scans to be sure)
ATTACH_PROG = r'''
import subprocess, sys, threading, time
def work(n):
    t = time.monotonic()
    while time.monotonic() - t < n:
        sum(range(1000))
        time.sleep(0.001)
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])
t = threading.Thread(target=work, args=(60,), name="worker", daemon=True)
t.start()
print("ready", flush=True)
work(60)
'''


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def serve(srv, procs, what):
    """Plays the server on srv until every process in procs has exited and
    every connection is closed: the bytes of each connection (each asked
    for `now` snapshots at 50 Hz)."""
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ)
    data, open_conns, deadline = {}, 0, time.monotonic() + 60
    while time.monotonic() < deadline:
        if all(p.poll() is not None for p in procs) and open_conns == 0 and data:
            break
        for key, _ in sel.select(timeout=0.2):
            if key.fileobj is srv:
                c, _ = srv.accept()
                # keyed by connection, not by descriptor: a peer that only
                # reports an error and closes frees its fd for the next one
                sel.register(c, selectors.EVENT_READ, data=len(data))
                data[len(data)] = b""
                open_conns += 1
                continue
            chunk = key.fileobj.recv(65536)
            if chunk:
                # `now` asked once the peer said hello (its first line): a
                # peer that only reports an error and closes has nothing
                # unread then, so its close is not a reset
                fd = key.data
                if b"\n" not in data[fd] and b"\n" in chunk and b'"hello"' in chunk:
                    key.fileobj.sendall(b'{"t":"now","hz":50}\n')
                data[fd] += chunk
            else:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                open_conns -= 1
    else:
        for p in procs:
            p.kill()
        fail("%s did not finish within 60 s" % what)
    return data


def listener(work, name):
    sock_path = os.path.join(work, name)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(8)
    return srv, sock_path


def save(work, name, data):
    wire = os.path.join(work, name)
    with open(wire, "wb") as f:
        for chunk in data.values():
            f.write(chunk)
    return wire


def record_attach(args, work):
    """`hotline attach --connect` on a plain Python program, and on a
    process that is not Python: the stream recorded."""
    srv, sock_path = listener(work, "a")
    prog = os.path.join(work, "attach_prog.py")
    with open(prog, "w") as f:
        f.write(ATTACH_PROG)
    target = subprocess.Popen([args.python, prog], cwd=work, stdout=subprocess.PIPE,
                              start_new_session=True)
    notpy = subprocess.Popen(["sleep", "60"])
    try:
        if target.stdout.readline().strip() != b"ready":
            fail("the attach target did not start")
        h = subprocess.Popen([args.hotline, "attach", str(target.pid), "--connect", sock_path,
                              "--duration", "2.5"])
        h2 = subprocess.Popen([args.hotline, "attach", str(notpy.pid), "--connect", sock_path],
                              stderr=subprocess.DEVNULL)
        data = serve(srv, [h, h2], "hotline attach --connect")
        if h.wait() != 0 or h2.wait() == 0:
            fail("hotline attach exited %d (the target), %d (not Python)" % (h.returncode,
                                                                            h2.returncode))
    finally:
        os.killpg(target.pid, 9)
        target.wait()
        notpy.kill()
        notpy.wait()
    return save(work, "attach.jsonl", data)


def record(args, work):
    srv, sock_path = listener(work, "s")
    prog = os.path.join(work, "prog.py")
    with open(prog, "w") as f:
        f.write(PROG)
    env = dict(os.environ, PYTHONPATH=args.agent, HOTLINE_SOCKET=sock_path, HOTLINE_BOOT="1",
               HOTLINE_CONFIG=json.dumps({"interval_ms": 2, "memory": True, "gpu": True,
                                          "mem_interval_kb": 16}))
    if args.nvml:
        env.update(HOTLINE_NVML_LIB=args.nvml, FAKE_NVML=args.nvml)
    else:
        env["HOTLINE_NVML_LIB"] = os.path.join(work, "no-such-nvml.so")
    p = subprocess.Popen([args.python, prog], cwd=work, env=env)
    data = serve(srv, [p], "the agent")
    if p.wait(timeout=10) != 0:
        fail("the program exited with %d" % p.returncode)
    return save(work, "wire.jsonl", data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checker", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--nvml")
    ap.add_argument("--hotline")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="hotline-keys-")
    bad = os.path.join(work, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"t":"delta","ts":1,"samples":0,"lines":[{"f":1,"l":2,"py":0.1,"not_a_key":1}]}\n')
    r = subprocess.run([args.checker, bad], capture_output=True, text=True)
    if r.returncode == 0 or "not_a_key" not in r.stderr:
        fail("the checker accepted an unknown key: rc %d, %s" % (r.returncode, r.stderr))
    wire = record(args, work)
    need = "HELLO,STR,STACK,DELTA,NOW,END,LINE,FUNC,THREAD,MEM,NOW_THREAD"
    if args.nvml:
        need += ",GPU"
    r = subprocess.run([args.checker, wire, need], capture_output=True, text=True)
    print(r.stdout, r.stderr)
    if r.returncode != 0:
        fail("the agent emitted keys that protocol/agent_keys.h does not list (%s)" % wire)
    if args.hotline:
        wire = record_attach(args, work)
        need = "HELLO,STR,STACK,DELTA,NOW,END,ERROR,LOG,LINE,FUNC,THREAD,NOW_THREAD"
        r = subprocess.run([args.checker, wire, need], capture_output=True, text=True)
        print("hotline attach --connect:", r.stdout, r.stderr)
        if r.returncode != 0:
            fail("hotline attach emitted keys that protocol/agent_keys.h does not list, or "
                 "missed a message (%s)" % wire)
    print("PASS")


if __name__ == "__main__":
    main()
