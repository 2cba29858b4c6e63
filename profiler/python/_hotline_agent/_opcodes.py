"""The opcode tables of the call-site decision (sampling/site.h), built from
this interpreter's dis/opcode modules: for each raw opcode value (specialized
and instrumented ones included, by their base opcode) its class and its
inline cache entries. docs/sampling.md, "The call site"."""
import dis
import opcode

NONE, PY, CALL, OP, EXT = 0, 1, 2, 3, 4

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


def tables():
    """(classes, caches): 256 bytes each."""
    allmap = dict(getattr(dis, "_all_opmap", None) or opcode.opmap)
    deopt = dict(getattr(dis, "deoptmap", None) or {})
    ice = getattr(opcode, "_inline_cache_entries", None)  # 3.11/3.12 list, 3.13+ dict
    cls, caches = bytearray(256), bytearray(256)
    for name, v in allmap.items():
        if not 0 <= v < 256:
            continue
        base = deopt.get(name, name)
        if isinstance(base, int):
            base = opcode.opname[base]
        if base.startswith("INSTRUMENTED_"):
            base = base[len("INSTRUMENTED_"):]
        cls[v] = _class(base)
        n = 0
        if isinstance(ice, dict):
            n = ice.get(base, 0)
        elif isinstance(ice, (list, tuple)) and base in allmap and allmap[base] < len(ice):
            n = ice[allmap[base]]
        caches[v] = n
    return bytes(cls), bytes(caches)
