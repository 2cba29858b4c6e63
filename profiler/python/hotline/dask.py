"""Profile a Dask job's workers into the driver's profile (docs/distributed.md).

    from distributed import Client
    import hotline.dask

    client = Client(...)
    client.register_plugin(hotline.dask.Profile())
    client.map(burn, ...)        # burn's lines get the workers' seconds

In each worker (those running now and those that join later) the plugin
gives the task functions that cloudpickle ships from the script their file
back (they arrive as "<dynamic-code>") and, when the worker is not profiled
already (a worker that `hotline run` started is), starts the agent
streaming to where the driver's streams: the socket of its `hotline run`,
or the editor's workspace socket (`hotline lsp`). Each worker is its own
process of the profile. Built without `distributed` imported here: the
class is a WorkerPlugin by duck typing (setup / teardown), which
`register_plugin` accepts."""
from _hotline_agent import _remote

__all__ = ["Profile"]

try:  # the real base class when distributed is there (register_plugin checks it)
    from distributed.diagnostics.plugin import WorkerPlugin as _Base
except Exception:  # pragma: no cover - distributed missing: usable as a duck
    _Base = object


class Profile(_Base):
    """A `distributed` WorkerPlugin: client.register_plugin(Profile()).

    address: the Unix socket the workers stream to, or "tcp://host:port" of
    `hotline run --listen-tcp` with its token (default $HOTLINE_TOKEN).
    Default: the driver's own destination, and the run's TCP gate for
    workers on other hosts when it has one (docs/distributed.md)."""

    name = "hotline"
    idempotent = True

    def __init__(self, address=None, token=None):
        self.settings = _remote.driver_settings(address, token)
        self._started = False

    def setup(self, worker=None):
        addr = getattr(worker, "address", None)
        self._started = _remote.start_in_worker(
            self.settings, role="dask worker" + (" " + addr if addr else ""))

    def teardown(self, worker=None):
        if self._started:
            import _hotline_agent
            _hotline_agent.stop()  # the last delta and `end` before the worker exits
            self._started = False
