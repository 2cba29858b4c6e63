"""The agent must not change the program: signals, EINTR, fork and
multiprocessing, exit codes, crashes, stdout bytes, odd paths/args, the
bootstrap chain, server requests (now/stop), the standalone entry points, and
the allocators put back after hotline.stop() in the wrappers mode."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

c = harness.Checker("robust")
T = harness.target


def work_seconds(conn, prog, mark):
    r = conn.line(prog, harness.markers(prog)[mark])
    return r["py"] + r["nat"] + r["sys"]


def case_signals():
    prog = T("signals.py")
    res = harness.run([prog], config={"interval_ms": 1})
    c.check(res.rc == 0, "signals: rc %r %s" % (res.rc, res.stderr[-500:]))
    out = json.loads(res.stdout.decode().strip().splitlines()[-1])
    print("signals:", out)
    # a broken handler gets 0; a loaded machine delivers fewer than 100
    c.check(out["alarms"] >= 10, "signals: only %d SIGALRM in 0.5 s at 5 ms" % out["alarms"])
    c.check(out["eintr"] == 0 and out["errors"] == 0 and out["reads"] == 300,
            "signals: reads disturbed: %r" % out)


def case_churn():
    prog = T("churn.py")
    res = harness.run([prog], config={"interval_ms": 1})
    out = res.stdout.decode()
    depth = max((len(s) for s in res.main.stacks.values()), default=0)
    print("churn: rc %r, %s, %d threads seen, %d stacks, deepest %d frames" % (
        res.rc, out.strip(), len(res.main.threads), len(res.main.stacks), depth))
    c.check(res.rc == 0 and out.startswith("ok"), "churn: rc %r out %r err %s"
            % (res.rc, out, res.stderr[-800:]))
    c.check(res.main.end is not None, "churn: no end")
    c.check(depth >= 100, "churn: deepest stack %d frames" % depth)


def case_fork():
    prog = T("forky.py")
    res = harness.run([prog])
    text = res.stdout.decode()
    c.check(res.rc == 0, "fork: rc %r %s" % (res.rc, res.stderr[-800:]))
    c.check("pool [0, 1, 4, 9, 16, 25, 36, 49]" in text, "fork: pool output %r" % text)
    c.check("child 0" in text, "fork: child exit %r" % text)
    main = res.main
    pid = main.hello["pid"]
    kids = [x for x in res.conns if x.hello and x.hello.get("ppid") == pid]
    print("fork: %d connections, %d children of the main process" % (len(res.conns), len(kids)))
    c.check(len(kids) >= 2, "fork: child connections %d" % len(kids))
    got = max((work_seconds(k, prog, "child") for k in kids), default=0)
    # os._exit loses the last ~100 ms, the first tick only sets a baseline
    c.check(got >= 0.15, "fork: forked child's work line got %.3f s" % got)


def case_endings():
    prog = T("ending.py")
    for how, rc, end in (("exit7", 7, True), ("_exit", 3, False), ("segv", -11, False),
                         ("kill", -9, False)):
        res = harness.run([prog, how])
        m = res.main
        got = work_seconds(m, prog, "work")
        print("ending %s: rc %r, end %r, work line %.3f s" % (how, res.rc, bool(m.end), got))
        c.check(res.rc == rc, "%s: rc %r, want %r" % (how, res.rc, rc))
        c.check(bool(m.end) == end, "%s: end message %r" % (how, m.end))
        # Typically 0.52 of 0.6 s survive (the last ~100 ms delta period is
        # lost); a sampler starved by a loaded machine flushes later, so the
        # check asks only that the deltas sent before the end were kept.
        c.check(got >= 0.15, "%s: work line kept %.3f s of 0.6" % (how, got))


def case_stdout():
    prog = T("bigout.py")
    res = harness.run([prog])
    ref = harness.plain([prog])
    c.check(res.rc == 0 and ref.returncode == 0, "stdout: rc %r/%r" % (res.rc, ref.returncode))
    c.check(res.stdout == ref.stdout, "stdout: %d bytes profiled vs %d plain, differ"
            % (len(res.stdout), len(ref.stdout)))
    c.check(res.stderr == ref.stderr, "stderr differs: %r" % res.stderr[-300:])
    print("stdout: %d bytes identical" % len(res.stdout))


def case_paths():
    d = tempfile.mkdtemp(prefix="hl ü ")
    try:
        sub = os.path.join(d, "dír with spaces ñ")
        os.makedirs(sub)
        prog = os.path.join(sub, "prög ✓.py")
        shutil.copy(T("showargs.py"), prog)
        args = ["a b", "ü", "x\ty", "", "--flag=é"]
        res = harness.run([prog] + args)
        c.check(res.rc == 0, "paths: rc %r %s" % (res.rc, res.stderr[-500:]))
        out = json.loads(res.stdout.decode())
        c.check(out["argv"] == [prog] + args, "paths: argv %r" % out["argv"])
        c.check(out["path"][0] == sub, "paths: sys.path[0] %r" % out["path"][0])
        c.check(not any(p.rstrip("/") == harness.AGENT_DIR.rstrip("/") for p in out["path"]),
                "paths: agent dir left on sys.path")
        got = work_seconds(res.main, prog, "work")
        c.check(got >= 0.1, "paths: non-ASCII file got %.3f s; files %r"
                % (got, res.main.total_py_files()))
        c.check(res.main.hello["argv"] == [prog] + args, "paths: hello argv %r" % res.main.hello["argv"])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_chain():
    d = tempfile.mkdtemp(prefix="hl-chain-")
    try:
        marker = os.path.join(d, "ran")
        with open(os.path.join(d, "sitecustomize.py"), "w") as f:
            f.write("import os\nopen(os.environ['HL_MARK'], 'w').write('yes')\n")
        res = harness.run([T("showargs.py")], pythonpath_extra=[d], extra_env={"HL_MARK": marker})
        c.check(res.rc == 0, "chain: rc %r %s" % (res.rc, res.stderr[-500:]))
        c.check(os.path.exists(marker), "chain: the next sitecustomize did not run")
        c.check(res.main.deltas > 0, "chain: no deltas")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_missing_agent():
    d = tempfile.mkdtemp(prefix="hl-noagent-")
    try:
        py = os.path.join(d, "python")
        shutil.copytree(harness.AGENT_DIR, py, ignore=shutil.ignore_patterns("*.so"))
        old = harness.AGENT_DIR
        harness.AGENT_DIR = py
        try:
            res = harness.run([T("showargs.py")])
            child = harness.run([T("showargs.py")], config={"server_pid": 1})
            # hotline unreachable: the one line goes to stderr instead
            gone = harness.run([T("showargs.py")],
                               extra_env={"HOTLINE_SOCKET": os.path.join(d, "nosocket")})
        finally:
            harness.AGENT_DIR = old
        # the program runs unprofiled, status kept; hotline shows the
        # message it gets on the socket (nothing on the program's stderr)
        want = "no Hotline agent built for Python %d.%d" % sys.version_info[:2]
        for name, r in (("main", res), ("child", child)):
            msgs = [e for x in r.conns for e in x.errors]
            c.check(r.rc == 0 and b"argv" in r.stdout,
                    "missing agent (%s): rc %r out %r" % (name, r.rc, r.stdout[:200]))
            c.check(len(msgs) == 1 and want in msgs[0] and "unprofiled" in msgs[0],
                    "missing agent (%s): messages on the socket %r" % (name, msgs))
            c.check(r.stderr == b"", "missing agent (%s): stderr %r" % (name, r.stderr))
        err = gone.stderr.decode()
        c.check(gone.rc == 0 and b"argv" in gone.stdout, "missing agent, no socket: rc %r" % gone.rc)
        c.check(len(err.splitlines()) == 1 and want in err,
                "missing agent, no socket: stderr %r" % err)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_requests():
    prog = T("showargs.py")
    res = harness.run([prog], requests=['{"t":"now","hz":20}\n'])
    nows = [m for m in res.main.msgs if m.get("t") == "now"]
    c.check(len(nows) >= 3, "now: %d messages" % len(nows))
    c.check(any(th["fr"] for m in nows for th in m["threads"]), "now: no frames")
    res = harness.run([prog], requests=['{"t":"stop"}\n'])
    c.check(res.rc == 0 and b"argv" in res.stdout, "stop: program broken rc %r" % res.rc)
    c.check(res.main.end and res.main.end.get("reason") == "stop", "stop: end %r" % res.main.end)


def case_standalone():
    d = tempfile.mkdtemp(prefix="hl-standalone-")
    try:
        env = {"PYTHONPATH": harness.AGENT_DIR}
        for name, argv in (("import", [T("standalone.py")]),
                           ("-m hotline", ["-m", "hotline", T("showargs.py"), "q"])):
            out = os.path.join(d, "out.jsonl")
            e = dict(env, HOTLINE_OUT=out)
            for k in ("HOTLINE_SOCKET", "HOTLINE_BOOT", "HOTLINE_CONFIG"):
                os.environ.pop(k, None)
            p = subprocess.run([harness.PY] + argv, env=dict(os.environ, **e), cwd=d,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            c.check(p.returncode == 0, "%s: rc %r %s" % (name, p.returncode, p.stderr[-500:]))
            conn = harness.Conn()
            for line in open(out, encoding="utf-8"):
                conn.feed(line.rstrip("\n"))
            c.check(not conn.problems, "%s: stream problems %r" % (name, conn.problems[:3]))
            prog = argv[-1] if name == "import" else argv[2]
            got = work_seconds(conn, prog, "work")
            c.check(conn.end is not None and got >= 0.2, "%s: end %r, work %.3f s" % (name, conn.end, got))
            if name == "-m hotline":
                o = json.loads(p.stdout.decode())
                c.check(o["argv"] == [prog, "q"], "-m hotline: argv %r" % o["argv"])
                c.check(o["path"][0] == os.path.dirname(prog), "-m hotline: path0 %r" % o["path"][0])
            print("%s: ok, %d deltas" % (name, conn.deltas))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_unwrap():
    """hotline.start(memory) then stop in-process, with no shim (as in an
    attached target): windows_raw by default, wrappers with
    HOTLINE_MEM_WINDOWS=0; the original RAW, MEM and OBJ allocators are back
    after stop, unless tracemalloc wrapped ours since (targets/unwrap.py
    says how)."""
    d = tempfile.mkdtemp(prefix="hl-unwrap-")
    try:
        for mode, extra in (("windows_raw", {}), ("wrappers", {"HOTLINE_MEM_WINDOWS": "0"})):
            env = dict(os.environ, PYTHONPATH=harness.AGENT_DIR,
                       HOTLINE_OUT=os.path.join(d, "o.jsonl"), **extra)
            for k in ("HOTLINE_SOCKET", "HOTLINE_BOOT", "HOTLINE_CONFIG", "LD_PRELOAD"):
                env.pop(k, None)
            p = subprocess.run([harness.PY, T("unwrap.py")], env=env, cwd=d,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            c.check(p.returncode == 0, "unwrap %s: rc %r %s" % (mode, p.returncode,
                                                                p.stderr[-500:]))
            res = json.loads(p.stdout.decode().strip().splitlines()[-1]) if p.returncode == 0 else {}
            print("unwrap %s:" % mode, res)
            c.check(res.get("mode") == mode, "unwrap: memory in the %s mode (%r)"
                    % (mode, res.get("mode")))
            for key in ("wrapped_while_on", "restored_after_stop", "freed_after",
                        "under_tracemalloc_kept", "tracemalloc_sees", "ours_back_from_tracemalloc",
                        "restored_at_last"):
                c.check(res.get(key) is True, "unwrap %s: %s" % (mode, key))
    finally:
        shutil.rmtree(d, ignore_errors=True)


for case in (case_signals, case_churn, case_fork, case_endings, case_stdout, case_paths, case_chain,
             case_missing_agent, case_requests, case_standalone, case_unwrap):
    try:
        case()
    except Exception as e:  # one broken case must not hide the others
        import traceback
        traceback.print_exc()
        c.check(False, "%s raised %r" % (case.__name__, e))
c.done()
