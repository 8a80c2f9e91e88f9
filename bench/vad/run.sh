#!/usr/bin/env bash
# run.sh [BUILD_DIR] [ROUNDS] — the recurrent voice-activity detector of
# gen_vad_model.py (Conv + LSTM inside an If, ~0.25 ms a call) on hetrt
# and on ONNX Runtime 1.30 (bench/perf/node_modules: cd bench/perf && npm
# install --ignore-scripts onnxruntime-node@1.30.0), one thread, both
# pinned to CPU 0, interleaved: per round one `hetrt bench` and one
# ort_bench.js child of 500 runs each; prints each round's medians and
# the best of the rounds with their ratio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rounds=${2:-5}
model=$build/bench/vad.onnx
mkdir -p "$build/bench"
/usr/bin/python3 "$here/gen_vad_model.py" "$model"
best_h=1e9 best_o=1e9
for r in $(seq "$rounds"); do
  h=$(taskset -c 0 "$build/hetrt" bench "$model" --threads 1 --warmup 50 --runs 500 |
      sed -n 's/^median_ms=//p')
  o=$(taskset -c 0 node "$here/../perf/ort_bench.js" "$model" --threads 1 --warmup 50 --runs 500 |
      sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p')
  echo "round $r: hetrt $h ms, ORT $o ms"
  best_h=$(echo "$h $best_h" | awk '{print ($1 < $2) ? $1 : $2}')
  best_o=$(echo "$o $best_o" | awk '{print ($1 < $2) ? $1 : $2}')
done
echo "vad best of $rounds: hetrt $best_h ms, ORT $best_o ms, hetrt/ORT $(echo "$best_h $best_o" | awk '{printf "%.2f", $1 / $2}')"
