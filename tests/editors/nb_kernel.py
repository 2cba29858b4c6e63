#!/usr/bin/env python3
"""The kernel side of the VS Code notebook end-to-end test (vscode_e2e.js):
code-server opens NOTEBOOK with its built-in notebook support (no Jupyter
extension here, so no kernel of its own); this starts a real ipykernel
(/usr/bin/python3's, jupyter_client) in the notebook's folder with the
hotline agent on PYTHONPATH and runs the notebook's code cells, their text
exactly as the file has it, as a user running them one by one would. The
first cell is `%load_ext hotline`: the kernel then streams to the
workspace's server. Every cell after waits for nothing but its own code:
the second, the seed's loop (scikit-learn's GaussianMixture per pixel,
Debian's python3-sklearn), ends by itself after some seconds and prints
its own measure (the gmm.fit line's seconds, its wall, its end), which
this echoes in its "cell 1 ok: ..." line.

usage: nb_kernel.py PYTHON_DIR NOTEBOOK
Prints "cell N ok" per cell, exits 1 on a cell's error."""
import json
import os
import sys

from jupyter_client.manager import start_new_kernel

TIMEOUT = 120.0


def main():
    pydir, nb = sys.argv[1], os.path.abspath(sys.argv[2])
    cells = ["".join(c["source"]) for c in json.load(open(nb, encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    env = dict(os.environ, PYTHONPATH=pydir, PYDEVD_DISABLE_FILE_VALIDATION="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    for k in ("HOTLINE_SOCKET", "HOTLINE_CONFIG", "HOTLINE_BOOT", "HOTLINE_CONNECT",
              "IPYKERNEL_CELL_NAME"):
        env.pop(k, None)
    km, kc = start_new_kernel(kernel_name="python3", cwd=os.path.dirname(nb), env=env,
                              startup_timeout=TIMEOUT)
    try:
        for i, code in enumerate(cells):
            out = []
            reply = kc.execute_interactive(code, timeout=TIMEOUT, output_hook=out.append)
            text = "".join(m["content"].get("text", "") for m in out)
            print("cell %d %s: %s" % (i, reply["content"]["status"], text.strip()[:200]), flush=True)
            if reply["content"]["status"] != "ok":
                sys.exit(1)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
