"""Profiling the worker processes of a distributed job (Dask, Ray) into
the driver's profile (docs/distributed.md).

Two things are needed in a worker, which the plugins (hotline/dask.py,
hotline/ray.py) do there:

- an agent streaming to where the driver's goes (the socket of its
  `hotline run`, or the editor's workspace socket): a worker that `hotline
  run` started inherits the bootstrap and runs one already; any other
  (a worker started by a nanny outside the run, `dask worker`, a Ray
  worker) gets one started with the driver's settings (`driver_settings`
  in the driver, `start_in_worker` in the worker);

- the task functions' files: cloudpickle ships a function defined in the
  driver's script by value and recreates its code with the file name
  "<dynamic-code>" (cloudpickle._code_reduce: a deterministic payload), so
  no include rule takes it. Its first line, line table and name survive,
  and so does the `__file__` of its module's globals (cloudpickle keeps
  __file__ for relative imports). `fix_cloudpickle()` wraps cloudpickle's
  `_function_setstate`, which every unpickled dynamic function goes
  through, to give that code (and the code nested in it) its file back, so
  the worker's samples land on the script's lines. The pickle stream names
  that function by module and name, so the wrapper in the worker's module
  is the one the unpickler calls; the driver is left alone.
"""
import os
import types

DYNAMIC = "<dynamic-code>"

# the modules of cloudpickle that define _function_setstate: cloudpickle 3
# (cloudpickle.cloudpickle), 1.x-2.x (cloudpickle_fast), Ray's copy
_MODULES = ("cloudpickle.cloudpickle", "cloudpickle.cloudpickle_fast",
            "ray.cloudpickle.cloudpickle", "ray.cloudpickle.cloudpickle_fast")


def refile(code, path):
    """code with co_filename path, and so every code object nested in its
    constants (inner functions, lambdas, comprehensions) that cloudpickle
    renamed too."""
    consts = tuple(refile(c, path) if isinstance(c, types.CodeType) and c.co_filename == DYNAMIC
                   else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def _file_of(func):
    f = getattr(func, "__globals__", {}).get("__file__")
    if not isinstance(f, str) or not os.path.isabs(f) or not f.endswith(".py"):
        return None
    return os.path.normpath(f)


def fix_function(func):
    """Give a function recreated by cloudpickle its file back (in place)."""
    code = getattr(func, "__code__", None)
    if code is None or code.co_filename != DYNAMIC:
        return
    path = _file_of(func)
    if path:
        func.__code__ = refile(code, path)


def _wrap(mod):
    orig = getattr(mod, "_function_setstate", None)
    if orig is None or getattr(orig, "_hotline", False):
        return False

    def _function_setstate(obj, state):
        orig(obj, state)
        try:
            fix_function(obj)
        except Exception:  # never break a task for a profiler's sake
            pass

    _function_setstate._hotline = True
    _function_setstate.__module__ = mod.__name__
    _function_setstate.__qualname__ = _function_setstate.__name__ = "_function_setstate"
    _function_setstate.__wrapped__ = orig
    mod._function_setstate = _function_setstate
    return True


def fix_cloudpickle():
    """Wrap _function_setstate in every cloudpickle this process can import
    (once each). Returns the names of the modules wrapped now."""
    import importlib
    done = []
    for name in _MODULES:
        try:
            mod = importlib.import_module(name)
        except Exception:
            continue
        if _wrap(mod):
            done.append(name)
    return done


# what a worker's agent takes from the driver's configuration
_KEYS = ("include", "main", "interval_ms", "memory", "mem_interval_kb", "profile_all",
         "all_threads")


def driver_settings(address=None):
    """In the driver: where the workers' agents stream to and with which
    settings, a dict to ship to them (None: nowhere to stream). address
    (a Unix socket path) overrides; else the socket the driver's agent
    streams to (`hotline run`, hotline.connect()), else the editor's
    workspace socket when one listens."""
    from . import _config, _state
    cfg = _state["cfg"]
    dest = address
    if dest is None and cfg is not None:
        dest = cfg.get("socket") or os.environ.get("HOTLINE_SOCKET")
    if dest is None:
        dest = _config.find_socket()
    if not dest:
        return None
    settings = {"socket": dest}
    if cfg is None:
        cfg = _config.load({})
    for k in _KEYS:
        if cfg.get(k) is not None:
            settings[k] = cfg[k]
    # the driver's include: its own folders, not the defaults' realpaths only
    return settings


def start_in_worker(settings):
    """In a worker: the cloudpickle fix, and an agent when none runs yet.
    True when this call started the agent (the caller stops it)."""
    fix_cloudpickle()
    import _hotline_agent
    if _hotline_agent.running() or not settings:
        return False
    cfg = dict(settings)
    try:
        _hotline_agent.start(**cfg)
    except Exception:  # no agent for this Python, a socket gone: unprofiled
        return False
    return _hotline_agent.running()
