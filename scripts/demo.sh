#!/usr/bin/env bash
# demo.sh — from a fresh Debian 12 machine to a model running on hetrt:
# installs dependencies, builds (Release, ./build), generates the bundled
# default model (a small CNN, scripts/gen-default-model.py) if missing, and
# runs it with `hetrt run`, showing outputs and where each node ran, then a
# short `hetrt bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
read -r -a EXTRA <<<"${HETRT_CMAKE_ARGS:-}"   # extra configure arguments, if any

echo "== installing dependencies"
bash scripts/install-deps.sh

echo "== configuring and building (Release, build/)"
LOG=$(mktemp)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}" >"$LOG" 2>&1 || { cat "$LOG"; exit 1; }
cmake --build build -j"$JOBS" --target hetrt_cli >"$LOG" 2>&1 || { cat "$LOG"; exit 1; }
rm -f "$LOG"

MODEL=models/generated/default.onnx
INPUT=models/generated/default_input.pb
if [ ! -f "$MODEL" ] || [ ! -f "$INPUT" ]; then
  echo "== generating the default model ($MODEL)"
  /usr/bin/python3 scripts/gen-default-model.py models/generated
fi

echo "== hetrt run $MODEL $INPUT --verbose"
build/hetrt run "$MODEL" "$INPUT" --threads "$JOBS" --verbose

echo "== hetrt bench $MODEL (generated input, batch N=4)"
build/hetrt bench "$MODEL" --dim N=4 --warmup 2 --runs 10 --threads "$JOBS"
