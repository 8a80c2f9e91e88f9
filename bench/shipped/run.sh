#!/usr/bin/env bash
# run.sh [BUILD_DIR] [ROUNDS] — the kinds of model applications ship that
# the torchvision bench (bench/perf) lacks, on hetrt and on ONNX Runtime
# 1.30 (bench/perf/node_modules: cd bench/perf && npm install
# --ignore-scripts onnxruntime-node@1.30.0): the DBNet-like detector
# (1x3x640x640), the CRNN-like recogniser with its bidirectional LSTMs
# (1x1x32x320) and the U-Net-like segmenter (1x3x512x512) of
# tests/models/gen_detector.py, the segmenter converted to fp16
# (bench/micro/to_fp16.py), and the voice-activity detector of
# bench/vad (Conv + LSTM inside an If).  One thread, both runtimes pinned
# to CPU 0, interleaved per round; prints each round and the best round
# median of each with their ratio (hetrt / ORT).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rounds=${2:-3}
dir=$build/bench/shipped
# hetrt's caches (CPU profile, timed kernel choices) in a fresh folder for
# the run unless HETRT_CACHE_DIR is set, as bench/perf/run.py does: no
# choice remembered earlier (or timed while tests ran) decides the kernels
if [ -z "${HETRT_CACHE_DIR:-}" ]; then
  HETRT_CACHE_DIR=$(mktemp -d)
  export HETRT_CACHE_DIR
  trap 'rm -rf "$HETRT_CACHE_DIR"' EXIT
fi
mkdir -p "$dir"
/usr/bin/python3 "$here/../../tests/models/gen_detector.py" "$dir" >/dev/null
/usr/bin/python3 "$here/fix_dims.py" "$dir/detector.onnx" "$dir/detector_640.onnx" 1x3x640x640
/usr/bin/python3 "$here/fix_dims.py" "$dir/recognizer.onnx" "$dir/recognizer_320.onnx" 1x1x32x320
/usr/bin/python3 "$here/fix_dims.py" "$dir/segmenter.onnx" "$dir/segmenter_512.onnx" 1x3x512x512
/usr/bin/python3 "$here/../micro/to_fp16.py" "$dir/segmenter_512.onnx" "$dir/segmenter_512_fp16.onnx"
/usr/bin/python3 "$here/../vad/gen_vad_model.py" "$dir/vad.onnx" >/dev/null
models="detector_640 recognizer_320 segmenter_512 segmenter_512_fp16 vad"
declare -A bh bo
for m in $models; do bh[$m]=1e9; bo[$m]=1e9; done
for r in $(seq "$rounds"); do
  for m in $models; do
    runs=20; [ "$m" = vad ] && runs=500
    h=$(taskset -c 0 "$build/hetrt" bench "$dir/$m.onnx" --threads 1 --warmup 3 --runs $runs |
        sed -n 's/^median_ms=//p')
    o=$(taskset -c 0 node "$here/../perf/ort_bench.js" "$dir/$m.onnx" --threads 1 --warmup 3 --runs $runs |
        sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p')
    echo "round $r $m: hetrt $h ms, ORT $o ms"
    bh[$m]=$(echo "$h ${bh[$m]}" | awk '{print ($1 < $2) ? $1 : $2}')
    bo[$m]=$(echo "$o ${bo[$m]}" | awk '{print ($1 < $2) ? $1 : $2}')
  done
done
for m in $models; do
  echo "$m: hetrt ${bh[$m]} ms, ORT ${bo[$m]} ms, hetrt/ORT $(echo "${bh[$m]} ${bo[$m]}" | awk '{printf "%.2f", $1 / $2}')"
done
