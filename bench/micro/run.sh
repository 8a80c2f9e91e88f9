#!/usr/bin/env bash
# run.sh [BUILD_DIR] [ROUNDS] — the models of gen_models.py on hetrt and on
# ONNX Runtime 1.30 (bench/perf/node_modules), one thread, both pinned to
# CPU 0, interleaved per round (20 timed runs after 3 warm-up runs each);
# prints the best round median of each and their ratio (MODELS: a subset).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rounds=${2:-3}
dir=$build/bench/micro
/usr/bin/python3 "$here/gen_models.py" "$dir"
for m in ${MODELS:-resize_linear resize_nearest f16_cnn f16_elementwise f16_mlp convt_16x16 convt_16x1}; do
  bh=1e9 bo=1e9
  for r in $(seq "$rounds"); do
    h=$(taskset -c 0 "$build/hetrt" bench "$dir/$m.onnx" --threads 1 --warmup 3 --runs 20 |
        sed -n 's/^median_ms=//p')
    o=$(taskset -c 0 node "$here/../perf/ort_bench.js" "$dir/$m.onnx" --threads 1 --warmup 3 --runs 20 |
        sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p')
    bh=$(echo "$h $bh" | awk '{print ($1 < $2) ? $1 : $2}')
    bo=$(echo "$o $bo" | awk '{print ($1 < $2) ? $1 : $2}')
  done
  echo "$m: hetrt $bh ms, ORT $bo ms, hetrt/ORT $(echo "$bh $bo" | awk '{printf "%.2f", $1 / $2}')"
done
