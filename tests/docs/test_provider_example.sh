#!/usr/bin/env bash
# test_provider_example.sh — examples/provider as a provider writer builds
# it: configured out of tree with -DCMAKE_PREFIX_PATH=PREFIX (an installed
# hetrt: find_package(hetrt 0.1), public headers only), built with
# warnings, and its driver run on examples/provider/model.onnx: the toy
# must run Relu and Add, the CPU Sigmoid, under both executors, with
# outputs equal to the driver's reference (the driver exits 1 otherwise).
# Usage: test_provider_example.sh PREFIX   (default: $HETRT_PREFIX)
set -u
PREFIX=${1:-${HETRT_PREFIX:?usage: test_provider_example.sh PREFIX}}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
EXAMPLE=$SRC/examples/provider
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ -f "$PREFIX/include/hetrt/provider.h" ] ||
  { echo "FAILED: no hetrt installed in $PREFIX (run the install_prefix test)"; exit 1; }
if ! grep -q 'het_graph_get_node' "$PREFIX/include/hetrt/provider.h"; then
  echo "FAILED: $PREFIX/include/hetrt/provider.h has no graph accessors" \
       "(het_graph_get_node, ...): an out-of-tree provider cannot read the graph"
  exit 1
fi
if ! cmake -S "$EXAMPLE" -B "$WORK/build" -DCMAKE_PREFIX_PATH="$PREFIX" \
       -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-Werror" \
       -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$WORK/log" 2>&1 ||
   ! cmake --build "$WORK/build" >>"$WORK/log" 2>&1; then
  tail -30 "$WORK/log"
  echo "FAILED: examples/provider does not build against $PREFIX"
  exit 1
fi
# The example sees hetrt's public headers only, from PREFIX: no include
# folder of the checkout but its own (PREFIX may lie inside the checkout,
# as build/install-test does).
bad=$(sed -n 's/.*"command": "\(.*\)".*/\1/p' "$WORK/build/compile_commands.json" |
      tr ' ' '\n' | awk 'p { print; p = 0; next } /^-isystem$/ { p = 1; next }
                         sub(/^-I/, "") || sub(/^-isystem/, "")' | grep -v '^$' |
      grep "^$SRC" | grep -v "^$EXAMPLE" | grep -v "^$(cd "$PREFIX" && pwd)" | sort -u)
[ -z "$bad" ] || { echo "FAILED: the example includes from the checkout: $bad"; exit 1; }
grep -q -- "$PREFIX/include" "$WORK/build/compile_commands.json" ||
  { echo "FAILED: the example does not include $PREFIX/include"; exit 1; }
"$WORK/build/toy_driver" "$EXAMPLE/model.onnx" >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
[ "$rc" -eq 0 ] || { echo "FAILED: toy_driver exited with $rc"; exit 1; }
grep -Eq '^  relu +Relu +toy ' "$WORK/out" || { echo "FAILED: relu not listed on toy"; exit 1; }
echo "provider_example: ok"
