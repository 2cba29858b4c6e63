"""Target of test_attach_memory.py: a program `hotline attach --memory`
attaches to. Its first stderr line is its pid. It allocates (garbage,
so that it reaches an allocator call often) until DIR/go exists, then keeps
100 MiB on the KEEP line, says "grown", allocates garbage until DIR/exit
exists, says whether Hotline still runs in it, and exits with status 3.
With "idle" it first blocks in a read of stdin (no allocator call at all)
until a line arrives, then does the same. With "audit" an audit hook
refuses PEP 768's remote scripts (the event cpython.remote_debugger_script).
With "allocators" it also says at exit whether the RAW, MEM and OBJ
allocators (PyMem_GetAllocator, through ctypes) are those it had at start.
With "busy" it does the same, but after "grown" its main thread never
lets the GIL go (no sleep, no I/O: a pure-Python loop that watches the
first byte of DIR/flag through mmap) until that byte is "1", then
compares the allocators before anything else.

usage: python mem_target.py DIR [idle|audit|allocators|busy]"""
import os
import sys
import time

d = sys.argv[1]
sys.stderr.write("%d\n" % os.getpid())
sys.stderr.flush()
if sys.argv[2:] == ["idle"]:
    sys.stdin.readline()
if sys.argv[2:] == ["audit"]:
    def refuse(event, args):
        if event == "cpython.remote_debugger_script":
            raise PermissionError("no remote scripts here")

    sys.addaudithook(refuse)



def allocators():
    """(ctx, malloc, calloc, realloc, free) of PYMEM_DOMAIN_RAW, _MEM and _OBJ"""
    import ctypes

    class Alloc(ctypes.Structure):
        _fields_ = [(n, ctypes.c_void_p) for n in ("ctx", "malloc", "calloc", "realloc", "free")]

    get = ctypes.pythonapi.PyMem_GetAllocator
    get.argtypes = [ctypes.c_int, ctypes.POINTER(Alloc)]
    get.restype = None
    out = []
    for domain in (0, 1, 2):
        a = Alloc()
        get(domain, ctypes.byref(a))
        out.append(tuple(getattr(a, n) for n, _ in Alloc._fields_))
    return out


at_start = allocators() if sys.argv[2:] in (["allocators"], ["busy"]) else None


def until(name):
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(d, name)) and time.monotonic() < deadline:
        junk = bytearray(4096)  # noqa: F841 (an allocator call)
        time.sleep(0.002)


print("started", flush=True)
until("go")
keep = []
for i in range(100):
    keep.append(bytearray(1 << 20))  # KEEP
if sys.argv[2:] == ["busy"]:
    import mmap
    with open(os.path.join(d, "flag"), "wb") as f:
        f.write(b"0")
    with open(os.path.join(d, "flag"), "r+b") as f:
        flag = mmap.mmap(f.fileno(), 1)
    print("grown", len(keep), flush=True)
    deadline = time.monotonic() + 120
    while flag[0] != ord("1") and time.monotonic() < deadline:
        junk = [i * 3 + 1000 for i in range(100)]  # noqa: F841 (allocations, GIL kept)
    busy_same = allocators() == at_start
    until("exit")
    h = sys.modules.get("_hotline_agent")
    print("hotline running at exit:", bool(h and h.running()), flush=True)
    print("python allocators as at start:", busy_same, flush=True)
    sys.exit(3)
print("grown", len(keep), flush=True)
until("exit")
h = sys.modules.get("_hotline_agent")
print("hotline running at exit:", bool(h and h.running()), flush=True)
if at_start is not None:
    print("python allocators as at start:", allocators() == at_start, flush=True)
sys.exit(3)
