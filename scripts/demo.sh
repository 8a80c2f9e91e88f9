#!/usr/bin/env bash
# demo.sh — from a fresh Debian 12 machine to a model split across devices:
# installs dependencies, builds (Release, ./build), generates the bundled
# default model (a small CNN, scripts/gen-default-model.py) if missing, then
#   1. runs it with `hetrt run` on two providers — the CUDA GPU and the CPU
#      when a GPU and the CUDA plugin are there, else `emu` (the emulated
#      accelerator, configured as a small NPU by configs/devices/npu.yaml:
#      fast convolutions, few op types, a slow link) and the CPU — and prints
#      where each node ran and why;
#   2. writes the placement report with `partview` as text, DOT, PNG and
#      HTML, and a Chrome trace of five traced runs (`hetrt profile`), into
#      one folder (demo-out/, or $HETRT_DEMO_DIR) and says how to open them;
#   3. times the model on the CPU alone with a short `hetrt bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
OUT=${HETRT_DEMO_DIR:-demo-out}
read -r -a EXTRA <<<"${HETRT_CMAKE_ARGS:-}"   # extra configure arguments, if any

echo "== installing dependencies"
bash scripts/install-deps.sh

echo "== configuring and building (Release, build/)"
LOG=$(mktemp)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}" >"$LOG" 2>&1 || { cat "$LOG"; exit 1; }
cmake --build build -j"$JOBS" --target hetrt_cli partview >"$LOG" 2>&1 || { cat "$LOG"; exit 1; }
rm -f "$LOG"

MODEL=models/generated/default.onnx
INPUT=models/generated/default_input.pb
if [ ! -f "$MODEL" ] || [ ! -f "$INPUT" ]; then
  echo "== generating the default model ($MODEL)"
  /usr/bin/python3 scripts/gen-default-model.py models/generated
fi

if [ -f build/libhetrt_cuda.so ] && nvidia-smi -L >/dev/null 2>&1; then
  PLACE=(--providers cuda,cpu)
  WHERE="the CUDA GPU and the CPU"
else
  PLACE=(--providers emu,cpu --devices configs/devices/npu.yaml)
  WHERE="emu (an emulated NPU: configs/devices/npu.yaml) and the CPU"
fi
mkdir -p "$OUT"

echo "== hetrt run $MODEL on $WHERE"
echo "   (every node: where it ran and why; Copy nodes move data between memories)"
build/hetrt run "$MODEL" "$INPUT" "${PLACE[@]}" --threads "$JOBS" --verbose

echo "== placement report and trace -> $OUT/"
build/partview "$MODEL" "${PLACE[@]}" --format text -o "$OUT/placement.txt"
build/partview "$MODEL" "${PLACE[@]}" --format html -o "$OUT/placement.html"
build/partview "$MODEL" "${PLACE[@]}" --format dot -o "$OUT/placement.dot"
if command -v dot >/dev/null; then
  dot -Tpng "$OUT/placement.dot" -o "$OUT/placement.png"
else
  echo "   (graphviz's dot is not installed: no PNG)"
fi
build/hetrt profile "$MODEL" "${PLACE[@]}" --input "image=$INPUT" --runs 5 \
  --threads "$JOBS" -o "$OUT/trace.json" >"$OUT/profile.txt"
sed -n '/^subgraphs/,$p' "$OUT/placement.txt"   # the summary; per-node rows are above
echo
echo "   $OUT/placement.txt   the report above, in full"
echo "   $OUT/placement.html  open in a browser: the graph coloured by provider, click a node for its reason"
[ -f "$OUT/placement.png" ] && echo "   $OUT/placement.png   the same graph as an image (DOT source: placement.dot)"
echo "   $OUT/trace.json      open in https://ui.perfetto.dev or chrome://tracing: one lane per device stream"
echo "   $OUT/profile.txt     time per op type and provider over the traced runs"

echo "== hetrt bench $MODEL on the CPU alone (generated input, batch N=4)"
build/hetrt bench "$MODEL" --dim N=4 --warmup 2 --runs 10 --threads "$JOBS"
