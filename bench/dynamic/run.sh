#!/usr/bin/env bash
# run.sh [BUILD_DIR] [ROUNDS] — models with open dims, as exporters write
# them (torch's dynamic axes), run at one concrete shape on hetrt and on
# ONNX Runtime 1.30 (bench/perf/node_modules), each beside the same model
# with its input dims fixed (bench/dynamic/gen.py: bert4 at 1x128x768,
# the detector, segmenter and recogniser of tests/models/gen_detector.py).
# Both runtimes read the same input file (ORT through
# bench/quant/compare_ort.js).  One thread, both pinned to CPU 0,
# interleaved per round; prints each round and the best round median of
# each, with hetrt/ORT and open/fixed ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rounds=${2:-3}
dir=$build/bench/dynamic
# a fresh cache folder, as bench/perf/run.py and bench/shipped do
if [ -z "${HETRT_CACHE_DIR:-}" ]; then
  HETRT_CACHE_DIR=$(mktemp -d)
  export HETRT_CACHE_DIR
  trap 'rm -rf "$HETRT_CACHE_DIR"' EXIT
fi
mkdir -p "$dir"
declare -A input best
models=""
while read -r name x; do
  input[$name]=$x
  models="$models $name"
done < <(/usr/bin/python3 "$here/gen.py" "$dir")
for r in $(seq "$rounds"); do
  for m in $models; do
    data=$dir/data/$m
    for form in fixed dyn; do
      h=$(taskset -c 0 "$build/hetrt" bench "$dir/${m}_$form.onnx" --threads 1 --warmup 3 --runs 20 \
            --input "${input[$m]}=$data/test_data_set_0/input_0.pb" | sed -n 's/^median_ms=//p')
      o=$(taskset -c 0 node "$here/../quant/compare_ort.js" "$dir/${m}_$form.onnx" "$data" \
            --threads 1 --warmup 3 --runs 20 --no-output | sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p')
      echo "round $r $m $form: hetrt $h ms, ORT $o ms"
      for k in "h $h" "o $o"; do
        set -- $k
        key=$m.$form.$1
        best[$key]=$(echo "$2 ${best[$key]:-1e9}" | awk '{print ($1 < $2) ? $1 : $2}')
      done
    done
  done
done
for m in $models; do
  echo "$m: fixed hetrt ${best[$m.fixed.h]} ORT ${best[$m.fixed.o]} ms;" \
       "open dims hetrt ${best[$m.dyn.h]} ORT ${best[$m.dyn.o]} ms;" \
       "hetrt/ORT $(echo "${best[$m.fixed.h]} ${best[$m.fixed.o]} ${best[$m.dyn.h]} ${best[$m.dyn.o]}" |
                    awk '{printf "%.2f fixed, %.2f open", $1 / $2, $3 / $4}');" \
       "open/fixed hetrt $(echo "${best[$m.dyn.h]} ${best[$m.fixed.h]}" | awk '{printf "%.2f", $1 / $2}')"
done
