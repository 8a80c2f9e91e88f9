#!/usr/bin/env bash
# overlap.sh [BUILD_DIR] — the copy/compute overlap benchmark (bench/overlap.c)
# with bench/overlap.yaml (emu in timed mode): 2 concurrent runs of a
# one-conv model (12 runs in all, so the first copy in and the last copy
# out weigh little) on the sequential and on the streams plan, then
# executor=streams on a 8-micro-batch model, one run at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
mkdir -p "$build/bench"
/usr/bin/python3 "$here/gen_overlap_model.py" "$build/bench/overlap1.onnx" 1
/usr/bin/python3 "$here/gen_overlap_model.py" "$build/bench/overlap8.onnx" 8
for executor in sequential streams; do
  echo "== concurrent runs (2 threads, executor=$executor)"
  "$build/bench_overlap" "$build/bench/overlap1.onnx" "$here/overlap.yaml" 12 concurrent 2 "$executor"
done
echo "== executor=streams, 8 micro-batches per run"
"$build/bench_overlap" "$build/bench/overlap8.onnx" "$here/overlap.yaml" 2 streams
