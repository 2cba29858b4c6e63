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


def _lsp_gate(sock):
    """(address, token) of the TCP gate of the language server whose
    workspace socket is sock (its agent-tcp.json, ours and private), or None."""
    import json
    import stat
    path = os.path.join(os.path.dirname(sock), "agent-tcp.json")
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        with open(path) as f:
            j = json.load(f)
        return str(j["address"]), str(j["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def driver_settings(address=None, token=None):
    """In the driver: where the workers' agents stream to and with which
    settings, a dict to ship to them (None: nowhere to stream). address:
    a Unix socket path, or "tcp://host:port" of `hotline run --listen-tcp`
    (token: its token, default $HOTLINE_TOKEN). Without one: the socket
    the driver's agent streams to (`hotline run`, hotline.connect()), else
    the editor's workspace socket when one listens; and when the driver's
    run listens on TCP ($HOTLINE_TCP), or the editor's server does (setting
    agentTcp: its agent-tcp.json beside the socket), that too, for workers
    on hosts where the socket is not."""
    from . import _config, _state
    cfg = _state["cfg"]
    settings = {}
    if address is not None and address.startswith("tcp://"):
        settings["tcp"] = address
    elif address is not None:
        settings["socket"] = address
    else:
        dest = None
        if cfg is not None:
            dest = cfg.get("socket") or os.environ.get("HOTLINE_SOCKET")
        if dest is None:
            dest = _config.find_socket()
        if dest:
            settings["socket"] = dest
        if os.environ.get("HOTLINE_TCP"):
            settings["tcp"] = os.environ["HOTLINE_TCP"]
        elif dest:  # the editor's server with its setting agentTcp: beside its socket
            gate = _lsp_gate(dest)
            if gate:
                settings["tcp"], token = gate
    if "tcp" in settings:
        settings["token"] = token or os.environ.get("HOTLINE_TOKEN")
        if not settings["token"]:
            raise ValueError("a TCP address needs the run's token (HOTLINE_TOKEN)")
    if not settings:
        return None
    if cfg is None:
        cfg = _config.load({})
    for k in _KEYS:
        if cfg.get(k) is not None:
            settings[k] = cfg[k]
    return settings


def start_in_worker(settings, role=None):
    """In a worker: the cloudpickle fix, and an agent when none runs yet;
    role names the process in the profile (set_role). True when this call
    started the agent (the caller stops it)."""
    fix_cloudpickle()
    import _hotline_agent
    if _hotline_agent.running() or not settings:
        if role and _hotline_agent.running():
            _hotline_agent.set_role(role)
        return False
    cfg = {k: v for k, v in settings.items() if k in _KEYS}
    sock = settings.get("socket")
    try:
        import stat
        local = bool(sock) and stat.S_ISSOCK(os.stat(sock).st_mode)
    except OSError:  # another host: no such folder here
        local = False
    try:
        if local:
            _hotline_agent.start(socket=sock, **cfg)
        elif settings.get("tcp"):  # another host: the driver's socket is not here
            start_tcp(settings["tcp"], settings["token"], **cfg)
    except Exception:  # no agent for this Python, a socket gone: unprofiled
        return False
    if role and _hotline_agent.running():
        _hotline_agent.set_role(role)
    return _hotline_agent.running()


# ---- across machines: the agent's stream over TCP to `hotline run --listen-tcp`

TOKEN_PREFIX = b"hotline-token "  # server/proc/tcpgate.h: the first line of a connection
_REPLAY_KINDS = (b'{"t":"hello"', b'{"t":"str"', b'{"t":"stack"')
REPLAY_MAX = 32 << 20  # definitions kept to replay on a new connection
BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)  # the tries after a dropped connection


# hello's "mono0" is this host's CLOCK_MONOTONIC, which means nothing on the
# server's host: without it the server keeps this connection's times its own
# (docs/agent-protocol.md, hello) rather than put them hours off its timeline
_MONO0 = __import__("re").compile(rb',"mono0":[-+0-9.eE]+')


def parse_tcp(address):
    """"tcp://host:port" or "host:port" -> (host, port)."""
    a = address[len("tcp://"):] if address.startswith("tcp://") else address
    host, _, port = a.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError("not host:port: %r" % address)
    return host.strip("[]"), int(port)


def _close(s):
    """Shut a socket down, then close it: a close alone neither wakes another
    thread's recv() on it nor sends the peer an end while that call holds it."""
    import socket
    if s is None:
        return
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


class Forwarder(object):
    """A private Unix socket for this process's agent, each of its
    connections relayed to the TCP gate of `hotline run --listen-tcp`: the
    token line first, then the agent's bytes, and the server's requests
    back. When the TCP connection drops it is made again (BACKOFF_S, then
    given up quietly: the agent's connection is closed and it stops
    profiling); a new connection starts with the token, the `hello` and
    every `str` / `stack` definition sent so far (the server reads it as a
    new connection of the same process), so later deltas decode. While
    disconnected nothing is read from the agent, whose own buffer is
    bounded."""

    def __init__(self, address, token, backoff=BACKOFF_S):
        import socket
        import tempfile
        import threading
        self.host, self.port = parse_tcp(address)
        self.token = token.encode() if isinstance(token, str) else token
        self.backoff = backoff
        self.dir = tempfile.mkdtemp(prefix="hotline-fwd-")
        self.path = os.path.join(self.dir, "agent.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)
        self.listener.listen(8)
        self.relays = []
        t = threading.Thread(target=self._accept, name="hotline-forwarder", daemon=True)
        t.start()

    def flush(self, timeout=3.0):
        """Wait (at exit) until the relays have sent what the agent wrote:
        they are daemon threads, which the interpreter would cut short."""
        import time
        end = time.monotonic() + timeout
        for t in list(self.relays):
            t.join(max(0.0, end - time.monotonic()))

    def _accept(self):
        import threading
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            t = threading.Thread(target=self._relay, args=(conn,), name="hotline-forwarder",
                                 daemon=True)
            self.relays.append(t)
            t.start()

    def _dial(self, replay):
        """A TCP connection that has sent the token and replay, or None."""
        import socket
        try:
            s = socket.create_connection((self.host, self.port), timeout=5.0)
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(TOKEN_PREFIX + self.token + b"\n" + b"".join(replay))
            return s
        except OSError:
            return None

    def _back(self, tcp, conn):
        """The server's requests (now, stop) back to the agent."""
        try:
            while True:
                b = tcp.recv(65536)
                if not b:
                    return
                conn.sendall(b)
        except OSError:
            return

    def _relay(self, conn):
        import threading
        import time
        replay, kept, buf = [], 0, b""
        tcp = self._dial(replay)
        tries = 0
        while tcp is None and tries < len(self.backoff):
            time.sleep(self.backoff[tries])
            tries += 1
            tcp = self._dial(replay)
        if tcp is None:
            _close(conn)
            return
        threading.Thread(target=self._back, args=(tcp, conn), daemon=True).start()
        try:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break  # the agent ended its stream
                buf += chunk
                end = buf.rfind(b"\n") + 1
                if not end:
                    continue
                lines, buf = buf[:end], buf[end:]
                if b'"mono0"' in lines:
                    lines = _MONO0.sub(b"", lines)
                for line in lines.splitlines(True):
                    if line.startswith(_REPLAY_KINDS) and replay is not None:
                        replay.append(line)
                        kept += len(line)
                        if kept > REPLAY_MAX:
                            replay = None  # too much to replay: no reconnecting
                sent = False
                for delay in (0.0,) + tuple(self.backoff):
                    if delay:
                        time.sleep(delay)
                    if tcp is None:
                        if replay is None:
                            break
                        tcp = self._dial(replay)
                        if tcp is None:
                            continue
                        threading.Thread(target=self._back, args=(tcp, conn),
                                         daemon=True).start()
                        # definitions in this batch went with the replay
                        lines = b"".join(x for x in lines.splitlines(True)
                                         if not x.startswith(_REPLAY_KINDS))
                    try:
                        tcp.sendall(lines)
                        sent = True
                        break
                    except OSError:
                        _close(tcp)
                        tcp = None
                if not sent:
                    break  # given up: the agent's connection closes below
        finally:
            _close(tcp)
            _close(conn)


_forwarders = {}


def start_tcp(address, token, **config):
    """Stream this process's profile to `hotline run --listen-tcp` at
    address ("host:port") with its token. Keyword arguments as for start().
    True when the agent runs now."""
    import _hotline_agent
    if _hotline_agent.running():
        return True
    key = (address, token)
    fwd = _forwarders.get(key)
    if fwd is None:
        import atexit
        fwd = _forwarders[key] = Forwarder(address, token)
        atexit.register(fwd.flush)  # before the agent's own: runs after its `end`
    cfg = dict(config)
    cfg["socket"] = fwd.path
    _hotline_agent.start(**cfg)
    return _hotline_agent.running()
