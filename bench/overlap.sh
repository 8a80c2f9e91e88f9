#!/usr/bin/env bash
# overlap.sh [BUILD_DIR] — the copy/compute overlap benchmark: generates the
# model into BUILD_DIR/bench and runs bench_overlap on it with
# bench/overlap.yaml (emu in timed mode), 2 concurrent runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
mkdir -p "$build/bench"
/usr/bin/python3 "$here/gen_overlap_model.py" "$build/bench/overlap.onnx"
"$build/bench_overlap" "$build/bench/overlap.onnx" "$here/overlap.yaml" 12 2
