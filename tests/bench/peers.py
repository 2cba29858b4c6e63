#!/usr/bin/env python3
"""Hotline against current peers (benchmark, not a test): overhead and accuracy.

    tests/bench/peers.py                       # the real run (see docs/benchmarks.md)
    tests/bench/peers.py --seconds 0.3 --reps 1 --truth-seconds 0.3   # smoke run

Peers, pinned in tests/bench/peers-requirements.txt and installed by this
script into a virtual environment of its own (--venv, default
build/bench-venv; reinstalled when the pin file changes): Scalene 2.x, py-spy,
Austin, memray, pyinstrument; torch (CPU wheel) in a separate folder
(VENV/torch) put on PYTHONPATH for the torch workload only. With
--python315 PATH, CPython 3.15's own `python -m profiling.sampling` too.

1. Overhead: whole-process wall time of each workload under each tool over
   plain, median of --reps interleaved rounds (tests/bench/bench.py's runner:
   calibration, interleaving, start-up), the bench.py workloads plus gmm
   (scikit-learn GaussianMixture per-pixel loop) and torchtrain (PyTorch CPU).
2. Accuracy: each tool once on tests/bench/truth.py (segments the program times
   itself); the table shows what each tool's own output charges to the
   native-BLAS, sleep, leaking and churning lines (and a pure-Python line).

3. Accuracy under load: Hotline and py-spy (--native) on truth.py again with
   one busy competitor per core (--load-competitors), the way a developer's
   laptop or a CI runner looks while other work runs.

Every table records the machine's load average and CPU steal while it was
measured (/proc/loadavg, /proc/stat). Overhead rows taken above --max-load
(default 1.5) are printed marked "~" and named in a footnote, or left out
with --refuse-above: a ratio measured on a busy machine is the machine's,
not the tool's. Each overhead cell is "WALLx/CPUc": wall-time ratio and
CPU-time ratio (user + system of the whole process tree, which moves far
less with other load than wall time does).

Nothing is asserted; a tool that cannot run a workload gets a cell saying why.
"""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (shared runner: wall, calibrate, interleave, startup)

ROOT = bench.ROOT
PINS = os.path.join(HERE, "peers-requirements.txt")
TRUTH = os.path.join(HERE, "truth.py")
WORKLOADS = bench.WORKLOADS + ["gmm", "torchtrain"]
NEEDS = {"numeric": "numpy", "npalloc": "numpy", "gmm": "sklearn", "torchtrain": "torch"}
MARKS = ["py", "blas", "sleep", "leak", "churn"]
MB = 1 << 20
# output file name endings: scalene, for one, appends .json to a name without it
EXT = {"hotline": ".json", "scalene": ".json", "memray": ".bin", "pyinstrument": ".json"}


# ---- the machine's state ------------------------------------------------------
class Machine:
    """Load average and CPU steal between two reads (/proc/stat's steal
    column: time a VM's vCPUs were runnable but not run)."""

    def __init__(self):
        self.prev = self._stat()

    @staticmethod
    def _stat():
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
            return sum(v), (v[7] if len(v) > 7 else 0)
        except (OSError, ValueError, IndexError):
            return 0, 0

    def read(self):
        """(1-minute load average, steal % since the previous read)."""
        tot, steal = self._stat()
        dt, ds = tot - self.prev[0], steal - self.prev[1]
        self.prev = (tot, steal)
        return os.getloadavg()[0], (100.0 * ds / dt if dt > 0 else 0.0)


def load_note(load, steal):
    return "load %.2f, steal %.1f%%" % (load, steal)


# ---- the virtual environment -------------------------------------------------

def pip(py, *args):
    """pip in the venv; returns (ok, last lines of its output)."""
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
                       + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = [ln for ln in r.stdout.decode(errors="replace").splitlines()
             if not ln.startswith("WARNING: Location")]  # local-index noise
    return r.returncode == 0, "\n".join(lines[-5:])


def ensure_venv(a):
    """Creates/updates the venv; returns (python, torch dir or None, why no torch)."""
    py = os.path.join(a.venv, "bin", "python")
    if not os.path.exists(py):
        print("creating %s (%s -m venv)" % (a.venv, a.base_python), flush=True)
        subprocess.run([a.base_python, "-m", "venv", a.venv], check=True)
    stamp = os.path.join(a.venv, "peers-requirements.txt")
    want = open(PINS).read()
    if not os.path.exists(stamp) or open(stamp).read() != want:
        print("installing the pinned peers (a minute or two)", flush=True)
        ok, out = pip(py, "-r", PINS)
        if not ok:
            sys.exit("pip install -r %s failed:\n%s" % (PINS, out))
        shutil.copy(PINS, stamp)
    if a.no_torch:
        return py, None, "--no-torch"
    tdir = os.path.join(a.venv, "torch")
    tstamp = os.path.join(tdir, ".spec")
    if not os.path.exists(tstamp) or open(tstamp).read() != a.torch_spec:
        print("installing %s into %s (large; several minutes)" % (a.torch_spec, tdir), flush=True)
        shutil.rmtree(tdir, ignore_errors=True)
        ok, out = pip(py, "--target", tdir, a.torch_spec)
        if not ok:
            shutil.rmtree(tdir, ignore_errors=True)
            return py, None, "pip install %s failed: %s" % (a.torch_spec, out.strip()[-200:])
        with open(tstamp, "w") as f:
            f.write(a.torch_spec)
    return py, tdir, None


# ---- the tools ---------------------------------------------------------------
# Each tool: argv(script, args, out) runs script under it writing its own output
# file `out`; parse(out, truth_path, truth) reads that output (truth: what
# truth.py measured in the same run) into per-line records
# {line: {"t": seconds or None, "split": {label: s}, "mem": text or None}}.

def _line_rec(recs, line):
    return recs.setdefault(line, {"t": 0.0, "split": {}, "mem": None})


def _add(recs, line, label, s):
    r = _line_rec(recs, line)
    r["t"] += s
    r["split"][label] = r["split"].get(label, 0.0) + s


def parse_hotline(out, truth_path, truth=None):
    j = json.load(open(out))
    recs = {}
    for f, d in j["files"].items():
        if os.path.realpath(f) != truth_path:
            continue
        leaks = {lk["line"]: lk["likelihood"] for lk in d.get("leaks", [])}
        for ln, st in d["lines"].items():
            ln = int(ln)
            for k, lab in (("python_s", "py"), ("native_s", "nat"), ("system_s", "sys")):
                _add(recs, ln, lab, st.get(k, 0.0))
            if st.get("alloc_mb"):
                # + 0.0: freed a hair above alloc (sampling) prints "-0"
                kept = round(st.get("alloc_mb", 0.0) - st.get("freed_mb", 0.0)) + 0.0
                _line_rec(recs, ln)["mem"] = "alloc %.0f kept %.0f MB%s" % (
                    st["alloc_mb"], kept, " leak %.0f%%" % (leaks[ln] * 100) if ln in leaks else "")
    return recs


def parse_scalene(out, truth_path, truth):
    """Scalene gives per line % of the profile (python / C / system; 100% over
    the program's lines) and MB allocated; leaks as {line: {likelihood,
    velocity_mb_s}}. Its elapsed_time_sec includes its own start and end
    (seconds more than the program), so % are turned into seconds of the
    program's own run, which truth.py measures ("total")."""
    j = json.load(open(out))
    el = truth["total"]
    recs = {}
    for f, d in j["files"].items():
        if os.path.realpath(f) != truth_path:
            continue
        leaks = {int(k): v.get("likelihood", 0.0) for k, v in d.get("leaks", {}).items()}
        for st in d["lines"]:
            ln = st["lineno"]
            for k, lab in (("n_cpu_percent_python", "py"), ("n_cpu_percent_c", "nat"),
                           ("n_sys_percent", "sys")):
                if st.get(k):
                    _add(recs, ln, lab, st[k] / 100.0 * el)
            if st.get("n_malloc_mb") or ln in leaks:
                _line_rec(recs, ln)["mem"] = "alloc %.0f MB%s" % (
                    st.get("n_malloc_mb", 0.0),
                    " leak %.0f%%" % (leaks[ln] * 100) if ln in leaks else "")
    return recs


PYSPY_FRAME = re.compile(r"^(.*) \((.*):(\d+)\)$")


def parse_pyspy(out, truth_path, rate, truth=None):
    """Raw (folded) stacks "frame;frame;... count", root first; Python frames
    "func (file:line)", native ones "sym (lib.so)". A sample goes to the
    innermost frame in the truth file; its leaf says Python or native (py-spy
    marks no idle state: with --idle --native a wait shows as native)."""
    recs = {}
    for row in open(out):
        stack, _, n = row.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        hit = None
        for fr in frames:
            m = PYSPY_FRAME.match(fr)
            if m and os.path.realpath(m.group(2)) == truth_path:
                hit = int(m.group(3))
        if hit is None:
            continue
        leaf_py = PYSPY_FRAME.match(frames[-1]) is not None
        _add(recs, hit, "py" if leaf_py else "nat", int(n) / rate)
    return recs


def parse_austin(out, truth_path, truth=None):
    """Austin full mode: "P<pid>;T<iid>:<tid>;file:func:line;... time_us,idle,mem_delta"."""
    recs = {}
    mem = {}
    for row in open(out):
        if not row.startswith("P"):
            continue
        stack, _, metrics = row.rstrip("\n").rpartition(" ")
        vals = metrics.split(",")
        if len(vals) != 3:
            continue
        us, idle, dmem = int(vals[0]), vals[1] == "1", int(vals[2])
        hit = None
        for fr in stack.split(";")[2:]:
            parts = fr.rsplit(":", 2)
            if len(parts) == 3 and os.path.realpath(parts[0]) == truth_path:
                hit = int(parts[2])
        if hit is None:
            continue
        _add(recs, hit, "idle" if idle else "cpu", us / 1e6)
        up, net = mem.get(hit, (0, 0))
        mem[hit] = (up + max(dmem, 0), net + dmem)
    for ln, (up, net) in mem.items():
        if up:
            _line_rec(recs, ln)["mem"] = "rss +%.0f net %+.0f MB" % (up / MB, net / MB)
    return recs


def parse_memray(out, truth_path, py, truth=None):
    """Has memray write `memray stats --json` (bytes allocated per location)
    and `memray transform csv --leaks` (bytes never freed) next to OUT.bin."""
    memray = [py, "-m", "memray"]
    sj, lc = out + ".stats.json", out + ".leaks.csv"
    subprocess.run(memray + ["stats", "--json", "-n", "100", "-f", "-o", sj, out],
                   stdout=subprocess.DEVNULL, check=True)
    subprocess.run(memray + ["transform", "csv", "--leaks", "-f", "-o", lc, out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return parse_memray_reports(sj, lc, truth_path)


def parse_memray_reports(stats_json, leaks_csv, truth_path):
    """location "func:file:line" in the stats; stack "func;file;line|..." innermost first."""
    alloc, kept = {}, {}
    for e in json.load(open(stats_json))["top_allocations_by_size"]:
        _, _, rest = e["location"].partition(":")
        f, _, ln = rest.rpartition(":")
        if os.path.realpath(f) == truth_path:
            alloc[int(ln)] = alloc.get(int(ln), 0) + e["size"]
    for row in csv.DictReader(open(leaks_csv)):
        for fr in row["stack_trace"].split("|"):
            parts = fr.split(";")
            if len(parts) == 3 and os.path.realpath(parts[1]) == truth_path:
                ln = int(parts[2])
                kept[ln] = kept.get(ln, 0) + int(row["size"])
                break
    recs = {}
    for ln in set(alloc) | set(kept):
        r = _line_rec(recs, ln)
        r["t"] = None
        r["mem"] = "alloc %.0f kept %.0f MB" % (alloc.get(ln, 0) / MB, kept.get(ln, 0) / MB)
    return recs


def parse_pyinstrument(out, truth_path, truth=None):
    """Call tree of functions: no line numbers below a function, so every line
    of segments() is one "[self]" time; time.sleep shows as a built-in child.
    Returned under the pseudo-lines "self" and "sleep"."""
    recs = {}

    def walk(fr, in_truth):
        here = os.path.realpath(fr.get("file_path") or "") == truth_path
        for c in fr.get("children", []):
            if here and c.get("function") == "[self]":
                _add(recs, "self", "fn", c["time"])
            elif here and c.get("function") == "sleep" and c.get("file_path") == "<built-in>":
                _add(recs, "sleep", "fn", c["time"])
            walk(c, here)

    walk(json.load(open(out))["root_frame"], False)
    return recs


def parse_tachyon(out, truth_path, interval_s, truth=None):
    """CPython 3.15 profiling.sampling --collapsed: "tid:N;file:func:line;... count"
    with file as a basename; with --native a "<native>" leaf frame."""
    base = os.path.basename(truth_path)
    recs = {}
    for row in open(out):
        stack, _, n = row.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        hit = None
        for fr in frames:
            parts = fr.rsplit(":", 2)
            if len(parts) == 3 and parts[0] == base and parts[2].isdigit():
                hit = int(parts[2])
        if hit is None:
            continue
        leaf = frames[-1]
        lab = "nat" if leaf == "<native>" else "gc" if leaf == "<GC>" else "py"
        _add(recs, hit, lab, int(n) * interval_s)
    return recs


def tools(a, py, tmp):
    """name -> (argv builder, parser, why it cannot run or None)."""
    ivl = a.interval_ms
    t = {}
    hl = [a.hotline, "run", "--python", py]
    if ivl:
        hl += ["--interval", str(ivl)]
    t["hotline"] = (lambda w, args, out: hl + ["--json", out, w] + args, parse_hotline,
                    None if os.access(a.hotline, os.X_OK) else "no %s (build first)" % a.hotline)
    sc = [py, "-m", "scalene", "run"] + (["--cpu-sampling-rate", str(ivl / 1e3)] if ivl else [])
    t["scalene"] = (lambda w, args, out: sc + ["-o", out, w] + (["---"] + args if args else []),
                    parse_scalene, None)
    bindir = os.path.dirname(py)
    rate = 1e3 / ivl if ivl else 100
    spy = [os.path.join(bindir, "py-spy"), "record", "-f", "raw", "--idle", "--native",
           "--full-filenames", "-r", str(int(rate))]
    t["py-spy"] = (lambda w, args, out: spy + ["-o", out, "--", py, w] + args,
                   lambda out, tp, tr: parse_pyspy(out, tp, rate), None)
    au = [os.path.join(bindir, "austin"), "-f", "-i", "%dms" % ivl if ivl else "100us"]
    t["austin"] = (lambda w, args, out: au + ["-o", out, py, w] + args, parse_austin, None)
    t["memray"] = (lambda w, args, out: [py, "-m", "memray", "run", "-q", "-f", "-o", out, w]
                   + args, lambda out, tp, tr: parse_memray(out, tp, py), None)
    pi = [py, "-m", "pyinstrument", "-r", "json"] + (["-i", str(ivl / 1e3)] if ivl else [])
    t["pyinstrument"] = (lambda w, args, out: pi + ["-o", out, w] + args, parse_pyinstrument,
                         None)
    p15 = a.python315
    why15 = None
    if not p15:
        why15 = "not run: no 3.15 here (--python315 PATH)"
    elif not bench.has_module(p15, "profiling.sampling"):
        why15 = "not run: %s has no profiling.sampling" % p15
    tiv = (ivl or 0.1) / 1e3
    # 3.15.2: the rate in Hz (-r), no -i; it samples until the program ends
    ts = [p15 or "python3.15", "-m", "profiling.sampling", "run", "--collapsed", "--native",
          "--mode", "wall", "-a", "-r", str(int(round(1 / tiv)))]
    t["py3.15-sampling"] = (lambda w, args, out: ts + ["-o", out, w] + args,
                            lambda out, tp, tr: parse_tachyon(out, tp, tiv), why15)
    return t


# ---- the two tables ----------------------------------------------------------

def overhead(a, py, tdir, tl, tmp):
    env = dict(os.environ)
    tenv = dict(env, PYTHONPATH=tdir + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")) \
        if tdir else None
    plain = lambda w, args: [py, w] + args  # noqa: E731
    modes = {"plain": plain}
    skip = {}  # tool -> why it is out of the whole table
    for name, (argv, _, why) in tl.items():
        if why:
            skip[name] = why
        elif name != "py3.15-sampling":
            modes[name] = (lambda argv, out: lambda w, args: argv(w, args, out))(
                argv, os.path.join(tmp, "ovh-" + name + EXT.get(name, ".txt")))
    if "py3.15-sampling" in tl and "py3.15-sampling" not in skip:
        modes["plain3.15"] = lambda w, args: [a.python315, w] + args
        argv = tl["py3.15-sampling"][0]
        modes["py3.15-sampling"] = lambda w, args: argv(w, args, os.path.join(tmp, "ovh-315"))
    cols = [m for m in modes if m not in ("plain", "plain3.15")]

    names = [n for n in WORKLOADS if not a.only or n in a.only.split(",")]
    print("\n== Overhead: whole-process time / plain, WALLx/CPUc (median of %d interleaved runs;"
          " rows above load %.1f %s)" % (a.reps, a.max_load,
                                       "left out" if a.refuse_above else "marked ~"), flush=True)
    mach = Machine()
    sfail = {}
    loaded = []  # rows taken above --max-load
    start = bench.startup(modes, a.reps, failed=sfail, timeout=a.timeout)
    print("start-up (empty program), plain %.0f ms; extra: %s" % (
        start["plain"] * 1e3, ", ".join("%s +%.0f ms" % (
            m, (start[m] - start["plain3.15" if m == "py3.15-sampling" else "plain"]) * 1e3)
            if m in start else "%s failed" % m for m in cols)))
    notes = {("empty", m): "%d failed, last: %s" % tuple(f) for m, f in sfail.items()}
    hdr = "%-10s %6s %8s " % ("workload", "target", "plain s") + " ".join(
        "%13s " % c[:13] for c in cols) + "  machine"
    print(hdr)
    for target in [float(x) for x in a.seconds.split(",")]:
        for n in names:
            w = bench.workload(n)
            wenv = tenv if n == "torchtrain" else env
            mod = NEEDS.get(n)
            if n == "torchtrain" and not tdir:
                notes[(n, "all")] = "torch not installed: %s" % a._why_torch
                print("%-10s %5.1fs %8s  not run: no torch" % (n, target, "-"))
                continue
            if mod and not bench.has_module(py, mod) and n != "torchtrain":
                print("%-10s %5.1fs %8s  not run: no %s in %s" % (n, target, "-", mod, py))
                continue
            run = dict(modes)
            if "plain3.15" in run and mod and not bench.has_module(a.python315, mod):
                notes[(n, "py3.15-sampling")] = "no %s for %s" % (mod, a.python315)
                del run["plain3.15"], run["py3.15-sampling"]
            scale = bench.calibrate(plain, w, target, env=wenv)
            mach.read()
            load0 = os.getloadavg()[0]
            failed = {}
            times = bench.interleave(run, w, [str(scale)], a.reps, env=wenv, failed=failed,
                                     timeout=a.timeout + 30 * target)
            notes.update(((n, m), ("%s (not run again)" % why) if "timed out" in why else
                          "%d of %d runs failed, last: %s" % (k, a.reps, why))
                         for m, (k, why) in failed.items())
            cpu = dict(bench.CPU)
            load, steal = mach.read()
            load = max(load, load0)
            busy = load > a.max_load
            if busy:
                loaded.append("%s %.1fs (%s)" % (n, target, load_note(load, steal)))
            p = statistics.median(times["plain"])
            if busy and a.refuse_above:
                print("%-10s %5.1fs %8.2f  not shown: %s > %.1f" % (
                    n, target, p, load_note(load, steal), a.max_load), flush=True)
                continue
            cells = []
            for c in cols:
                bm = "plain3.15" if c == "py3.15-sampling" else "plain"
                base = times.get(bm)
                if c in times and base:
                    cr = (statistics.median(cpu[c]) / statistics.median(cpu[bm])
                          if cpu.get(c) and cpu.get(bm) and statistics.median(cpu[bm]) > 0 else 0)
                    cells.append("%s%5.2fx/%4.2fc%s" % (
                        "~" if busy else " ", statistics.median(times[c]) / statistics.median(base),
                        cr, "*" if c in failed else " "))
                else:
                    cells.append("%13s " % ("failed" if c in failed else "-"))
            print("%-10s %5.1fs %8.2f " % (n, target, p) + " ".join(cells) + "  " +
                  load_note(load, steal), flush=True)
    print("  (* = median of the runs that did not fail; c = CPU-time ratio)")
    if loaded:
        print("  ~ taken above load %.1f, read them as the machine's as much as the tool's: %s"
              % (a.max_load, "; ".join(loaded)))
    for name, why in skip.items():
        print("  %s: %s" % (name, why))
    for (n, m), why in notes.items():
        print("  %s on %s: %s" % (m, n, why))


def markers(path):
    out = {}
    for i, line in enumerate(open(path), 1):
        m = re.search(r"# @(\w+)\s*$", line)
        if m:
            out[m.group(1)] = i
    return out


def time_cell(r, truth_s):
    """"charged/true s split%": the true seconds are those of the same run."""
    if r is None:
        return "nothing"
    parts = " ".join("%s%.0f" % (k, 100 * v / r["t"]) for k, v in r["split"].items()
                     if r["t"] and v > 0.005 * r["t"])
    return "%.2f/%.2fs %s" % (r["t"], truth_s, parts)


def accuracy(a, py, tl, tmp, competitors=0):
    """The accuracy table; with competitors, that many busy loops run beside
    each tool (accuracy under load)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(competitors)]
    try:
        _accuracy(a, py, tl, tmp, competitors)
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def _accuracy(a, py, tl, tmp, competitors):
    marks = markers(TRUTH)
    truth_path = os.path.realpath(TRUTH)
    mach = Machine()
    print("\n== Accuracy on tests/bench/truth.py (%.1f s segments)%s: what each tool charges "
          "to the marked lines" % (a.truth_seconds, ", %d busy competitor%s beside it" % (
              competitors, "s" if competitors > 1 else "") if competitors else ""), flush=True)
    rows = []
    truth = None
    for name, (argv, parse, why) in tl.items():
        if why:
            rows.append((name, [why] + [""] * (len(MARKS) - 1)))
            continue
        out = os.path.join(tmp, "acc-" + name + EXT.get(name, ".txt"))
        tj = os.path.join(tmp, "truth-%s.json" % name)
        cmd = argv(TRUTH, [tj, str(a.truth_seconds)], out)
        try:
            bench.wall(cmd, timeout=a.timeout + 60 * a.truth_seconds)
            t = json.load(open(tj))
            recs = parse(out, truth_path, t)
        except bench.RunFailed as e:
            rows.append((name, ["%s: %s" % (e.why, e.tail[-160:])] + [""] * (len(MARKS) - 1)))
            continue
        except (OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
            rows.append((name, ["output not read: %s" % str(e)[-160:]] + [""] * (len(MARKS) - 1)))
            continue
        if name == "hotline" or truth is None:
            truth = t
        cells = []
        for mk in MARKS:
            if mk not in t and mk in ("py", "blas", "sleep"):
                cells.append("no numpy" if mk == "blas" else "-")
                continue
            if name == "memray" and mk in ("py", "blas", "sleep"):
                cells.append("n/a: no CPU timing")
                continue
            if name == "pyinstrument" and mk in ("py", "blas", "sleep"):
                r = recs.get("sleep" if mk == "sleep" else "self")
                cells.append("nothing" if not r else "sleep() %.2f/%.2fs" % (r["t"], t[mk])
                             if mk == "sleep" else "no lines: fn self %.2fs" % r["t"])
                continue
            r = recs.get(marks[mk])
            if mk in ("leak", "churn"):
                cells.append((r or {}).get("mem") or ("no memory" if name in (
                    "py-spy", "pyinstrument", "py3.15-sampling") else "nothing"))
            else:
                cells.append(time_cell(r, t.get(mk)))
        rows.append((name, cells))
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for f in os.listdir(tmp):
                if f.startswith("acc-" + name) or f == os.path.basename(tj):
                    shutil.copy(os.path.join(tmp, f), a.keep)
    if truth:
        rows.insert(0, ("truth", ["%.2fs py" % truth["py"],
                                  "%.2fs nat" % truth["blas"] if "blas" in truth else "-",
                                  "%.2fs sys" % truth["sleep"],
                                  "alloc %.0f kept %.0f MB" % (truth["leak_mb"], truth["leak_mb"]),
                                  "alloc %.0f kept 0 MB" % truth["churn_mb"]]))
    full = [r for r in rows if r[1][1:] != [""] * (len(MARKS) - 1)]
    w = [max(len(r[1][i]) for r in full + [("", ["@" + m for m in MARKS])]) for i in
         range(len(MARKS))]
    print("%-16s " % "tool" + " | ".join("%-*s" % (w[i], "@" + m) for i, m in enumerate(MARKS)))
    for name, cells in rows:
        if cells[1:] == [""] * (len(MARKS) - 1):
            print("%-16s %s" % (name, cells[0]))
        else:
            print("%-16s " % name + " | ".join("%-*s" % (w[i], c) for i, c in enumerate(cells)))
    print("  measured at %s" % load_note(*mach.read()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hotline", default=os.path.join(ROOT, "build", "hotline"))
    ap.add_argument("--venv", default=os.path.join(ROOT, "build", "bench-venv"))
    ap.add_argument("--base-python", default="/usr/bin/python3",
                    help="interpreter the venv is made from (the agent must be built for it)")
    ap.add_argument("--torch-spec", default="torch==2.13.0+cpu",
                    help="pip requirement for the torch workload (CPU wheel)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--python315", default="", help="a CPython 3.15 for profiling.sampling")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", default="1,5", help="target plain seconds per workload")
    ap.add_argument("--truth-seconds", type=float, default=1.0,
                    help="length of each truth.py segment")
    ap.add_argument("--interval-ms", type=float, default=10,
                    help="sampling interval given to every tool that takes one (0: defaults)")
    ap.add_argument("--timeout", type=float, default=120,
                    help="base seconds after which one run is killed (plus 30x the target)")
    ap.add_argument("--only", default="", help="workloads, comma-separated")
    ap.add_argument("--tools", default="", help="tools, comma-separated (default: all)")
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--max-load", type=float, default=1.5,
                    help="overhead rows measured above this load average are marked ~")
    ap.add_argument("--refuse-above", action="store_true",
                    help="leave out overhead rows measured above --max-load instead")
    ap.add_argument("--load-competitors", type=int, default=os.cpu_count() or 2,
                    help="busy loops beside the accuracy-under-load table (0: no such table)")
    ap.add_argument("--load-tools", default="hotline,py-spy",
                    help="tools in the accuracy-under-load table")
    ap.add_argument("--keep", default="", help="copy each tool's truth.py output here")
    ap.add_argument("--setup-only", action="store_true")
    a = ap.parse_args()
    a.interval_ms = int(a.interval_ms) if a.interval_ms == int(a.interval_ms) else a.interval_ms

    py, tdir, a._why_torch = ensure_venv(a)
    if a.setup_only:
        print("venv ready: %s%s" % (py, "" if tdir else " (no torch: %s)" % a._why_torch))
        return 0
    vers = subprocess.run([py, "-m", "pip", "list", "--format", "freeze"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    want = ("scalene", "py-spy", "austin-dist", "memray", "pyinstrument", "numpy", "scikit-learn")
    print("python %s; %s; torch %s" % (py, ", ".join(
        ln for ln in vers.split() if ln.split("==")[0].lower() in want),
        a.torch_spec if tdir else "none (%s)" % a._why_torch))
    print("machine: %d cores, %s at start" % (os.cpu_count() or 0, load_note(*Machine().read())))
    with tempfile.TemporaryDirectory(prefix="hotline-peers-") as tmp:
        tl = tools(a, py, tmp)
        if a.tools:
            tl = {k: v for k, v in tl.items() if k in a.tools.split(",")}
        if not a.skip_overhead:
            overhead(a, py, tdir, tl, tmp)
        if not a.skip_accuracy:
            accuracy(a, py, tl, tmp)
            if a.load_competitors > 0:
                accuracy(a, py, {k: v for k, v in tl.items() if k in a.load_tools.split(",")},
                         tmp, competitors=a.load_competitors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
