"""Runs cells through a real IPython InteractiveShell in this process, as a
front end would, and prints one JSON object: per cell its stdout, stderr,
and whether it raised; plus every display message the shell published
(the live view). Input (stdin): {"cells": [...], "record_display": bool}.

record_display installs a display publisher that records what it is given
(data, display_id, update) instead of printing it: what ipykernel turns
into display_data / update_display_data messages (test_notebook.py's kernel
case checks those for real)."""
import contextlib
import io
import json
import sys
import threading


def main():
    spec = json.load(sys.stdin)
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.displaypub import DisplayPublisher

    displays = []

    class Recorder(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None,
                    update=False, **kw):
            displays.append({"text": data.get("text/plain"),
                             "id": (transient or {}).get("display_id"),
                             "update": bool(update),
                             "thread": threading.current_thread().name})

    shell = InteractiveShell.instance()
    if spec.get("record_display"):
        shell.display_pub = Recorder(shell=shell)
    cells = []
    for src in spec["cells"]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            r = shell.run_cell(src, store_history=True)
            mark = len(displays)
        cells.append({"stdout": out.getvalue(), "stderr": err.getvalue(),
                      "error": r.error_in_exec is not None or r.error_before_exec is not None,
                      "displays_upto": mark})
    sys.__stdout__.write(json.dumps({"cells": cells, "displays": displays}) + "\n")


if __name__ == "__main__":
    main()
