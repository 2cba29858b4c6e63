"""Our line-table decoders (sampling/linetable.c) agree with the
interpreter's own mapping for every instruction of every code object in a
few stdlib modules (co_lines() on 3.10+, dis.findlinestarts on 3.9)."""
import dis
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

sys.path.insert(0, harness.AGENT_DIR)
from _hotline_agent import _agent  # noqa: E402

import argparse, json.decoder, email.message, asyncio.base_events  # noqa: E401,E402

c = harness.Checker("linetable")


def codes(co):
    yield co
    for k in co.co_consts:
        if isinstance(k, types.CodeType):
            yield from codes(k)


def expected(co):
    """[(start, end, line)] in bytes; line None for no line."""
    if hasattr(co, "co_lines"):
        return list(co.co_lines())
    starts = list(dis.findlinestarts(co))
    out = []
    for i, (off, line) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(co.co_code)
        out.append((off, end, line))
    return out


table_attr = "co_linetable" if sys.version_info >= (3, 10) else "co_lnotab"
unit = 2 if sys.version_info >= (3, 11) else 1
n = bad = 0
for mod in (argparse, json.decoder, email.message, asyncio.base_events):
    for top in [v.__code__ for v in vars(mod).values() if hasattr(v, "__code__")] + [
            f.__code__ for cls in vars(mod).values() if isinstance(cls, type)
            for f in vars(cls).values() if hasattr(f, "__code__")]:
        for co in codes(top):
            tab = getattr(co, table_attr)
            maxline = co.co_firstlineno
            for start, end, line in expected(co):
                if line is not None:
                    maxline = max(maxline, line)
                for off in range(start, end, 2):
                    got, last = _agent._addr2line(tab, co.co_firstlineno, off // unit)
                    want = line if line is not None else -1
                    n += 1
                    if got != want:
                        bad += 1
                        if bad <= 5:
                            c.check(False, "%s:%s offset %d: got %d want %d"
                                    % (co.co_filename, co.co_qualname if hasattr(co, "co_qualname")
                                       else co.co_name, off, got, want))
            _, last = _agent._addr2line(tab, co.co_firstlineno, 0)
            c.check(last == maxline, "%s: last line %d, want %d" % (co.co_name, last, maxline))
print("%d offsets checked, %d wrong" % (n, bad))
c.check(n > 10000 and bad == 0, "%d of %d offsets wrong" % (bad, n))
c.done()
