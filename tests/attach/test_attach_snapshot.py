"""The attach reader replays a recorded stack exactly (attach/mem.h,
attach/snapshot.h): attach_snapshot records snap_target.py's threads and
stacks through a recording memory source, and the snapshot it saved must
read back, in a new process that has no Python to read, as the same
threads and frames (file, function, line); those frames must be the ones
the target says it sleeps in (its ground truth).

usage: test_attach_snapshot.py ATTACH_SNAPSHOT_TOOL"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "snap_target.py")


def stacks(text):
    """{tid: [(file, line, name), ...]} from the tool's text."""
    out, cur = {}, None
    for ln in text.splitlines():
        if ln.startswith("thread "):
            cur = out.setdefault(int(ln.split()[1]), [])
        else:
            loc, name = ln.strip().split(" ", 1)
            f, line = loc.rsplit(":", 1)
            cur.append((f, int(line), name))
    return out


def main():
    tool = sys.argv[1]
    target = subprocess.Popen([sys.executable, TARGET], stdout=subprocess.PIPE, text=True)
    try:
        ready = target.stdout.readline().split()
        assert ready and ready[0] == "ready", ready
        truth = {k: int(v) for k, v in (kv.split("=") for kv in ready[1:])}
        time.sleep(0.3)  # past the print, into time.sleep
        with tempfile.TemporaryDirectory() as d:
            snap = os.path.join(d, "t.snap")
            rec = subprocess.run([tool, "record", str(target.pid), snap], capture_output=True,
                                 text=True, timeout=30)
            sys.stderr.write(rec.stderr)
            assert rec.returncode == 0, rec.returncode
            back = subprocess.run([tool, "replay", snap], capture_output=True, text=True,
                                  timeout=30)
            assert back.returncode == 0, back.stderr
            assert back.stdout == rec.stdout, (rec.stdout, back.stdout)
            size = os.path.getsize(snap)
    finally:
        target.kill()
        target.wait()
    st = stacks(rec.stdout)
    main_frames = st.get(target.pid)
    assert main_frames, "no main thread (tid %d) in\n%s" % (target.pid, rec.stdout)
    want = [(TARGET, truth["inner"], "inner"), (TARGET, truth["outer"], "outer")]
    assert main_frames[:2] == want, (main_frames, want)
    assert [f[2] for f in main_frames[2:]] == ["main", "<module>"], main_frames
    workers = [fr for tid, fr in st.items() if tid != target.pid]
    assert any(fr and fr[0] == (TARGET, truth["worker_loop"], "worker_loop") for fr in workers), st
    print("ok: %d threads, %d frames, snapshot of %d bytes read back the same"
          % (len(st), sum(len(f) for f in st.values()), size))


if __name__ == "__main__":
    main()
