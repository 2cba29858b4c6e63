"""Configuration of the Hotline agent: HOTLINE_CONFIG (JSON, set by the
`hotline` server) merged with keyword overrides from hotline.start(), turned
into what the native sampler needs (include/exclude patterns, interval) and
the `hello` line of docs/agent-protocol.md."""
import os
import sys

from . import _json  # not json: re, enum, functools, collections at every start (_json.py)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _main_from_argv():
    argv = getattr(sys, "argv", None) or [""]
    first = argv[0]
    if first in ("", "-c"):
        return None
    if first == "-m":
        return "-m " + (argv[1] if len(argv) > 1 else "")
    return os.path.abspath(first)


def _stdlib_dirs():
    """The standard library's folders: sysconfig's "stdlib" and
    "platstdlib" (in a venv, the venv's lib/pythonX.Y), without importing
    sysconfig, ~1.5 ms of every start-up with its build data
    (tests/profiler/test_agent_start.py holds them to sysconfig's)."""
    here = getattr(sys, "_stdlib_dir", None) or (
        os.path.dirname(os.__file__) if getattr(os, "__file__", None) else None)
    if here:
        ver = "python%d.%d" % sys.version_info[:2]
        paths = [here, os.path.join(sys.exec_prefix, getattr(sys, "platlibdir", "lib"), ver)]
    else:
        import sysconfig
        paths = [p for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")) if p]
    dirs = set()
    for p in paths:
        dirs.add(os.path.realpath(p))
        dirs.add(os.path.abspath(p))
    return sorted(dirs)


def load(overrides):
    """New dict: environment config updated with overrides (a dict)."""
    cfg = {}
    env = os.environ.get("HOTLINE_CONFIG")
    if env:
        try:
            parsed = _json.loads(env)
            if isinstance(parsed, dict):
                cfg.update(parsed)
        except ValueError:
            pass
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    main = cfg.get("main") or _main_from_argv()
    cfg["main"] = main
    # the range is the agent's (protocol/agent_config.h): start() refuses
    # what it would not use, so the interval in `hello` is the one used
    try:
        cfg["interval_ms"] = float(cfg.get("interval_ms", 10.0))
    except (TypeError, ValueError):
        raise ValueError("interval_ms must be a number of milliseconds, not %r"
                         % (cfg.get("interval_ms"),))
    include = cfg.get("include")
    if not include:
        if main and not main.startswith("-m "):
            include = [os.path.dirname(main)]
        else:
            include = [os.getcwd()]
    include = [str(p) for p in include]
    # The main script's directory may be reached through a symlink.
    include += [os.path.realpath(p) for p in include if "*" not in p and
                os.path.realpath(p) != p]
    exclude = cfg.get("exclude")
    if exclude is None:
        exclude = ["*/site-packages/*", "*/dist-packages/*"] + _stdlib_dirs()
    exclude = [str(p) for p in exclude] + [os.path.join(HERE, "hotline")]
    cfg["include"] = include
    cfg["exclude"] = exclude
    cfg["profile_all"] = bool(cfg.get("profile_all", False))
    return cfg


def hello(cfg):
    """The first line of every connection (a str, no newline)."""
    return _json.dumps({
        "t": "hello", "v": 1, "pid": os.getpid(), "ppid": os.getppid(),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable, "argv": list(getattr(sys, "argv", [])),
        "cwd": os.getcwd(), "main": cfg.get("main"),
        "interval_ms": cfg["interval_ms"], "clock": "wall+thread-cpu",
    })


def destination():
    """(path, is_socket): HOTLINE_SOCKET, else HOTLINE_OUT, else a file."""
    sock = os.environ.get("HOTLINE_SOCKET")
    if sock:
        return sock, True
    out = os.environ.get("HOTLINE_OUT")
    if out:
        return out, False
    return os.path.abspath("hotline-%d.jsonl" % os.getpid()), False


SOCKET_NAME = os.path.join(".hotline", "agent.sock")


def _ours(path, want):
    """True when path is not a symlink, is of type want (stat.S_IS*) and is
    owned by this user."""
    import stat
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (not stat.S_ISLNK(st.st_mode) and want(st.st_mode)
            and st.st_uid == os.geteuid())


def find_socket(start=None):
    """The editor's socket for agents that connect on their own
    (docs/notebooks.md), or None: $HOTLINE_SOCKET when set, else the first
    <dir>/.hotline/agent.sock from start (default: the working directory)
    upward whose folder and socket are ours and not symlinks."""
    import stat
    env = os.environ.get("HOTLINE_SOCKET")
    if env:
        return env
    d = os.path.abspath(start or os.getcwd())
    while True:
        sock = os.path.join(d, SOCKET_NAME)
        if (_ours(os.path.dirname(sock), stat.S_ISDIR) and
                _ours(sock, stat.S_ISSOCK)):
            return sock
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up
