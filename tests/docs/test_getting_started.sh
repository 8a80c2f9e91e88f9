#!/usr/bin/env bash
# test_getting_started.sh — docs/getting-started.md as a reader follows it,
# against an installed hetrt: its C block must be tests/docs/getting_started.c
# (check_snippets.py), and its `run:` blocks run in order in an empty folder
# (with the checkout's tests/ beside them) with PREFIX's tools on PATH,
# pkg-config and the loader pointed at PREFIX, and CONFIGS at its device
# profiles: the program is compiled with `pkg-config --cflags --libs hetrt`
# and run on the CPU and split across emu and cpu, then hetrt bench, hetrt
# run and partview.  The Python block runs when PREFIX has the package
# (with hetrt.InferenceSession), and must with HETRT_DOCS_PYTHON=required.
# Then what they printed and wrote is checked.
# Usage: test_getting_started.sh PREFIX   (default: $HETRT_PREFIX)
# Skips (77) without python3's onnx and numpy, or without pkg-config.
set -u
PREFIX=${1:-${HETRT_PREFIX:?usage: test_getting_started.sh PREFIX}}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=${HETRT_PYTHON:-/usr/bin/python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: $PY lacks onnx or numpy"; exit 77
fi
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
LIB=$(ls -d "$PREFIX"/lib*/libhetrt.so 2>/dev/null | head -1)
[ -n "$LIB" ] || { echo "FAILED: no hetrt installed in $PREFIX (run install_prefix)"; exit 1; }
LIBDIR=$(dirname "$LIB")

# The program is clean under warnings, against the installed header.
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$PREFIX/include" \
   "$SRC/tests/docs/getting_started.c" || fail "getting_started.c has warnings"
# HETRT_DOCS_PYTHON=required (the build has the Python package): the
# Python block must run; otherwise it runs when the prefix has the package.
NEEDS=hetrt.InferenceSession
[ "${HETRT_DOCS_PYTHON:-}" = required ] && NEEDS=""
mkdir -p "$WORK/run"
ln -s "$SRC/tests" "$WORK/run/tests"
PATH=$PREFIX/bin:$PATH PKG_CONFIG_PATH=$LIBDIR/pkgconfig LD_LIBRARY_PATH=$LIBDIR \
CONFIGS=$PREFIX/share/hetrt/configs PYTHONPATH=$PREFIX/lib/python3/dist-packages \
  "$PY" "$SRC/tests/docs/check_snippets.py" --root "$SRC" --run "$WORK/run" \
    --python "$PY" --python-needs "$NEEDS" "$SRC/docs/getting-started.md" >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
[ "$rc" -eq 0 ] || { echo "FAILED: the page's blocks (exit $rc)"; exit 1; }

out=$WORK/out
grep -q "providers built: .*emu" "$out" || fail "getting_started did not print the providers"
grep -Eq '^  erf1 +Erf +cpu ' "$out" || fail "getting_started: erf1 not on cpu"
grep -Eq '^  [a-z_0-9]+ +(Conv|FusedConv|MaxPool|GlobalAveragePool) +emu ' "$out" ||
  fail "getting_started: no convolution-block node on emu"
grep -q '^estimated latency: cost ' "$out" || fail "no report from getting_started or --explain"
[ "$(grep -c '^median_ms=' "$out")" -eq 2 ] || fail "the two hetrt bench runs did not finish"
[ -s "$WORK/run/out/output_0.pb" ] || fail "hetrt run wrote no out/output_0.pb"
head -c 15 "$WORK/run/cnn.html" 2>/dev/null | grep -q '<!DOCTYPE html>' ||
  fail "partview wrote no cnn.html"
[ "$failures" -eq 0 ] && echo "getting_started: all checks passed" || echo "getting_started: $failures failures"
[ "$failures" -eq 0 ]
