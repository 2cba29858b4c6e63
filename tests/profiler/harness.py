"""Test-side stand-in for `hotline run`: an independent reader of the agent
wire stream (docs/agent-protocol.md).

run() creates a private Unix socket, runs the target with the bootstrap
environment exactly as `hotline run` will (plain `python script.py args`,
PYTHONPATH=<build>/python, HOTLINE_SOCKET, HOTLINE_CONFIG, HOTLINE_BOOT=1),
collects every connection's lines until EOF and merges them: per-line and
per-function totals, stacks, threads. It also checks the stream itself:
hello first, ids defined before use, one JSON object per line."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.environ.get("HOTLINE_BUILD", "")
AGENT_DIR = os.path.join(BUILD, "python")
SPIN_DIR = os.environ.get("HOTLINE_SPIN_DIR", "")
HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable


class Conn:
    """One agent connection (one process), merged."""

    def __init__(self):
        self.raw = []
        self.msgs = []
        self.strs = {}
        self.stacks = {}
        self.hello = None
        self.end = None
        self.errors = []
        self.lines = {}   # (file, line) -> dict(py, nat, sys, cpu, n)
        self.funcs = {}   # (file, qualname) -> dict
        self.threads = {}  # tid -> dict(name, py, nat, sys)
        self.stack_time = {}  # tuple of (file, name, line) -> seconds
        self.thread_stack_time = {}  # tid (0: threads not told apart) -> stacks' seconds
        self.thread_stacks = {}  # tid -> {stack key: seconds}
        self.deltas = 0
        self.problems = []

    def feed(self, line):
        self.raw.append(line)
        try:
            m = json.loads(line)
        except ValueError:
            self.problems.append("bad json: %r" % line[:200])
            return
        self.msgs.append(m)
        t = m.get("t")
        if self.hello is None and t not in ("hello", "error"):
            self.problems.append("first message is %r" % t)
        if t == "hello":
            self.hello = m
        elif t == "str":
            self.strs[m["id"]] = m["s"]
        elif t == "stack":
            fr = []
            for f, n, l in m["fr"]:
                self._need(f)
                self._need(n)
                fr.append((self.strs.get(f), self.strs.get(n), l))
            self.stacks[m["id"]] = tuple(fr)
        elif t == "delta":
            self.deltas += 1
            for e in m.get("lines", []):
                self._need(e["f"])
                self._add(self.lines, (self.strs.get(e["f"]), e["l"]), e)
            for e in m.get("funcs", []):
                self._need(e["f"])
                self._need(e["fn"])
                self._add(self.funcs, (self.strs.get(e["f"]), self.strs.get(e["fn"])), e)
            for e in m.get("stacks", []):
                # [sid, samples, seconds, tid]; tid 0 or absent: not told apart
                sid, sec, tid = e[0], e[2], e[3] if len(e) > 3 else 0
                if sid not in self.stacks:
                    self.problems.append("stack %d used before definition" % sid)
                key = self.stacks.get(sid)
                self.stack_time[key] = self.stack_time.get(key, 0.0) + sec
                self.thread_stack_time[tid] = self.thread_stack_time.get(tid, 0.0) + sec
                per = self.thread_stacks.setdefault(tid, {})
                per[key] = per.get(key, 0.0) + sec
            for e in m.get("threads", []):
                r = self.threads.setdefault(e["tid"], {"name": e.get("name"), "py": 0.0,
                                                       "nat": 0.0, "sys": 0.0})
                for k in ("py", "nat", "sys"):
                    r[k] += e[k]
        elif t == "end":
            self.end = m
        elif t == "error":
            self.errors.append(m.get("msg"))

    def _need(self, sid):
        if sid not in self.strs:
            self.problems.append("string %r used before definition" % (sid,))

    @staticmethod
    def _add(table, key, e):
        r = table.setdefault(key, {"py": 0.0, "nat": 0.0, "sys": 0.0, "cpu": 0.0, "n": 0})
        for k in ("py", "nat", "sys", "cpu", "n"):
            r[k] += e.get(k, 0)
        if "first" in e:
            r["first"], r["last"] = e["first"], e["last"]

    def line(self, path, lineno):
        r = self.lines.get((path, lineno))
        return r or {"py": 0.0, "nat": 0.0, "sys": 0.0, "cpu": 0.0, "n": 0}

    def total_py_files(self):
        return sorted({f for f, _ in self.lines})


class Result:
    def __init__(self, rc, out, err, conns, elapsed):
        self.rc, self.stdout, self.stderr, self.conns, self.elapsed = rc, out, err, conns, elapsed
        self.steal = 0.0
        self.contention = 0.0  # the target's threads' runqueue wait share (_run_watched)
        self.pressure = None  # machine-wide: share of the run some task waited for a CPU

    @property
    def main(self):
        """The connection of the top process (hello.ppid == our pid)."""
        for c in self.conns:
            if c.hello and c.hello.get("ppid") == os.getpid():
                return c
        raise AssertionError("no connection from the main process; stderr:\n%s"
                             % self.stderr.decode(errors="replace"))


class _Server:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.conns = []
        self.readers = []
        self.stopping = False
        self.lock = threading.Lock()
        self.requests = []  # lines sent to every new connection
        self.t = threading.Thread(target=self._accept, daemon=True)
        self.t.start()

    def _accept(self):
        while not self.stopping:
            try:
                s, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            c = Conn()
            with self.lock:
                self.conns.append(c)
            for line in self.requests:
                try:
                    s.sendall(line.encode())
                except OSError:
                    pass
            r = threading.Thread(target=self._read, args=(s, c), daemon=True)
            r.start()
            self.readers.append(r)

    @staticmethod
    def _read(s, c):
        buf = b""
        s.settimeout(None)
        while True:
            try:
                d = s.recv(65536)
            except OSError:
                break
            if not d:
                break
            buf += d
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                c.feed(line.decode("utf-8"))
        c.closed = True
        s.close()

    def wait_closed(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(not r.is_alive() for r in list(self.readers)):
                return True
            time.sleep(0.01)
        return False

    def close(self):
        self.stopping = True
        self.t.join()
        self.sock.close()


def env_for(sock, config, extra_env=None, pythonpath_extra=None):
    env = dict(os.environ)
    pp = [AGENT_DIR, SPIN_DIR] + list(pythonpath_extra or [])
    if env.get("PYTHONPATH"):
        pp.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(p for p in pp if p)
    env["HOTLINE_SOCKET"] = sock
    env["HOTLINE_CONFIG"] = json.dumps(config)
    env["HOTLINE_BOOT"] = "1"
    env.pop("HOTLINE_OUT", None)
    env.update(extra_env or {})
    return env


def _cpu_jiffies():
    """(steal, total) jiffies of all CPUs from /proc/stat (None if absent)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (v[7] if len(v) > 7 else 0), sum(v[:8])


def _cpu_pressure():
    """Microseconds some task of the machine waited for a CPU (PSI), or None."""
    try:
        with open("/proc/pressure/cpu") as f:
            some = f.readline().split()
    except OSError:
        return None
    for kv in some:
        if kv.startswith("total="):
            return int(kv[6:])
    return None


def _schedstat(pid):
    """{tid: (on-CPU ns, runqueue-wait ns)} of every thread of pid now."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                v = f.read().split()
            out[int(tid)] = (int(v[0]), int(v[1]))
        except (OSError, ValueError, IndexError):
            pass
    return out


def _run_watched(cmd, env, cwd, timeout, stdin):
    """subprocess.run(cmd) that also measures the CPU contention the target
    ran under: the share of its threads' runnable time spent waiting on a
    runqueue for a CPU (the kernel's schedstat, polled every 20 ms while it
    runs; a thread's last reading stands for its whole life, so threads
    shorter than a poll are missed). That is the load that matters for the
    profiler: the target and its sampler thread waiting for a CPU, whatever
    the load average says. Returns a CompletedProcess with .contention."""
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    seen = {}
    done = threading.Event()

    def poll():
        while not done.is_set():
            seen.update(_schedstat(p.pid))
            done.wait(0.02)

    w = threading.Thread(target=poll, daemon=True)
    w.start()
    try:
        out, err = p.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    finally:
        done.set()
        w.join()
    r = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    run_ns = sum(v[0] for v in seen.values())
    wait_ns = sum(v[1] for v in seen.values())
    r.contention = wait_ns / (run_ns + wait_ns) if run_ns + wait_ns > 0 else 0.0
    return r


def run(argv, config=None, extra_env=None, timeout=60, cwd=None, requests=(),
        pythonpath_extra=None, stdin=None):
    """Run [python] + argv under the agent; returns a Result. argv[0] is a
    script path or "-m"."""
    d = tempfile.mkdtemp(prefix="hl-")
    os.chmod(d, 0o700)
    sock = os.path.join(d, "s")
    srv = _Server(sock)
    srv.requests = list(requests)
    cfg = {"interval_ms": 10, "server_pid": os.getpid()}
    if argv[0] == "-m":
        cfg["main"] = "-m " + argv[1]
    else:
        cfg["main"] = os.path.abspath(argv[0])
    cfg.update(config or {})
    env = env_for(sock, cfg, extra_env, pythonpath_extra)
    t0, j0, psi0 = time.monotonic(), _cpu_jiffies(), _cpu_pressure()
    try:
        p = _run_watched([PY] + list(argv), env, cwd, timeout, stdin)
        elapsed, j1, psi1 = time.monotonic() - t0, _cpu_jiffies(), _cpu_pressure()
        if not srv.wait_closed(15):
            raise AssertionError("agent connections still open 15 s after exit")
    finally:
        srv.close()
        shutil.rmtree(d, ignore_errors=True)
    for c in srv.conns:
        assert not c.problems, c.problems[:5]
    res = Result(p.returncode, p.stdout, p.stderr, srv.conns, elapsed)
    res.contention = p.contention
    if psi0 is not None and psi1 is not None and elapsed > 0:
        res.pressure = min(1.0, (psi1 - psi0) / 1e6 / elapsed)
    # the share of all vCPU time the hypervisor gave to others during the
    # run (docs/sampling.md, "Limits": a thread runnable on a stolen vCPU is
    # running for the profiler, and burns no CPU)
    if j0 and j1 and j1[1] > j0[1]:
        res.steal = (j1[0] - j0[0]) / (j1[1] - j0[1])
    return res


def plain(argv, timeout=60, cwd=None, extra_env=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [SPIN_DIR, env.get("PYTHONPATH")] if p)
    env.update(extra_env or {})
    return subprocess.run([PY] + list(argv), env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)


def markers(path):
    """{name: line} for lines tagged `# @name` in a source file."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for i, text in enumerate(f, 1):
            if "# @" in text:
                out[text.split("# @", 1)[1].strip()] = i
    return out


def dominant(r):
    tot = r["py"] + r["nat"] + r["sys"]
    if tot <= 0:
        return None, 0.0
    k = max(("py", "nat", "sys"), key=lambda k: r[k])
    return k, r[k] / tot


def target(name):
    return os.path.join(HERE, "targets", name)


class Checker:
    """Collects failures so that one run reports every wrong line."""

    def __init__(self, label):
        self.label = label
        self.fails = []
        self.steal_fails = []

    def check(self, ok, msg, steal=False):
        """steal=True: a category share (Python vs native, running vs
        waiting) or a line's CPU, which vCPU steal above STEAL_MAX or CPU
        contention above CONTENTION_MAX breaks without the profiler being
        wrong about what it promises (accuracy())."""
        if not ok:
            (self.steal_fails if steal else self.fails).append(msg)

    def done(self):
        tag = "%s [Python %d.%d.%d %s]" % ((self.label,) + sys.version_info[:3] + (PY,))
        if self.fails:
            print("FAIL " + tag)
            for f in self.fails:
                print("  - " + f)
            sys.exit(1)
        print("ok " + tag)


# Above this share of all vCPU time stolen by the hypervisor during an
# attempt, Python-vs-native shares are not judged: a thread whose vCPU is
# stolen keeps its frame while its CPU clock runs on until the vCPU returns,
# which is what C code looks like (docs/sampling.md, "Limits"). Measured
# here: test_alternate's busy line (pure Python) read 0-1% native at 1-3%
# steal, 10-35% at 8-15%, and short_threads' loops 20-57% at 30-35%. The
# same for running-vs-waiting on a line that blocks: a thread entering or
# leaving its sleep on a stolen vCPU stays runnable there (test_alternate's
# sleep line read 81-87% system at 11-20% steal). Every other check still
# applies.
STEAL_MAX = 0.05

# Above this share of its runnable time spent waiting on a runqueue for a
# CPU (the target's threads, kernel schedstat: _run_watched), the same
# shares are not judged either. Why: the Python/native/system decision
# probes a thread for ~1 ms around each sample (docs/sampling.md); when the
# target, or its sampler thread, waits for a CPU through that window the
# probe sees no progress either way and keeps the thread's previous
# category, and a thread just woken from a sleep waits runnable on the sleep
# line. Measured on the 2-core VM with 6-8 busy loops beside the tests
# (load 6-10): truth's C spin line read 54-100% Python, alternate's sleep
# line 61-68% system, short_threads' lines 2.3-4.5x their CPU, at 30-60%
# contention; the seconds of every line stayed within their bounds, and
# those are always judged. Quiet (load 0.8, 4 Dec 2026) the single-threaded
# targets waited 0.3-1.8%, and threads' and short_threads' 5.5-12%: their
# own threads compete for the 2 cores; hence 15%, above that.
CONTENTION_MAX = 0.15


def accuracy(label, attempt, tries=3):
    """Runs attempt(checker) up to `tries` times; passes when one attempt
    has no failure. Every attempt and its failures are printed, with the
    sampler's worst wake-up delay (from `end`). Why retry at all: on a
    shared VM two measured effects break single runs without the profiler
    being wrong (docs/sampling.md, "Limits"): the sampler starved for tens
    of ms, and vCPU time stolen by the hypervisor charged to a thread as CPU
    while its frame is frozen (looks like C code). A profiler that is wrong
    fails every attempt; the checks themselves are never loosened, except
    that Python-vs-native shares are not judged in an attempt run with more
    than STEAL_MAX of the machine stolen (printed as "not judged"; such a
    pass is kept while the next attempts try for a judged one)."""
    passed = None
    for i in range(tries):
        c = Checker(label)
        results = attempt(c)
        late = max((r.main.end or {}).get("late_max_ms", 0.0) for r in results)
        steal = max(r.steal for r in results)
        cont = max(r.contention for r in results)
        psi = max((r.pressure for r in results if r.pressure is not None), default=None)
        print("attempt %d: target waited for a CPU %.1f%% of its runnable time, machine CPU pressure %s"
              % (i + 1, 100 * cont, "n/a" if psi is None else "%.0f%%" % (100 * psi)))
        loaded = steal > STEAL_MAX or cont > CONTENTION_MAX
        if not loaded:
            c.fails += c.steal_fails
        else:
            for f in c.steal_fails:
                print("  not judged at %.0f%% vCPU steal, %.0f%% CPU contention: %s"
                      % (100 * steal, 100 * cont, f))
        print("attempt %d: sampler worst lateness %.1f ms, vCPU steal %.0f%%, %d failures"
              % (i + 1, late, 100 * steal, len(c.fails)))
        unjudged = loaded and c.steal_fails
        if not c.fails and not unjudged:
            c.done()
            return
        if not c.fails:  # passed, but with a share not judged: one more try may judge it
            passed = c
        for f in c.fails:
            print("  - " + f)
    if passed:
        print("every attempt that passed had shares not judged (vCPU steal above %.0f%% or CPU "
              "contention above %.0f%%)" % (100 * STEAL_MAX, 100 * CONTENTION_MAX))
        c = passed
    c.done()
