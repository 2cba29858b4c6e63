"""JSON for the agent's start-up, without the json module.

Every profiled process reads HOTLINE_CONFIG and writes its `hello` line
before the program's first line. `import json` brings re, enum, functools
and collections with it: ~8 ms of a 15-20 ms interpreter start (python
-X importtime, docs/benchmarks.md "Start-up"), paid by every program, most
of which never import them. These two functions do what json.loads and
json.dumps(obj, separators=(",", ":")) do for what the server and the agent
exchange: objects, arrays, strings (\\u escapes, surrogate pairs, lone
surrogates kept as json keeps them), numbers, true, false, null. Output is
ASCII, as json.dumps's (ensure_ascii). Invalid input raises ValueError.
tests/profiler/test_agent_start.py holds them to the json module's results.
"""

_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
        "t": "\t"}
_WS = " \t\n\r"
_NUM = "+-0123456789.eE"
_DIGITS = "0123456789"
# what json.loads takes beyond the JSON grammar, and json.dumps writes
_CONST = (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
          ("Infinity", float("inf")), ("-Infinity", float("-inf")))


def _number_ok(tok):
    """tok is a JSON number: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?"""
    i, n = (1 if tok[:1] == "-" else 0), len(tok)
    j = i
    while j < n and tok[j] in _DIGITS:
        j += 1
    if j == i or (tok[i] == "0" and j > i + 1):
        return False
    if j < n and tok[j] == ".":
        k = j + 1
        while k < n and tok[k] in _DIGITS:
            k += 1
        if k == j + 1:
            return False
        j = k
    if j < n and tok[j] in "eE":
        j += 1
        if j < n and tok[j] in "+-":
            j += 1
        k = j
        while k < n and tok[k] in _DIGITS:
            k += 1
        if k == j:
            return False
        j = k
    return j == n


def loads(s):
    """The value of the JSON text s (a str)."""
    if not isinstance(s, str):
        raise TypeError("JSON text must be str, not %s" % type(s).__name__)
    v, i = _value(s, _skip(s, 0))
    if _skip(s, i) != len(s):
        raise ValueError("extra data at char %d" % i)
    return v


def _skip(s, i):
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _value(s, i):
    if i >= len(s):
        raise ValueError("expected a value at char %d" % i)
    c = s[i]
    if c == "{":
        return _object(s, i + 1)
    if c == "[":
        return _array(s, i + 1)
    if c == '"':
        return _string(s, i + 1)
    for word, v in _CONST:
        if s.startswith(word, i):
            return v, i + len(word)
    j = i
    while j < len(s) and s[j] in _NUM:
        j += 1
    tok = s[i:j]
    if not _number_ok(tok):
        raise ValueError("expected a value at char %d" % i)
    if "." in tok or "e" in tok or "E" in tok:
        return float(tok), j
    return int(tok), j


def _after_item(s, i, close):
    """After an item of an object or array: (where the next item starts,
    False) after a comma, (past the container, True) at its end."""
    i = _skip(s, i)
    if i < len(s) and s[i] == ",":
        return _skip(s, i + 1), False
    if i < len(s) and s[i] == close:
        return i + 1, True
    raise ValueError("expected ',' or '%s' at char %d" % (close, i))


def _object(s, i):
    out = {}
    i = _skip(s, i)
    if i < len(s) and s[i] == "}":
        return out, i + 1
    while True:
        if i >= len(s) or s[i] != '"':
            raise ValueError("expected a key at char %d" % i)
        k, i = _string(s, i + 1)
        i = _skip(s, i)
        if i >= len(s) or s[i] != ":":
            raise ValueError("expected ':' at char %d" % i)
        out[k], i = _value(s, _skip(s, i + 1))
        i, done = _after_item(s, i, "}")
        if done:
            return out, i


def _array(s, i):
    out = []
    i = _skip(s, i)
    if i < len(s) and s[i] == "]":
        return out, i + 1
    while True:
        v, i = _value(s, i)
        out.append(v)
        i, done = _after_item(s, i, "]")
        if done:
            return out, i


def _hex4(s, i):
    h = s[i:i + 4]
    if len(h) != 4 or any(c not in "0123456789abcdefABCDEF" for c in h):
        raise ValueError("bad \\u escape at char %d" % i)
    return int(h, 16)


def _string(s, i):
    parts = []
    n = len(s)
    while True:
        j = i
        while j < n and s[j] != '"' and s[j] != "\\":
            if s[j] < " ":
                raise ValueError("control character in a string at char %d" % j)
            j += 1
        parts.append(s[i:j])
        if j >= n:
            raise ValueError("unterminated string")
        if s[j] == '"':
            return "".join(parts), j + 1
        e = s[j + 1:j + 2]
        if e == "u":
            u = _hex4(s, j + 2)
            i = j + 6
            if 0xD800 <= u < 0xDC00 and s[i:i + 2] == "\\u":
                lo = _hex4(s, i + 2)
                if 0xDC00 <= lo < 0xE000:
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
            parts.append(chr(u))
        elif e in _ESC:
            parts.append(_ESC[e])
            i = j + 2
        else:
            raise ValueError("bad escape at char %d" % j)


_OUT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
        "\f": "\\f"}


def _str(s):
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = ['"']
    for c in s:
        o = ord(c)
        if c in _OUT:
            out.append(_OUT[c])
        elif 0x20 <= o < 0x7F:
            out.append(c)
        elif o < 0x10000:
            out.append("\\u%04x" % o)
        else:
            o -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 | (o >> 10), 0xDC00 | (o & 0x3FF)))
    out.append('"')
    return "".join(out)


def dumps(obj):
    """obj as compact JSON (json.dumps(obj, separators=(",", ":")))."""
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, str):
        return _str(obj)
    if isinstance(obj, int):
        return int.__repr__(obj)
    if isinstance(obj, float):
        if obj != obj:
            return "NaN"
        if obj in (float("inf"), float("-inf")):
            return "Infinity" if obj > 0 else "-Infinity"
        return float.__repr__(obj)
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in obj) + "]"
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, str):
                pass
            elif k is None or isinstance(k, (bool, int, float)):
                k = dumps(k).strip('"')
            else:
                raise TypeError("keys must be str, int, float, bool or None, not %s"
                                % type(k).__name__)
            items.append(_str(k) + ":" + dumps(v))
        return "{" + ",".join(items) + "}"
    raise TypeError("Object of type %s is not JSON serializable" % type(obj).__name__)
