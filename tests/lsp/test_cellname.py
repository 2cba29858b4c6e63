#!/usr/bin/env python3
"""The server's ipykernel cell file name (server/text/cellname.c) against
ipykernel's own: /usr/bin/python3's ipykernel.compiler (Debian
python3-ipykernel) names each cell, the C helper hashes the same bytes and
parses ipykernel's full name back to its hash (docs/notebooks.md, "Cells in
the editor"). Cells: ASCII, unicode (2-, 3- and 4-byte UTF-8), CRLF and a
lone CR, empty, every tail length (1-7 bytes), one byte over 0x7f in the
tail, long.

Usage: test_cellname.py TEST_CELLNAME_BINARY"""
import json
import os
import random
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"
NAMES = r"""
import json, os, sys
os.environ.pop("IPYKERNEL_CELL_NAME", None)
from ipykernel import compiler
cells = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps([compiler.get_file_name(c) for c in cells]))
"""


def main():
    tool = os.path.abspath(sys.argv[1])
    rnd = random.Random(14)
    cells = [
        "print('hello')",
        "x = 'h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c \U0001f389'\nprint(x)\n",
        "a = 1\r\nb = 2\r\nprint(a + b)\r\n",
        "a = 1\rb = 2",
        "",
        "\n",
        "\u00e9",  # 2 bytes: a tail of 2
        "abcdefg\u00ff",  # a byte over 0x7f in the tail
        "%load_ext hotline\nimport numpy as np\nfor i in range(10):\n    np.linalg.inv(np.eye(50))\n",
        "".join(rnd.choice("abc \n\u00e9\u4e2d\U0001f600") for _ in range(20000)),
    ] + ["x" * n for n in range(1, 8)]
    with tempfile.TemporaryDirectory(prefix="hotline-cellname-") as tmp:
        spec = os.path.join(tmp, "cells.json")
        with open(spec, "w", encoding="utf-8") as f:
            json.dump(cells, f)
        out = subprocess.run([PY, "-c", NAMES, spec], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, "ipykernel's compiler failed: %s" % out.stderr
        names = json.loads(out.stdout)
        files = []
        for i, c in enumerate(cells):
            p = os.path.join(tmp, "cell%d" % i)
            with open(p, "wb") as f:
                f.write(c.encode("utf-8"))  # the raw text, newlines as they are
            files.append(p)
        ours = subprocess.run([tool, "--hash"] + files, capture_output=True, text=True,
                              timeout=60, check=True).stdout.split()
        parsed = subprocess.run([tool, "--parse"] + names, capture_output=True, text=True,
                                timeout=60, check=True).stdout.split()
    bad = 0
    for c, name, h, p in zip(cells, names, ours, parsed):
        base = os.path.basename(name)
        want = base[:-3]
        ok = base.endswith(".py") and h == want and p == want and \
            os.path.basename(os.path.dirname(name)).startswith("ipykernel_")
        bad += not ok
        print("%s %-60r ipykernel %s, ours %s, parsed %s" %
              ("ok  " if ok else "FAIL", c[:40] + ("..." if len(c) > 40 else ""), name, h, p))
    assert len(ours) == len(cells) == len(parsed), (ours, parsed)
    assert not bad, "%d cell name(s) differ from ipykernel's" % bad
    print("ok: %d cells named as ipykernel names them" % len(cells))


if __name__ == "__main__":
    main()
