#!/usr/bin/env bash
# gpu-check.sh OUTDIR — the GPU check, run on the GPU machine from the
# working tree with the bundle of scripts/gpu-bundle.sh (HETRT_GPU_BUNDLE,
# default ./hetrt-gpu-bundle.tar.xz).  Unpacks it into OUTDIR, checks glibc
# against the build machine's, finds the CUDA runtime and cuBLASLt of the
# bundle's CUDA major version (a CUDA toolkit, or the Python environment's
# nvidia packages), then: the gpu tests (tests/gpu), the ONNX backend node
# suite with --providers cuda,cpu against the same suite on the CPU (every
# test that passes on the CPU must pass), configs/devices/h200.yaml over
# the real GPU (its facts replaced, the session runs), and the models and
# benchmark of scripts/gpu_models.py.  Logs go to OUTDIR; the last lines say what
# failed.  Exits 1 on the first thing that cannot go on (no bundle, no
# libraries, no device) and on any mismatch.  Budget: under 8 minutes
# (HETRT_GPU_QUICK=1 skips torch.compile).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${1:?usage: gpu-check.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUNDLE=${HETRT_GPU_BUNDLE:-$ROOT/hetrt-gpu-bundle.tar.xz}
PY=${PYTHON:-python3}
status=0
t_start=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - t_start )) s)"; }
stop() { echo "gpu-check: STOPPED: $*"; exit 1; }
fail() { echo "gpu-check: FAILED: $*"; status=1; }

step "unpacking $BUNDLE"
[ -f "$BUNDLE" ] || stop "no bundle at $BUNDLE (make it with scripts/gpu-bundle.sh where the -dev packages are)"
rm -rf "$OUT/hetrt-gpu"
tar -C "$OUT" -xJf "$BUNDLE" || stop "cannot unpack $BUNDLE"
B=$OUT/hetrt-gpu
cat "$B/MANIFEST"
need=$(awk '/^glibc:/{print $2}' "$B/MANIFEST")
have=$(ldd --version 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+$')
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
  stop "this machine has glibc $have, the bundle needs $need or newer"
fi

step "CUDA libraries"
major=$(awk '/^cuda:/{print $2}' "$B/MANIFEST" | cut -d. -f1)
dirs=$(ls -d /usr/local/cuda*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu 2>/dev/null)
site=$("$PY" -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null || true)
for s in $site; do dirs="$dirs $(ls -d "$s"/nvidia/*/lib 2>/dev/null)"; done
found=""
for lib in libcudart.so.$major libcublasLt.so.$major; do
  d=$(for x in $dirs; do [ -e "$x/$lib" ] && { echo "$x"; break; }; done)
  [ -n "$d" ] || stop "no $lib on this machine (looked in: $dirs)"
  echo "$lib: $d"
  found="$found:$d"
done
export LD_LIBRARY_PATH="${found#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v nvidia-smi >/dev/null && nvidia-smi -L
"$B/bin/hetrt" --version || stop "the bundle's hetrt does not start here"

step "gpu tests (tests/gpu)"
HETRT_TEST_DATA="$ROOT/tests/data" "$B/tests/test_cuda_ops" >"$OUT/test_cuda_ops.log" 2>&1
rc=$?
cat "$OUT/test_cuda_ops.log"
[ $rc -eq 77 ] && stop "no usable GPU: $(tail -1 "$OUT/test_cuda_ops.log")"
[ $rc -eq 0 ] || fail "test_cuda_ops (exit $rc, $OUT/test_cuda_ops.log)"

step "ONNX backend node suite: cpu, then cuda,cpu"
suite=$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))' 2>/dev/null)
[ -d "$suite" ] || suite=/usr/share/libonnx-testdata/data/node
if [ -d "$suite" ]; then
  "$B/bin/hetrt" test "$suite" --fork --providers cpu --list-passing "$OUT/node_cpu_passing.txt" >"$OUT/node_cpu.log" 2>&1
  tail -1 "$OUT/node_cpu.log"
  if "$B/bin/hetrt" test "$suite" --fork --providers cuda,cpu --expected "$OUT/node_cpu_passing.txt" >"$OUT/node_cuda.log" 2>&1; then
    tail -1 "$OUT/node_cuda.log"
  else
    tail -3 "$OUT/node_cuda.log"
    fail "backend node suite: tests passing on the CPU fail with cuda,cpu ($OUT/node_cuda.log)"
  fi
else
  fail "no ONNX backend node suite found (onnx package or libonnx-testdata)"
fi

step "a device profile over the GPU (configs/devices/h200.yaml)"
# With a GPU present the profile's keys replace its measured facts: the
# session is an ordinary one (no "cannot run" warning), plan_mlp's MatMuls
# go to cuda, and it runs.
prof=$ROOT/configs/devices/h200.yaml
mlp=$ROOT/tests/data/cuda/plan_mlp.onnx
"$B/bin/partview" "$mlp" --providers cuda,cpu --devices "$prof" >"$OUT/partview_h200.txt" 2>&1 ||
  fail "partview with $prof ($OUT/partview_h200.txt)"
grep -q "cannot run" "$OUT/partview_h200.txt" &&
  fail "the profile stood for an absent GPU although one is present ($OUT/partview_h200.txt)"
grep -qE "mm1 +MatMul +cuda" "$OUT/partview_h200.txt" ||
  fail "plan_mlp's MatMul not on cuda with the profile ($OUT/partview_h200.txt)"
"$B/bin/hetrt" bench "$mlp" --providers cuda,cpu --devices "$prof" --runs 5 >"$OUT/bench_h200.txt" 2>&1 ||
  fail "plan_mlp with $prof does not run ($OUT/bench_h200.txt)"
tail -1 "$OUT/bench_h200.txt"

step "models and benchmark (scripts/gpu_models.py)"
quick=${HETRT_GPU_QUICK:+--quick}
"$PY" "$ROOT/scripts/gpu_models.py" --hetrt "$B/bin/hetrt" --work "$OUT/models" $quick 2>&1 | tee "$OUT/gpu_models.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "models (scripts/gpu_models.py, $OUT/models/gpu_models.log)"

step "done"
[ $status -eq 0 ] && echo "gpu-check: all passed" || echo "gpu-check: something FAILED (above)"
exit $status
