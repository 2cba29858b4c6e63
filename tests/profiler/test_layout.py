"""The agent compares the running interpreter's own description of its
structures (3.13+: _PyRuntime.debug_offsets, profiler/compat_layout.h)
with the layout it was compiled for, and refuses to sample when they
differ instead of reading garbage. Here the table is overwritten in this
process (only debuggers read it) and restored: a wrong version, then a
wrong offset of one field the walker reads (code objects' bytecode, which
equals CodeType.__basicsize__), each makes start() fail naming it; the
real table lets start() run. 3.9-3.12 have no table: start() runs."""
import ctypes
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

sys.path.insert(0, harness.AGENT_DIR)
from _hotline_agent import _agent  # noqa: E402

c = harness.Checker("layout")
out = os.path.join(tempfile.mkdtemp(prefix="hl-layout-"), "out")


def start_error():
    """None when start() runs (then stopped), else the error's text."""
    try:
        _agent.start("{}", out, socket=False)
    except (RuntimeError, OSError) as e:
        return "%s: %s" % (type(e).__name__, e)
    _agent.stop()
    return None


err = start_error()
c.check(err is None, "start() with the real table: %s" % err)
if sys.version_info >= (3, 13):
    base = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    c.check(ctypes.string_at(base, 8) == b"xdebugpy", "no debug offsets cookie at _PyRuntime")
    # the first 64 words lie inside the table in 3.13-3.15
    words = (ctypes.c_uint64 * 64).from_address(base)
    saved = words[1]
    words[1] = 0x03000000  # version 3.0
    err = start_error()
    words[1] = saved
    c.check(err is not None and "interpreter is 3.0" in err,
            "start() with the version word changed: %r" % err)
    found = []
    for i in range(3, 64):
        if words[i] != types.CodeType.__basicsize__:
            continue
        saved = words[i]
        words[i] = saved + 8
        err = start_error()
        words[i] = saved
        if err and "code_object.co_code_adaptive" in err:
            found.append(i)
    c.check(len(found) == 1, "start() refused on code_object.co_code_adaptive for words %r" % found)
    err = start_error()
    c.check(err is None, "start() with the table restored: %s" % err)
c.done()
