"""The Hotline agent's Python half, under a private name: `hotline run`
puts its folder on sys.path only while its bootstrap starts the agent,
and `hotline attach --memory` only while it imports this package, so a
program's own `import hotline` finds the program's module (or none, as
without Hotline). The public `hotline` package (hotline/__init__.py, for
`import hotline; hotline.start()`, `%load_ext hotline`, `python -m
hotline`) re-exports what is here:

    import hotline
    hotline.start()          # or start(interval_ms=5, include=[...])
    ...
    hotline.stop()

    hotline.connect()        # stream to the editor's server instead, when
                             # one listens for this workspace (a socket
                             # <dir>/.hotline/agent.sock from the working
                             # directory upward, or $HOTLINE_SOCKET)

Without HOTLINE_SOCKET the profile stream goes to HOTLINE_OUT or to
hotline-<pid>.jsonl in the current directory (open it with `hotline view`).
The sampling itself is native (_hotline_agent._agent); this module only
configures it, stops it at exit and restarts it in forked children."""
import atexit
import os

from . import _config

__all__ = ["start", "stop", "running", "connect", "connected"]

_state = {"cfg": None, "hooks": False, "atfork": False, "child_out": False, "socket": None}


def _start_with(cfg, on_release=None):
    from . import _agent
    if cfg.get("socket"):
        path, is_socket = str(cfg["socket"]), True  # connect(): the editor's socket
    elif cfg.get("out"):
        path, is_socket = str(cfg["out"]), False  # the IPython extension's own file
    else:
        path, is_socket = _config.destination()
    if not is_socket and _state["child_out"]:
        path = "%s.%d" % (path, os.getpid())
    try:  # the call-site decision (sampling/site.h); without it the probe decides alone
        from . import _opcodes
        if not _opcodes.jit_enabled():  # profiler/walk.h: not under the JIT
            _agent.set_opcodes(*_opcodes.cached_tables())
    except Exception:
        pass
    _agent.start(_config.hello(cfg), path, socket=is_socket,
                 interval_ms=cfg["interval_ms"], include=cfg["include"],
                 exclude=cfg["exclude"], profile_all=cfg["profile_all"],
                 die_with_server=bool(cfg.get("die_with_server", False)),
                 server_pid=int(cfg.get("server_pid") or 0),
                 memory=bool(cfg.get("memory", True)),
                 mem_interval_kb=float(cfg.get("mem_interval_kb", 64)),
                 gpu=bool(cfg.get("gpu", True)),
                 on_release=on_release,
                 all_threads=bool(cfg.get("all_threads", False)))
    _state["cfg"] = cfg
    from . import _cells
    _cells.install(hook=not cfg.get("attached"))  # notebook cells: marimo's temp files


def _at_exit():
    from . import _agent
    _agent.stop("exit")


def _after_fork_child():
    from . import _agent
    _agent.forget()
    cfg = _state["cfg"]
    if cfg is None:
        return
    if cfg.get("attached"):  # `hotline attach` follows no children
        _released()
        return
    _state["child_out"] = True
    try:
        _start_with(cfg)
    except Exception:
        _state["cfg"] = None  # never break the child


def start(**config):
    """Start sampling this process (all threads). Keyword arguments override
    HOTLINE_CONFIG: interval_ms, include, exclude, profile_all, main, memory,
    out (a file to write the stream to, instead of HOTLINE_SOCKET /
    HOTLINE_OUT / hotline-<pid>.jsonl)."""
    if _state["cfg"] is not None:
        return
    _start_with(_config.load(config))
    _hooks()


def _hooks():
    if not _state["hooks"]:
        _state["hooks"] = True
        atexit.register(_at_exit)
    if not _state["atfork"] and hasattr(os, "register_at_fork"):
        _state["atfork"] = True  # once: it cannot be unregistered
        os.register_at_fork(after_in_child=_after_fork_child)


def connect(**config):
    """Stream this process's profile to the editor: the Hotline language
    server of the workspace listens on <workspace>/.hotline/agent.sock
    (docs/notebooks.md). The socket is looked for from the working directory
    upward, or taken from $HOTLINE_SOCKET. Keyword arguments as for start().
    Returns the socket's path, or None when no server listens there (nothing
    is started then: the caller may profile otherwise). Already streaming:
    the same path; already profiled otherwise (start()): None."""
    if _state["cfg"] is not None:
        return _state["socket"]
    path = _config.find_socket()
    if not path:
        return None
    cfg = _config.load(config)
    cfg["socket"] = path
    try:
        _start_with(cfg)
    except OSError:  # a stale socket: the server that made it is gone
        _state["cfg"] = None
        return None
    _state["socket"] = path
    _hooks()
    return path


def _attach(sock, config_json):
    """Run by the code `hotline attach PID --memory` injects into a running
    program (docs/attach.md): stream this process's profile, memory on, to
    that command's socket until it lets go ("stop" or its end of the
    connection closing), then unload (_released): sampler thread joined,
    memory hooks disarmed, this module's state as before. Never raises
    (the program must not see an error of ours); a program profiled already
    is left alone and the command told why."""
    import json
    import socket
    try:
        if _state["cfg"] is not None:
            msg = {"t": "error", "msg": "process %d is already profiled by Hotline "
                   "(hotline run, hotline.start() or an earlier attach)" % os.getpid()}
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(sock)
                s.sendall((json.dumps(msg) + "\n").encode())
            return
        cfg = _config.load(json.loads(config_json))
        cfg["socket"] = sock
        cfg["attached"] = True
        _start_with(cfg, on_release=_released)
        _state["socket"] = sock
        _hooks()
    except Exception:
        _state["cfg"] = None


def _released():
    """The agent unloaded itself after `hotline attach` let go (module.c's
    pending call): forget the run; exit does nothing more."""
    _state["cfg"] = None
    _state["socket"] = None
    if _state["hooks"]:
        atexit.unregister(_at_exit)
        _state["hooks"] = False  # the fork hook stays: it finds cfg None


def connected():
    """The socket this process streams to (connect()), or None."""
    return _state["socket"] if _state["cfg"] is not None else None


def stop():
    """Stop sampling: send the last delta and `end`, close the stream."""
    from . import _agent
    _agent.stop("stop")
    _state["cfg"] = None
    _state["socket"] = None


def running():
    """True while this process is being profiled (start() without stop())."""
    return _state["cfg"] is not None


def set_role(name):
    """Name what this process is in a larger job ("dask worker tcp://...");
    the profile's process list, the hover and the flame graph show it
    (docs/distributed.md). False when this process is not profiled."""
    from . import _agent
    return bool(_agent.set_role(str(name)[:200]))


def load_ipython_extension(ipython):
    """`%load_ext hotline`: the %hotline / %%hotline magics (docs/notebooks.md)."""
    from . import _ipython
    _ipython.load(ipython)


def unload_ipython_extension(ipython):
    from . import _ipython
    _ipython.unload(ipython)


def marimo():
    """In a cell of `marimo edit` / `marimo run`: every cell run from now
    shows its running line and call chain in its output while it runs, then
    its per-line results (docs/notebooks.md, "marimo, inside marimo").
    Prints what it turned on; raises RuntimeError outside a marimo kernel."""
    from . import _marimo
    print(_marimo.enable())


def stats():
    """Sampler counters (ticks, thread_samples, cost_s, mem_errors) or None."""
    from . import _agent
    return _agent.stats()
