"""BUILD/marimo-venv, the one venv of the marimo tests (lsp.marimo,
lsp.marimo_attach, notebook_marimo_page; ctest runs them one at a time:
RESOURCE_LOCK marimo_venv): /usr/bin/python3's venv with the pins of
marimo-requirements.txt (marimo, and scikit-learn for the seed's loop in
notebook_marimo_page). Made once per content of that file: the stamp is
its hash, so a venv made with other pins is made again, never mixed."""
import hashlib
import os
import re
import subprocess

REQUIREMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "marimo-requirements.txt")
with open(REQUIREMENTS, encoding="utf-8") as _f:
    _PINS = _f.read()
MARIMO = re.search(r"^marimo==(\S+)$", _PINS, re.M).group(1)


def venv(path):
    """The venv's python, made first when missing or made with other pins.
    pip's failure (no PyPI) raises subprocess.CalledProcessError (its
    stderr in .stderr) or TimeoutExpired; the caller says skip or fail."""
    py = os.path.join(path, "bin", "python")
    stamp = os.path.join(path, "pins-" + hashlib.sha256(_PINS.encode()).hexdigest()[:16])
    if os.path.exists(stamp):
        return py
    subprocess.run(["nice", "-n", "19", "/usr/bin/python3", "-m", "venv", "--clear", path],
                   check=True, timeout=300)
    subprocess.run(["nice", "-n", "19", py, "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", "-r", REQUIREMENTS],
                   check=True, capture_output=True, text=True, timeout=900)
    open(stamp, "w").close()
    return py
