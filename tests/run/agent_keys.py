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

usage: agent_keys.py --checker BIN --agent BUILD/python --python PY [--nvml LIB]
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


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def record(args, work):
    sock_path = os.path.join(work, "s")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(8)
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
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ)
    data, open_conns, deadline = {}, 0, time.monotonic() + 60
    while time.monotonic() < deadline:
        if p.poll() is not None and open_conns == 0 and data:
            break
        for key, _ in sel.select(timeout=0.2):
            if key.fileobj is srv:
                c, _ = srv.accept()
                c.sendall(b'{"t":"now","hz":50}\n')
                sel.register(c, selectors.EVENT_READ)
                data[c.fileno()] = b""
                open_conns += 1
                continue
            chunk = key.fileobj.recv(65536)
            if chunk:
                data[key.fileobj.fileno()] += chunk
            else:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                open_conns -= 1
    else:
        p.kill()
        fail("the agent did not finish within 60 s")
    if p.wait(timeout=10) != 0:
        fail("the program exited with %d" % p.returncode)
    wire = os.path.join(work, "wire.jsonl")
    with open(wire, "wb") as f:
        for chunk in data.values():
            f.write(chunk)
    return wire


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checker", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--nvml")
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
    print("PASS")


if __name__ == "__main__":
    main()
