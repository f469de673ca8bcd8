#!/usr/bin/env bash
# The static plan of the CUDA kernels without a device: compiles one .cu file for
# sm_90 with `-Xptxas -v -lineinfo` (device code only: a cubin) and prints, per kernel, the
# registers, spill stores / loads, stack frame and static shared memory ptxas reports, as CSV.
# With SITES=1 it also disassembles the cubin (nvdisasm, line info) and lists, for the kernels
# matching SITES_KERNEL, the source lines of every local-memory access (STL / LDL: spills and
# local arrays) and the count of warp shuffles (SHFL) and shared-memory accesses (LDS / STS).
# nvdisasm / cuobjdump are not part of this CUDA image: `pip install nvidia-cuda-nvdisasm` puts
# nvdisasm in site-packages (found below), or set NVDISASM.
#
# usage: bash bench/perf/ptxas_plan.sh [file.cu]            (default cuda/pbd_step.cu)
#        SITES=1 SITES_KERNEL='lm_warp_kernel<float, 16>' bash bench/perf/ptxas_plan.sh
# env:   NVCC (nvcc), ARCH (sm_90), CUBIN (kept there when set), NVDISASM, PTXAS_LOG (parse this saved
#        nvcc ... -Xptxas -v output instead of compiling; the header's commit is then this tree's)
# Rows: each kernel, then "<kernel> > body_pair_*" for its __noinline__ callees (own frame, spills).
# The warp kernel has no static shared memory (static_smem_bytes 0): its per-trajectory dynamic
# shared memory (cuda/pbd_step.cu WarpSmem: lm_local_size, ints, views, step constants) is printed by
# `bigstep-bench gpu-speedup --work-model` (smem_per_traj_bytes) and by the run-time plan.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${1:-cuda/pbd_step.cu}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
CUBIN=${CUBIN:-$(mktemp --suffix=.cubin)}
if [ -n "${PTXAS_LOG:-}" ]; then  # a saved log: parse it, compile nothing
  LOG=$(mktemp)
  cp "$PTXAS_LOG" "$LOG"
else
  LOG=$(mktemp)
  "$NVCC" -I. -isystem=/usr/include/eigen3 -O3 -DNDEBUG -arch="$ARCH" --expt-relaxed-constexpr -std=c++17 \
    -lineinfo -x cu -cubin "$SRC" -o "$CUBIN" -Xptxas -v > "$LOG" 2>&1 || { cat "$LOG"; exit 1; }
fi
echo "# bench/perf/ptxas_plan.sh $SRC, $ARCH, $("$NVCC" --version | tail -1), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- cuda solvers || echo '+dirty')"
python3 - "$LOG" <<'PY'
import re, subprocess, sys
KEEP = re.compile(r"^(lm_|pbfd_|compact_|count_|release_)")  # the project's kernels (not Thrust / CUB)
# the __noinline__ device functions the kernels call (BIGSTEP_BODY_PAIR_FN): their own frames and
# spills, rows named "<kernel> > <function>" (ptxas reports no register count for them)
CALLEE = re.compile(r"^team_detail::body_pair_")
def row(name):
    return {"kernel": name, "stack": 0, "spill_st": 0, "spill_ld": 0, "regs": 0, "smem": 0}
def demangle(mangled):
    name = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True).stdout.strip()
    name = re.sub(r"bigstep::|\(anonymous namespace\)::", "", name)
    return re.sub(r"^void |\(.*$", "", name)
rows, entry, cur = [], None, None
for line in open(sys.argv[1]):
    m = re.search(r"Compiling entry function '(\S+)'", line)
    if m:
        name = demangle(m.group(1))
        entry = row(name) if KEEP.search(name) else None
        if entry:
            rows.append(entry)
        cur = entry
        continue
    if entry is None:
        continue
    # why per block: each "Function properties for F" line heads F's own frame and spills; a
    # kernel's callees follow it, and were read as the kernel's before (a 0-spill callee hid the
    # FP32 warp kernel's 108 B spill stores in results/ptxas_body_pairs.csv's noinline rows)
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        name = demangle(m.group(1))
        if name == entry["kernel"]:
            cur = entry
        elif CALLEE.search(name):
            cur = row(entry["kernel"] + " > " + name.replace("team_detail::", ""))
            rows.append(cur)
        else:
            cur = None
        continue
    if cur is None:
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m:
        cur["stack"], cur["spill_st"], cur["spill_ld"] = map(int, m.groups())
    m = re.search(r"Used (\d+) registers", line)
    if m:
        entry["regs"] = int(m.group(1))
        s = re.search(r"(\d+) bytes smem", line)
        entry["smem"] = int(s.group(1)) if s else 0
print("kernel,registers,spill_store_bytes,spill_load_bytes,stack_frame_bytes,static_smem_bytes")
for r in rows:
    print('"%s",%d,%d,%d,%d,%d' % (r["kernel"], r["regs"], r["spill_st"], r["spill_ld"], r["stack"], r["smem"]))
PY
if [ "${SITES:-0}" = 1 ]; then
  DIS=${NVDISASM:-$(command -v nvdisasm || python3 -c "import nvidia,os;print(os.path.join(list(nvidia.__path__)[0],'cu13/bin/nvdisasm'))")}
  "$DIS" -g -c "$CUBIN" > "$CUBIN.sass"
  python3 - "$CUBIN.sass" "${SITES_KERNEL:-lm_warp_kernel}" <<'PY'
import collections, re, subprocess, sys
want = sys.argv[2].replace(" ", "")
fn, loc = None, None
local, shfl, shared = collections.Counter(), collections.Counter(), collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"\s*\.text\.(\S+):", line)
    if m:
        name = subprocess.run(["c++filt"], input=m.group(1), capture_output=True, text=True).stdout.strip()
        name = re.sub(r"bigstep::|\(anonymous namespace\)::", "", name)
        name = re.sub(r"^void |\(.*$", "", name)
        fn = name if want in name.replace(" ", "") else None
        continue
    if fn is None:
        continue
    m = re.search(r'//## File "([^"]+)", line (\d+)', line)
    if m:
        loc = "%s:%s" % (re.sub(r"^.*/(cuda|solvers|core)/", r"\1/", m.group(1)), m.group(2))
        continue
    op = re.search(r"\b(STL|LDL|SHFL|LDS|STS)(\.\S+)?\s", line)
    if op:
        k = op.group(1)
        if k in ("STL", "LDL"):
            local[(loc, k)] += 1
        elif k == "SHFL":
            shfl[fn] += 1
        else:
            shared[(fn, k)] += 1
print("# local-memory instructions (STL / LDL) by source line, kernels matching '%s'" % sys.argv[2])
for (l, k), n in sorted(local.items(), key=lambda x: -x[1]):
    print("%s,%s,%d" % (l, k, n))
print("# SHFL per kernel: " + "; ".join("%s %d" % (f, n) for f, n in shfl.items()))
print("# LDS / STS: " + "; ".join("%s %s %d" % (f, k, n) for (f, k), n in shared.items()))
PY
fi
rm -f "$LOG"
