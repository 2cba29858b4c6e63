"""hotline.start(); hotline.stop() in-process, memory on with no shim, as in
a target of `hotline attach --memory` (the `windows_raw` mode, or
`wrappers` with HOTLINE_MEM_WINDOWS=0): after stop the RAW, MEM and OBJ
allocators in effect (PyMem_GetAllocator, through ctypes) are the ones from
before start; blocks allocated through the wrappers are freed after it by
the original; under tracemalloc, started while profiled, the wrappers stay
(tracemalloc is not cut off) until tracemalloc has put them back and a
later stop finds them on top. Prints one JSON line.

In windows_raw the MEM and OBJ slots hold pymalloc's functions or the
window's, whichever the sampler thread left there at that instant, under
our ctx: "ours" is compared by ctx and free there (same())."""
import ctypes
import json
import tracemalloc

import hotline
from _hotline_agent import _agent


class Alloc(ctypes.Structure):
    _fields_ = [(n, ctypes.c_void_p) for n in ("ctx", "malloc", "calloc", "realloc", "free")]


def allocators():
    get = ctypes.pythonapi.PyMem_GetAllocator
    get.argtypes = [ctypes.c_int, ctypes.POINTER(Alloc)]
    get.restype = None
    out = []
    for domain in (0, 1, 2):  # PYMEM_DOMAIN_RAW, _MEM, _OBJ
        a = Alloc()
        get(domain, ctypes.byref(a))
        out.append(tuple(getattr(a, n) for n, _ in Alloc._fields_))
    return out


def same(a, b):
    """the same hooks, a window open or not (ctx, free of MEM and OBJ)"""
    return a[0] == b[0] and all((x[0], x[4]) == (y[0], y[4]) for x, y in zip(a[1:], b[1:]))


res = {}
before = allocators()
hotline.start(interval_ms=5, memory=True)
res["mode"] = _agent.stats()["mem_mode"]
wrapped = allocators()
res["wrapped_while_on"] = wrapped != before
kept = [bytearray(i % 700 + 1) for i in range(20000)] + ["x%d" % i for i in range(20000)]
hotline.stop()
res["restored_after_stop"] = allocators() == before
del kept  # allocated through the wrappers, freed by the original
res["freed_after"] = True

hotline.start(interval_ms=5, memory=True)
tracemalloc.start()
kept = [bytearray(i % 700 + 1) for i in range(20000)]
hotline.stop()
now = allocators()
res["under_tracemalloc_kept"] = now != before and not same(now, wrapped)
res["tracemalloc_sees"] = tracemalloc.get_traced_memory()[0] > 0
tracemalloc.stop()
res["ours_back_from_tracemalloc"] = same(allocators(), wrapped)
del kept
hotline.start(interval_ms=5, memory=True)
hotline.stop()
res["restored_at_last"] = allocators() == before
print(json.dumps(res))
