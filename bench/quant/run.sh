#!/usr/bin/env bash
# run.sh BUILD [RUNS] — int8 QDQ quantization benchmark: hetrt quantize on
# resnet18, resnet50, mobilenet_v2 and bert4 (bench/perf/models), checked in
# ONNX Runtime 1.30 (bench/perf/node_modules) and timed against it.
# Per model:
#   1. quantize with --method percentile (the default) and --method entropy,
#      calibrated on 32 synthetic input sets, evaluated on 16 others
#      (gen_data.py); keep the method whose report has the higher cosine;
#   2. run the kept QDQ model on the 16 evaluation sets in hetrt (`hetrt run`)
#      and in ORT (compare_ort.js, which fails if ORT rejects the model), and
#      compare the outputs in steps of "<output>_scale" (compare.py; limit 2 LSB);
#      above the limit, diverge.py compares every quantized tensor (hetrt, ORT
#      fused, ORT unfused) and names the first one that parts;
#   3. time hetrt fp32, hetrt QDQ, ORT fp32, ORT QDQ on the first evaluation set,
#      one thread, pinned to CPU 0 (taskset -c 0), interleaved in ROUNDS rounds
#      (env, default 3) of RUNS timed runs (default 20; half for resnet50 and
#      bert4) after 3 warm-up runs; the table keeps each one's lowest round median.
#      bert4 is also quantized with --dynamic and timed in hetrt and ORT (a second table).
# hetrt fuses the QDQ groups into QLinearConv/QLinearMatMul/QLinearAdd and
# runs them on oneDNN's int8 primitives (docs/quantize.md).
# Everything goes to bench/quant/out/ (git-ignored; BUILD/hetrt is copied there first); the table is printed last
# and written to out/table.md.  About 5 minutes on the 2-vCPU dev machine.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD [RUNS]}" && pwd)
runs=${2:-20}
rounds=${ROUNDS:-3}
models=${MODELS:-"resnet18 resnet50 mobilenet_v2 mobilenet_v3_large bert4"}
methods="percentile entropy"
py=/usr/bin/python3
out=$here/out
hetrt=$out/hetrt  # a copy: the build may be rebuilt during the run (it links libhetrt statically)
data=$out/data
res=$out/results
src=$here/../perf/models
[ -x "$build/hetrt" ] || { echo "run.sh: no $build/hetrt" >&2; exit 1; }
mkdir -p "$out"
# hetrt's caches (CPU profile, timed kernel choices) in a fresh folder for
# the run unless HETRT_CACHE_DIR is set, as bench/perf/run.py does: no
# choice remembered earlier (or timed while tests ran) decides the kernels
if [ -z "${HETRT_CACHE_DIR:-}" ]; then
  HETRT_CACHE_DIR=$(mktemp -d)
  export HETRT_CACHE_DIR
  trap 'rm -rf "$HETRT_CACHE_DIR"' EXIT
fi
cp "$build/hetrt" "$hetrt"
echo "hetrt: $build/hetrt, built $(date -r "$build/hetrt" '+%Y-%m-%d %H:%M:%S')" | tee "$out/hetrt.txt" >&2
[ -d "$here/../perf/node_modules/onnxruntime-node" ] || {
  echo "run.sh: ONNX Runtime missing: cd bench/perf && npm install --ignore-scripts onnxruntime-node@1.30.0" >&2
  exit 1; }

step() { echo "[$(date +%H:%M:%S)] $*" >&2; }

$py "$here/../perf/gen_models.py" "$src" --models "${models// /,}" >/dev/null || exit 1
step "input sets"
$py "$here/gen_data.py" "$data" --models "${models// /,}" >&2 || exit 1
rm -rf "$res"
mkdir -p "$out/models"

for m in $models; do
  r=$res/$m
  mkdir -p "$r"
  $py -c "import onnx,sys; o=onnx.load(sys.argv[1],load_external_data=False).graph.output[0]
print('[' + ','.join(str(d.dim_value or d.dim_param) for d in o.type.tensor_type.shape.dim) + ']')" \
    "$src/$m.onnx" >"$r/output_shape"
  # 1. quantize
  for meth in $methods; do
    step "$m: quantize --method $meth"
    "$hetrt" quantize "$src/$m.onnx" -o "$out/models/$m.$meth.onnx" --data "$data/$m/calib" \
      --eval-data "$data/$m/eval" --method "$meth" --threads 1 \
      >"$r/quantize.$meth.txt" 2>"$r/quantize.$meth.err" ||
      step "$m: quantize --method $meth FAILED: $(tail -1 "$r/quantize.$meth.err")"
  done
  meth=$($py "$here/compare.py" pick "$r") || { step "$m: no usable quantized model"; continue; }
  echo "$meth" >"$r/method"
  qdq=$out/models/$m.qdq.onnx
  cp "$out/models/$m.$meth.onnx" "$qdq"
  step "$m: kept $meth: $(grep -m1 "output '" "$r/quantize.$meth.txt" | sed 's/^ *//')"
  # 2. hetrt vs ORT on the QDQ model
  step "$m: QDQ outputs, hetrt and ORT"
  rm -rf "$r/out_hetrt" "$r/out_ort" "$r/out_ort_fp32"
  ok=1
  for s in "$data/$m/eval"/test_data_set_*; do
    mkdir -p "$r/out_hetrt/$(basename "$s")"
    "$hetrt" run "$qdq" "$s"/input_*.pb --threads 1 --output-dir "$r/out_hetrt/$(basename "$s")" \
      >/dev/null 2>>"$r/compare.err" || { ok=0; step "$m: hetrt run FAILED on $s"; break; }
  done
  node "$here/compare_ort.js" "$qdq" "$data/$m/eval" --out "$r/out_ort" 2>>"$r/compare.err" ||
    { ok=0; step "$m: ORT FAILED on the QDQ model: $(tail -1 "$r/compare.err")"; }
  node "$here/compare_ort.js" "$src/$m.onnx" "$data/$m/eval" --out "$r/out_ort_fp32" \
    2>>"$r/compare.err" || step "$m: ORT FAILED on the fp32 model"
  if [ $ok = 1 ]; then
    $py "$here/compare.py" outputs --qdq "$qdq" --hetrt "$r/out_hetrt" --ort "$r/out_ort" \
      --ort-fp32 "$r/out_ort_fp32" >"$r/compare.json" 2>>"$r/compare.err" &&
      step "$m: $($py -c "import json,sys; o=json.load(open(sys.argv[1]))['outputs']
print('; '.join('%s: max %.3f LSB (scale %.4g), %d of %d values >= 1 LSB apart' % (x['output'],
      x['max_lsb'], x['scale'], x['values_off_by_1lsb_or_more'], x['values']) for x in o))" \
        "$r/compare.json")" || step "$m: compare FAILED: $(tail -1 "$r/compare.err")"
    if [ -s "$r/compare.json" ] && grep -q '"within_limit": false' "$r/compare.json"; then
      step "$m: more than 2 LSB apart: tensor by tensor (diverge.py, 2 sets) -> $r/diverge.txt"
      $py "$here/diverge.py" "$qdq" "$data/$m/eval" --hetrt "$hetrt" --sets 2 \
        --work "$r/diverge" >"$r/diverge.txt" 2>>"$r/compare.err"
      grep '^first\|^no ' "$r/diverge.txt" >&2
    fi
  fi
done

# bert4 also dynamically quantized (--dynamic: DynamicQuantizeLinear + MatMulInteger),
# its report on the evaluation sets in results/bert4/dynamic.txt
case " $models " in *" bert4 "*)
  step "bert4: quantize --dynamic"
  "$hetrt" quantize "$src/bert4.onnx" -o "$out/models/bert4.dynamic.onnx" --dynamic \
    --data "$data/bert4/eval" --threads 1 >"$res/bert4/dynamic.txt" 2>"$res/bert4/dynamic.err" ||
    step "bert4: quantize --dynamic FAILED: $(tail -1 "$res/bert4/dynamic.err")";;
esac

# 3. timing, interleaved: each round runs every model's four variants in turn
time_hetrt() {  # model input runs
  taskset -c 0 "$hetrt" bench "$1" "$2" --threads 1 --warmup 3 --runs "$3" 2>/dev/null |
    sed -n 's/^median_ms=//p'
}
time_ort() {  # model input-dir runs
  taskset -c 0 node "$here/compare_ort.js" "$1" "$2" --no-output --threads 1 --warmup 3 \
    --runs "$3" 2>/dev/null | sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p'
}
for rnd in $(seq "$rounds"); do
  for m in $models; do
    r=$res/$m
    [ -f "$r/method" ] || continue
    n=$runs
    case $m in resnet50|bert4) n=$(( (runs + 1) / 2 ));; esac
    in=$data/$m/eval/test_data_set_0/input_0.pb
    variants="hetrt_fp32 hetrt_qdq ort_fp32 ort_qdq"
    [ -f "$out/models/$m.dynamic.onnx" ] && variants="$variants hetrt_dyn ort_dyn"
    for v in $variants; do
      f=$src/$m.onnx
      case $v in *_qdq) f=$out/models/$m.qdq.onnx;; *_dyn) f=$out/models/$m.dynamic.onnx;; esac
      case $v in hetrt_*) ms=$(time_hetrt "$f" "$in" "$n");; *) ms=$(time_ort "$f" "$data/$m/eval" "$n");; esac
      echo "$v $rnd ${ms:--}" >>"$r/times.tsv"
    done
    step "round $rnd $m: $(awk -v r="$rnd" '$2 == r {printf "%s %s ms  ", $1, $3}' "$r/times.tsv")"
  done
done

$py "$here/compare.py" table "$res" $models | tee "$out/table.md"
