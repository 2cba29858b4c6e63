"""Profile a Ray job's workers into the driver's profile (docs/distributed.md).

    import ray
    import hotline.ray

    ray.init(runtime_env={"worker_process_setup_hook": hotline.ray.setup_hook()})

Every Ray worker process runs the hook once at its start: it gives the
functions that Ray's cloudpickle ships from the script their file back
(they arrive as "<dynamic-code>") and, where no agent runs yet, starts one
streaming to where the driver's streams (its `hotline run`, the editor's
socket, or `address="tcp://host:port"` with the run's token for workers of
other hosts). Each worker is its own process of the profile."""
from _hotline_agent import _remote

__all__ = ["setup_hook"]


class _Hook(object):
    """The callable Ray ships to its workers (pickled by reference to this
    class, with the driver's settings as its state)."""

    __name__ = "hotline_setup_hook"  # ray names the hook in its messages

    def __init__(self, settings):
        self.settings = settings

    def __call__(self):
        _remote.start_in_worker(self.settings, role="ray worker")


def setup_hook(address=None, token=None):
    """The worker_process_setup_hook for ray.init's runtime_env. address,
    token: as for hotline.dask.Profile."""
    return _Hook(_remote.driver_settings(address, token))
