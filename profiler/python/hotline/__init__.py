"""Hotline: a sampling profiler for Python whose results show up in the editor.

    import hotline
    hotline.start()          # or start(interval_ms=5, include=[...])
    ...
    hotline.stop()

    hotline.connect()        # stream to the editor's server instead, when
                             # one listens for this workspace (a socket
                             # <dir>/.hotline/agent.sock from the working
                             # directory upward, or $HOTLINE_SOCKET)

    %load_ext hotline        # IPython / Jupyter: the %hotline magics
    hotline.marimo()         # in a marimo cell: the running line and the
                             # per-line results in every later cell's output

This is the public face, importable where the user put this folder on the
path. The agent itself is the private package `_hotline_agent` (the name
`hotline run` and `hotline attach` import, so that a program's own
`hotline` module is never shadowed); both share one state."""
from _hotline_agent import (connect, connected, load_ipython_extension, marimo, running, start,
                            stats, stop, unload_ipython_extension)

__all__ = ["start", "stop", "running", "connect", "connected", "marimo"]
