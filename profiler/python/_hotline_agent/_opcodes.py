"""The opcode tables of the call-site decision (sampling/site.h), built from
this interpreter's dis/opcode modules: for each raw opcode value (specialized
and instrumented ones included, by their base opcode) its class and its
inline cache entries. docs/sampling.md, "The call site"."""
import dis
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
