"""The opcode tables of the call-site decision (sampling/site.h), built from
this interpreter's dis/opcode modules: for each raw opcode value (specialized
and instrumented ones included, by their base opcode) its class and its
inline cache entries. docs/sampling.md, "The call site"."""
import opcode
import sys

NONE, PY, CALL, OP, EXT = 0, 1, 2, 3, 4
F_JREL, F_JABS, F_BACK, F_NOFALL, F_GEN, F_UNARY, F_START1 = 1, 2, 4, 8, 16, 32, 64
# where a call's callable is (site.h, SITE_CALL_*)
L_FN, L_FN_KW, L_EX, L_METHOD, L_313, L_313_KW, L_311, L_313_EX, L_314_EX = 1, 2, 3, 4, 5, 6, 7, 8, 9
_NOFALL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_ABSOLUTE",
           "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
           "JUMP_NO_INTERRUPT", "INTERPRETER_EXIT"}

_CALLS = {"CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_METHOD",  # 3.9/3.10
          "PRECALL", "CALL", "CALL_KW"}                                            # 3.11+
_OPS = {"COMPARE_OP", "CONTAINS_OP", "STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE"}
# not an instruction of the code (CACHE) or hiding the real one (3.12+
# INSTRUMENTED_LINE / _INSTRUCTION, 3.13+ ENTER_EXECUTOR)
_UNKNOWN = {"CACHE", "LINE", "INSTRUCTION", "ENTER_EXECUTOR", "RESERVED"}


def _class(base):
    if base == "EXTENDED_ARG":
        return EXT
    if base in _UNKNOWN:
        return NONE
    if base in _CALLS:
        return CALL
    if base in _OPS or base.startswith(("BINARY_", "INPLACE_", "UNARY_")):
        return OP
    return PY


def _layout(base):
    if base == "CALL_FUNCTION_EX":
        if sys.version_info >= (3, 14):
            return L_314_EX  # kwargs or a NULL always pushed
        return L_313_EX if sys.version_info >= (3, 13) else L_EX
    if sys.version_info >= (3, 13):
        return {"CALL": L_313, "CALL_KW": L_313_KW}.get(base, 0)
    if sys.version_info[:2] == (3, 11) and base == "CALL":
        return L_311  # PRECALL took the arguments off the compiler's depth
    return {"CALL_FUNCTION": L_FN, "CALL_FUNCTION_KW": L_FN_KW, "CALL_METHOD": L_METHOD,
            "PRECALL": L_METHOD, "CALL": L_METHOD}.get(base, 0)


def _flags(base, allmap):
    v = allmap.get(base, -1)
    f = 0
    jrel = set(getattr(opcode, "hasjrel", ())) | set(getattr(opcode, "hasjump", ()))
    jabs = set(getattr(opcode, "hasjabs", ()))
    if v in jabs:
        f |= F_JABS
    elif v in jrel:
        f |= F_JREL
        if "BACKWARD" in base:
            f |= F_BACK
    if base in _NOFALL:
        f |= F_NOFALL
    if base == "RETURN_GENERATOR":
        f |= F_GEN
    if base.startswith("UNARY_"):
        f |= F_UNARY
    if base == "GEN_START":
        f |= F_START1
    return f


def jit_enabled():
    """True under the JIT (3.14+, PYTHON_JIT=1): its traces leave the frame at
    the last call that may escape, so the call site is not read there
    (profiler/walk.h)."""
    jit = getattr(sys, "_jit", None)
    try:
        return bool(jit and jit.is_enabled())
    except Exception:
        return False


def tables():
    """(classes, caches, bases, flags, layouts, jump_bytes): five tables of
    256 bytes each and whether jump arguments are in bytes (3.9)."""
    import dis
    allmap = dict(getattr(dis, "_all_opmap", None) or opcode.opmap)
    deopt = dict(getattr(dis, "deoptmap", None) or {})
    # 3.11/3.12 a list, 3.13/3.14 a dict, 3.15 a frozendict (no dict subclass:
    # read as a list it gave no caches, and every depth after one was wrong)
    ice = getattr(opcode, "_inline_cache_entries", None)
    cls, caches = bytearray(256), bytearray(256)
    bases, flags, layouts = bytearray(256), bytearray(256), bytearray(256)
    for name, v in allmap.items():
        if not 0 <= v < 256:
            continue
        base = deopt.get(name, name)
        if isinstance(base, int):
            base = opcode.opname[base]
        if base.startswith("INSTRUMENTED_"):
            base = base[len("INSTRUMENTED_"):]
        cls[v] = _class(base)
        b = allmap.get(base, v)
        bases[v] = b if 0 <= b < 256 else 0
        flags[v] = _flags(base, allmap)
        layouts[v] = _layout(base) if cls[v] == CALL else 0
        n = 0
        if hasattr(ice, "get"):
            n = ice.get(base, 0)
        elif isinstance(ice, (list, tuple)) and base in allmap and allmap[base] < len(ice):
            n = ice[allmap[base]]
        caches[v] = n
    return (bytes(cls), bytes(caches), bytes(bases), bytes(flags), bytes(layouts),
            sys.version_info < (3, 10))


# The tables are a function of the interpreter: dis's own maps are built
# from the opcode module's data by the code of this minor version. Building
# them imports dis (collections, types, operator, ...: ~4 ms of each start
# of a profiled program, docs/benchmarks.md "Start-up"), so they are kept in
# the user's cache folder, keyed by what they come from (_fingerprint), the
# key checked byte for byte when read (tests/profiler/test_agent_start.py).
_CACHE_MAGIC = b"hotline-opcodes-cache 2\n"  # then the key's length, the key, the
# tables (5 x 256 bytes), jump_bytes (1 byte), the CRC-32 of the tables and jump_bytes


def _fingerprint():
    """What the tables depend on, as bytes: the interpreter's version and
    build (sys.version names its date and compiler), and the files its
    opcode data comes from (opcode.py; 3.13+ _opcode_metadata.py), by
    size and modification time."""
    import os
    files = []
    for name in ("opcode", "_opcode_metadata"):
        m = sys.modules.get(name)
        f = getattr(m, "__file__", None)
        if f:
            st = os.stat(f)
            files.append((f, st.st_size, st.st_mtime_ns))
    return repr((sys.version, sys.hexversion, sys.implementation.cache_tag,
                 getattr(sys, "abiflags", ""), files)).encode("utf-8", "backslashreplace")


def _cache_dir():
    import os
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hotline")


def cached_tables():
    """tables(), from the cache when this interpreter's entry is there (read
    whole, its key equal to ours), else built and stored for the next start
    (written to a temporary name, then renamed: a reader never sees half of
    one). A cache that cannot be read or written costs only the build."""
    import os
    import zlib
    key = _fingerprint()
    path = os.path.join(_cache_dir(), "opcodes-%d-%08x.bin" % (sys.version_info[1],
                                                                 zlib.crc32(key)))
    size = 5 * 256 + 1
    try:
        with open(path, "rb") as f:
            blob = f.read()
        head = _CACHE_MAGIC + len(key).to_bytes(4, "little") + key
        t = blob[len(head):len(head) + size]
        if (blob.startswith(head) and len(blob) == len(head) + size + 4 and
                zlib.crc32(t).to_bytes(4, "little") == blob[-4:]):
            return tuple(bytes(t[i * 256:(i + 1) * 256]) for i in range(5)) + (t[-1] == 1,)
    except (OSError, ValueError):
        pass
    out = tables()
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(tmp, "wb") as f:
            t = b"".join(out[:5]) + bytes([1 if out[5] else 0])
            f.write(_CACHE_MAGIC + len(key).to_bytes(4, "little") + key + t +
                    zlib.crc32(t).to_bytes(4, "little"))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return out
