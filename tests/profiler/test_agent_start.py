"""What the agent costs a program before its first line (docs/benchmarks.md,
"Start-up"): its Python half imports neither json (re, enum, functools,
collections come with it) nor sysconfig, and with the opcode tables cached,
not dis. Each replacement is held to what it replaces:

- _hotline_agent._json against the json module: the same values from
  loads, the same text from dumps (compact, ASCII), on generated values with
  non-ASCII, astral and lone-surrogate strings, control characters and
  escapes, and the same refusals of invalid text;
- _config._stdlib_dirs against sysconfig's stdlib/platstdlib;
- _opcodes.cached_tables against tables(), from an empty cache, a warm one
  and a damaged one;
- a program started under the agent (twice, the cache warm the second time)
  finds none of json, re, sysconfig, dis in sys.modules that the same
  interpreter without the agent does not import either."""
import json
import os
import random
import shutil
import sys
import sysconfig
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

sys.path.insert(0, harness.AGENT_DIR)
from _hotline_agent import _config, _json, _opcodes  # noqa: E402

c = harness.Checker("agent_start")
rng = random.Random(23)
ALPHABET = ["a", "Z", " ", '"', "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
            "é", "ß", "€", "\u2028", "\ufeff", "🎉", "\U0010ffff", "\ud800", "\udcff", "\udc80",
            "½", "✓"]


def rand_str():
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))


def rand_value(depth=0):
    k = rng.randrange(9 if depth < 4 else 6)
    if k == 0:
        return None
    if k == 1:
        return rng.choice([True, False])
    if k == 2:
        return rng.choice([0, -1, 7, 2 ** 63, -(2 ** 70), rng.randrange(-10 ** 6, 10 ** 6)])
    if k == 3:
        return rng.choice([0.0, -0.0, 0.1, 1e300, -2.5e-300, 1.0 / 3, 12345.678, 1e16])
    if k in (4, 5):
        return rand_str()
    if k == 6:
        return [rand_value(depth + 1) for _ in range(rng.randrange(4))]
    if k == 7:
        return {rand_str(): rand_value(depth + 1) for _ in range(rng.randrange(4))}
    return tuple(rand_value(depth + 1) for _ in range(rng.randrange(3)))


# dumps: the same text as json.dumps(obj, separators=(",", ":"))
n_bad = 0
for _ in range(3000):
    v = rand_value()
    want = json.dumps(v, separators=(",", ":"))
    got = _json.dumps(v)
    if got != want:
        n_bad += 1
        if n_bad <= 3:
            c.check(False, "dumps(%r) = %r, json: %r" % (v, got, want))
c.check(n_bad == 0, "%d of 3000 values dumped unlike json" % n_bad)
for v in ({1: 2, None: 3, True: 4, 2.5: 5}, float("nan"), float("inf"), -float("inf")):
    c.check(_json.dumps(v) == json.dumps(v, separators=(",", ":")), "dumps(%r)" % (v,))
for v in (object(), {(1, 2): 3}, b"x"):
    try:
        _json.dumps(v)
        c.check(False, "dumps(%r) did not refuse" % (v,))
    except TypeError:
        pass

# loads: the same value as json.loads, from compact, indented and raw UTF-8 text
n_bad = 0
for _ in range(3000):
    v = rand_value()
    for text in (json.dumps(v), json.dumps(v, indent=2), json.dumps(v, ensure_ascii=False),
                 json.dumps(v, separators=(" , ", " : "))):
        want, got = json.loads(text), _json.loads(text)
        # NaN != NaN: compare the texts they dump to
        if json.dumps(got) != json.dumps(want) or type(got) is not type(want):
            n_bad += 1
            if n_bad <= 3:
                c.check(False, "loads(%r) = %r, json: %r" % (text, got, want))
c.check(n_bad == 0, "%d texts loaded unlike json" % n_bad)
for text in ('"\\ud83c\\udf89"', '"\\ud83c"', '"\\udf89\\ud83c"', '"\\u00e9\\/"', "-0", "1E+2",
             "-1.5e-3", " [ ] ", "{ }", '{"a":[1,{"b":null}]}', "0", "-0.0e0",
             "[NaN,Infinity,-Infinity]"):
    # NaN != NaN: the texts they dump to, and the types
    got, want = _json.loads(text), json.loads(text)
    c.check(json.dumps(got) == json.dumps(want) and type(got) is type(want), "loads(%r)" % text)
for text in ("", " ", "{", "[1,]", "{'a':1}", '{"a" 1}', '"abc', '"\\x"', '"\\u12"', '"a\nb"',
             "01", "+1", "1 2", "tru", "[1 2]", '{"a":1,}', "--1", "1.2.3", "\x00", ".5", "1.",
             "1.e5", "-", "1e", "1e+", "-01", "0x10", "nan", "inf"):
    try:
        json.loads(text)
        json_ok = True
    except ValueError:
        json_ok = False
    try:
        _json.loads(text)
        ours_ok = True
    except ValueError:
        ours_ok = False
    c.check(not json_ok and not ours_ok,
            "invalid %r: json %s, ours %s" % (text, "took it" if json_ok else "refused",
                                              "took it" if ours_ok else "refused"))

# the standard library's folders, without sysconfig
want = set()
for key in ("stdlib", "platstdlib"):
    p = sysconfig.get_paths().get(key)
    if p:
        want.add(os.path.realpath(p))
        want.add(os.path.abspath(p))
c.check(_config._stdlib_dirs() == sorted(want),
        "stdlib dirs %s, sysconfig: %s" % (_config._stdlib_dirs(), sorted(want)))

# the opcode tables' cache
cache = tempfile.mkdtemp(prefix="hl-opcache-")
old_xdg = os.environ.get("XDG_CACHE_HOME")
os.environ["XDG_CACHE_HOME"] = cache
try:
    truth = _opcodes.tables()
    c.check(_opcodes.cached_tables() == truth, "cold cache: tables differ")
    files = os.listdir(os.path.join(cache, "hotline"))
    c.check(len(files) == 1 and files[0].endswith(".bin"), "cache files: %s" % files)
    c.check(_opcodes.cached_tables() == truth, "warm cache: tables differ")
    path = os.path.join(cache, "hotline", files[0]) if files else None
    if path:
        with open(path, "rb") as f:
            blob = f.read()
        for bad in (blob[:-1], blob[:-7] + b"\xff" * 7, blob.replace(b"hotline", b"hotlinX", 1),
                    b""):
            with open(path, "wb") as f:
                f.write(bad)
            c.check(_opcodes.cached_tables() == truth, "damaged cache taken")
            with open(path, "rb") as f:
                c.check(f.read() == blob, "damaged cache not rewritten")
finally:
    if old_xdg is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old_xdg

# a program's modules at its first line, with and without the agent
d = tempfile.mkdtemp(prefix="hl-start-")
prog = os.path.join(d, "mods.py")
with open(prog, "w") as f:
    f.write("import sys\nprint(' '.join(sorted(sys.modules)))\n")
env = {"XDG_CACHE_HOME": cache, "PYTHONDONTWRITEBYTECODE": "1"}
base = set(harness.plain([prog], extra_env=env).stdout.decode().split())
heavy = {"json", "re", "sysconfig", "dis", "enum", "collections"}
for attempt in ("cold cache", "warm cache"):
    r = harness.run([prog], config={"memory": True}, extra_env=env)
    mods = set(r.stdout.decode().split())
    c.check(r.rc == 0 and "_hotline_agent" in mods, "%s: rc %s, agent %s" % (
        attempt, r.rc, "_hotline_agent" in mods))
    extra = sorted((mods - base) & heavy)
    if attempt == "warm cache":
        c.check(not extra, "%s: the agent imported %s" % (attempt, extra))
    else:
        c.check(not (set(extra) - {"dis", "collections"}),
                "%s: the agent imported %s" % (attempt, extra))
shutil.rmtree(d, ignore_errors=True)
shutil.rmtree(cache, ignore_errors=True)
c.done()
