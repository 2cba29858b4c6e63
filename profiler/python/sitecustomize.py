"""Hotline bootstrap, imported by Python at startup because `hotline run`
puts this directory first on PYTHONPATH. With HOTLINE_BOOT and
HOTLINE_SOCKET set it starts the agent, takes this directory off sys.path
(PYTHONPATH stays in the environment so Python children are profiled too)
and then runs the next `sitecustomize` on sys.path, if any, as if we had
not been here. It never writes to stdout. A process whose Python has no agent runs
unprofiled, and says so once to hotline (to stderr only when hotline cannot
be reached); a child that cannot start the agent runs unprofiled and
silent."""
import os
import sys

_HOTLINE_DIR = os.path.dirname(os.path.abspath(__file__))


def _hotline_send_error(msg, kind="error"):
    """hotline shows an error once (however many processes send it). An
    error goes to stderr only when hotline cannot be reached; a log never."""
    import json
    import socket
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(2.0)
            s.connect(os.environ["HOTLINE_SOCKET"])
            line = {"t": kind, "msg": msg}
            if kind == "log":
                line["level"] = "warn"
            s.sendall((json.dumps(line) + "\n").encode())
        finally:
            s.close()
    except (OSError, socket.error):  # socket.error: Python 2
        if kind != "error":
            return
        try:
            sys.stderr.write("hotline: " + msg + "\n")
            sys.stderr.flush()
        except Exception:  # a closed stderr must not stop the program
            pass


def _hotline_subinterpreter():
    """True in a subinterpreter (each one imports site, and so this file):
    the agent profiles the whole process from the main interpreter, and a
    subinterpreter must add nothing, not even a message."""
    for name in ("_interpreters", "_xxsubinterpreters"):  # 3.13+, 3.8-3.12
        had = name in sys.modules
        try:
            mod = __import__(name)
        except ImportError:
            continue
        try:
            return mod.get_current() != mod.get_main()
        except Exception:
            return False
        finally:
            if not had:
                sys.modules.pop(name, None)  # leave the program's modules as they were
    return False


def _hotline_built_for():
    """The Python versions this agent folder has a native part for ("3.11,
    3.12"), or "no Python"."""
    import glob
    import re
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_hotline_agent")
    vers = set()
    for path in glob.glob(os.path.join(here, "_agent.cpython-3*")):
        m = re.search(r"cpython-3(\d+)", os.path.basename(path))
        if m:
            vers.add(int(m.group(1)))
    return ", ".join("3.%d" % v for v in sorted(vers)) or "no Python"


def _hotline_boot():
    impl = getattr(sys, "implementation", None)
    if sys.version_info < (3, 9) or getattr(impl, "name", "") != "cpython":
        # cmake builds no agent for these: advising a build would mislead
        _hotline_send_error(
            "Hotline needs CPython 3.9 or newer (this is %s %d.%d, %s): the program runs "
            "unprofiled" % (getattr(impl, "name", "cpython").replace("cpython", "Python"),
                            sys.version_info[0], sys.version_info[1], sys.executable))
        return
    try:
        # the private name: a program's own `hotline` module stays its own
        from _hotline_agent import _agent  # the native part, per version
    except Exception as e:  # ImportError; on old Pythons maybe a SyntaxError
        # 3.12+ refuses a single-phase extension in an isolated
        # subinterpreter: the main interpreter's agent profiles it already
        if _hotline_subinterpreter():
            return
        # The program runs unprofiled, as without hotline (docs/cli.md,
        # "No profile?"): stopping it would harm it for a profiler's sake.
        why = ("no Hotline agent built for Python %d.%d (%s)"
               % (sys.version_info[0], sys.version_info[1], sys.executable))
        if not isinstance(e, ImportError):
            why = "the Hotline agent does not load in Python %d.%d (%s: %s)" % (
                sys.version_info[0], sys.version_info[1], type(e).__name__, e)
        _hotline_send_error(
            "%s; this Hotline has agents for %s: the program runs unprofiled. Get one for it: "
            "%s -m pip install hotline-profiler (pip install . from a clone), or build one: "
            "cmake -S . -B build -DHOTLINE_PYTHONS=%s && cmake --build build"
            % (why, _hotline_built_for(), sys.executable, sys.executable))
        return
    if _agent.is_running():
        # site runs before any code of this interpreter: an agent running
        # already was started by another interpreter of this process (a
        # subinterpreter that shares the extension, 3.9-3.11 or legacy ones)
        return
    import _hotline_agent
    try:
        _hotline_agent.start()
    except Exception as e:  # never break the program, never write into its stderr
        # Told to the server if it still listens. A process started after
        # the run ended (a child outliving the program) finds no socket and
        # runs unprofiled, silently: its stderr may be a closed pipe, and a
        # failed write here would stop Python before the program starts.
        _hotline_send_error("agent not started in process %d: %s" % (os.getpid(), e), "log")


def _hotline_chain():
    try:
        import importlib.machinery
    except ImportError:  # Python 2 (unprofiled: no agent)
        return
    here = os.path.abspath(__file__)
    path = [p for p in sys.path if not p or os.path.abspath(p) != _HOTLINE_DIR]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or not spec.origin or os.path.abspath(spec.origin) == here:
        return
    try:  # importlib.util's own function, without importing importlib.util
        # (contextlib, collections, functools: ~2 ms of every start-up)
        from importlib._bootstrap import module_from_spec
    except ImportError:
        from importlib.util import module_from_spec
    mod = module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


def _hotline_connect():
    """HOTLINE_CONNECT=1 (this directory on PYTHONPATH by hand): stream to
    the editor's server of the workspace when one listens, else run as
    without hotline, silently (docs/notebooks.md)."""
    try:
        import _hotline_agent
        _hotline_agent.connect()
    except Exception:  # no agent for this Python, agent refused
        pass


if os.environ.get("HOTLINE_BOOT") and os.environ.get("HOTLINE_SOCKET"):
    _hotline_boot()
    sys.path[:] = [p for p in sys.path
                   if not p or os.path.abspath(p) != _HOTLINE_DIR]
elif os.environ.get("HOTLINE_CONNECT") == "1":
    _hotline_connect()
_hotline_chain()
