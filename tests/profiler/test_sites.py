"""The call site (docs/sampling.md, "The call site"): what the innermost
frame is doing, read without the GIL.
  - the analysis of code objects (sampling/site.c through the agent's
    _site_units hook): value-stack depths never above co_stacksize,
    RETURN_VALUE at depth 1, most calls' depths known;
  - walk_site on a live frame (the _site_here hook, read at its own call):
    the callee named through every call form (plain, method, keywords,
    *args, inside a function, a comprehension, a generator);
  - `hotline run --json`: C callees as leaf frames of the stacks, file
    "<native>", line 0, under the program's line (zlib.compress,
    builtins.sorted, list.sort), and never a line or file of their own."""
import dis
import importlib
import json
import os
import subprocess
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

sys.path.insert(0, harness.AGENT_DIR)
from _hotline_agent import _agent, _opcodes  # noqa: E402

fails = []


def check(ok, msg):
    if not ok:
        fails.append(msg)
        print("FAIL " + msg)


_agent.set_opcodes(*_opcodes.tables())

# 1. the analysis over some of the standard library
codes = []


def walk(co):
    codes.append(co)
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            walk(c)


for m in ("os", "json.decoder", "ast", "argparse", "textwrap", "difflib", "dataclasses"):
    mod = importlib.import_module(m)
    with open(mod.__file__, encoding="utf-8") as f:
        walk(compile(f.read(), mod.__file__, "exec"))
known = unknown = calls = calls_known = 0
for co in codes:
    u = _agent._site_units(co)
    check(u is not None and len(u) == len(co.co_code) // 2, "no units for %r" % co)
    if u is None:
        continue
    for ins in dis.get_instructions(co):
        cls, depth, _arg, _layout = u[ins.offset // 2]
        if depth >= 0:
            known += 1
            check(depth <= co.co_stacksize, "%s: depth %d > co_stacksize %d at %d %s"
                  % (co.co_name, depth, co.co_stacksize, ins.offset, ins.opname))
            check(ins.opname != "RETURN_VALUE" or depth == 1,
                  "%s: RETURN_VALUE at depth %d" % (co.co_name, depth))
        else:
            unknown += 1
        if cls == _opcodes.CALL:
            calls += 1
            calls_known += depth >= 0
print("analysis: %d code objects, depth known at %.1f%% of instructions, %.1f%% of calls"
      % (len(codes), 100 * known / (known + unknown), 100 * calls_known / calls))
check(calls_known >= 0.85 * calls, "depths of %d of %d calls known" % (calls_known, calls))

# 2. walk_site on this thread, at the call of _site_here itself
here = _agent._site_here
NAME = "_hotline_agent._agent._site_here"


def in_function():
    return here()


def gen():
    yield here()


class Obj:
    site = staticmethod(_agent._site_here)


forms = {
    "module attribute": lambda: _agent._site_here(),
    "local name": lambda: here(),
    "function": in_function,
    "comprehension": lambda: [here() for _ in range(1)][0],
    "generator": lambda: next(gen()),
    "*args": lambda: here(*()),
    "**kwargs": lambda: here(**{}),
    "method-like": lambda: Obj().site(),
}
for form, fn in forms.items():
    got = fn()
    print("%-16s %r" % (form, got))
    check(got == (_opcodes.CALL, NAME), "%s: %r, want (CALL, %s)" % (form, got, NAME))

# 3. the leaf frames in `hotline run --json`
prog = harness.target("callee.py")
marks = harness.markers(prog)
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "p.json")
    r = subprocess.run([os.path.join(harness.BUILD, "hotline"), "run", "--python", sys.executable,
                        "--json", out, prog, "1.5"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "hotline run: rc %d %s" % (r.returncode, r.stderr[-1000:]))
    prof = json.load(open(out))
leaf = {}
for st in prof["stacks"]:
    fr = st["frames"]
    if fr and fr[0]["file"] == "<native>":
        check(fr[0]["line"] == 0, "a <native> leaf with line %r" % fr[0]["line"])
        # under a Python frame: the program's own call, or a library's (the
        # program's `import` of an extension module runs importlib's
        # _call_with_frames_removed -> _imp.create_dynamic: seen in CI)
        check(len(fr) > 1 and fr[1]["file"] != "<native>" and fr[1]["line"] > 0,
              "a <native> leaf not under a Python frame: %r" % fr[:2])
        if len(fr) > 1:
            key = (fr[0]["name"], fr[1]["line"])
            leaf[key] = leaf.get(key, 0) + st["seconds"]
    check(all(f["file"] != "<native>" for f in fr[1:]), "<native> not a leaf: %r" % fr)
print("leaves: %s" % ", ".join("%s at line %d: %.3f s" % (n, ln, s)
                              for (n, ln), s in sorted(leaf.items())))
check(leaf.get(("zlib.compress", marks["compress"]), 0) > 0.3, "zlib.compress leaf under its line")
check(leaf.get(("builtins.sorted", marks["sorted"]), 0) > 0, "builtins.sorted leaf under its line")
check("<native>" not in prof["files"], "<native> listed as a file: %r" % list(prof["files"]))
if fails:
    print("FAIL sites [Python %d.%d.%d]" % sys.version_info[:3])
    sys.exit(1)
print("ok sites [Python %d.%d.%d]" % sys.version_info[:3])
