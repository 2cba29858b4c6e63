#!/bin/sh
# check_real_gpu.sh BUILD_DIR [PYTHON]: manual check of profiler/nvml.c on a
# machine with an NVIDIA GPU and driver (not part of ctest). A program keeps
# the GPU busy on one line (torch or cupy matmuls; without either, only GPU
# memory through libcuda's cuMemAlloc) and idles on the next; the profile must
# show gpu_percent high on the first line, low on the second, and gpu_mb
# about the memory it holds. Prints the per-line GPU fields and PASS/FAIL.
set -eu
BUILD=${1:?usage: check_real_gpu.sh BUILD_DIR [PYTHON]}
PY=${2:-python3}
W=$(mktemp -d)
cat > "$W/gpu_prog.py" <<'PYEOF'
import ctypes, time
def busy(seconds):
    try:
        import torch
        x = torch.randn(8192, 8192, device="cuda")  # ~256 MB
        t0 = time.time()
        while time.time() - t0 < seconds:
            y = x @ x                                  # LBUSY
        torch.cuda.synchronize()
        return "torch", x
    except ImportError:
        pass
    try:
        import cupy
        x = cupy.random.rand(8192, 8192, dtype=cupy.float32)
        t0 = time.time()
        while time.time() - t0 < seconds:
            y = x @ x                                  # LBUSY
        cupy.cuda.Device().synchronize()
        return "cupy", x
    except ImportError:
        pass
    cu = ctypes.CDLL("libcuda.so.1")
    ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
    assert cu.cuInit(0) == 0 and cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0
    assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 30)) == 0
    time.sleep(seconds)                                # LBUSY
    return "libcuda", ptr
kind, keep = busy(4.0)
print("workload:", kind)
time.sleep(3.0)                                        # LIDLE
PYEOF
"$BUILD/hotline" run --python "$PY" --json "$W/out.json" "$W/gpu_prog.py"
"$PY" - "$W" <<'PYEOF'
import json, os, sys
w = sys.argv[1]
src = open(os.path.join(w, "gpu_prog.py")).read().splitlines()
prof = json.load(open(os.path.join(w, "out.json")))
fo = prof["files"][os.path.realpath(os.path.join(w, "gpu_prog.py"))]
busy = [i + 1 for i, l in enumerate(src) if "# LBUSY" in l]
idle = [i + 1 for i, l in enumerate(src) if "# LIDLE" in l][0]
get = lambda l, k: fo["lines"].get(str(l), {}).get(k, 0.0)
for l in busy + [idle]:
    print("line %d: gpu_percent %.1f gpu_mb %.1f" % (l, get(l, "gpu_percent"), get(l, "gpu_mb")))
bp = max(get(l, "gpu_percent") for l in busy)
bm = max(get(l, "gpu_mb") for l in busy)
ok = bm > 200 and get(idle, "gpu_percent") < 20
if any(get(l, "gpu_percent") for l in busy):
    ok = ok and bp > 30
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PYEOF
