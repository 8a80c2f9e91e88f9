#!/usr/bin/env bash
# test_deb.sh — the Debian packages as a user installs them (a step of
# scripts/test.sh, not a CTest test: it installs into the system).
#   test_deb.sh BUILD
# Builds the packages with CPack in BUILD, installs hetrt, hetrt-dev and
# (when built) python3-hetrt with `apt-get install ./hetrt_*.deb ...`, runs
# the installed `hetrt --version`, builds examples/consumer against the
# system install (find_package without a prefix, and pkg-config) and runs
# it, runs the README's Python line, then removes the packages again.  Needs root or sudo.
set -u
BUILD=$(cd "${1:?usage: test_deb.sh BUILD}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "test_deb.sh: FAILED: needs root or passwordless sudo to install packages"
    exit 1
  fi
fi
WORK=$(mktemp -d)
# the sessions below keep their caches here, not in the user's ~/.cache/hetrt
export HETRT_CACHE_DIR=$WORK/cache
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
cleanup() {
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq python3-hetrt hetrt-dev hetrt >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

rm -f "$BUILD"/hetrt*_*.deb
(cd "$BUILD" && cpack -G DEB) >"$WORK/log" 2>&1 || { cat "$WORK/log"; echo "FAILED: cpack"; exit 1; }
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
RUNTIME="$BUILD/hetrt_${VERSION}_amd64.deb"
DEV="$BUILD/hetrt-dev_${VERSION}_amd64.deb"
PYTHON="$BUILD/python3-hetrt_${VERSION}_amd64.deb"
PACKAGES=("$RUNTIME" "$DEV")
for f in "${PACKAGES[@]}"; do
  [ -f "$f" ] || { echo "FAILED: cpack wrote no $(basename "$f")"; ls "$BUILD"/*.deb; exit 1; }
done
# python3-hetrt exists when the build has the Python package.
[ -f "$PYTHON" ] && PACKAGES+=("$PYTHON")
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >"$WORK/log" 2>&1; then
  cat "$WORK/log"
  echo "FAILED: apt-get install ${PACKAGES[*]##*/}"
  exit 1
fi
out=$(/usr/bin/hetrt --version 2>&1) || fail "/usr/bin/hetrt --version: $out"
echo "installed: $out"
case "$out" in *"$VERSION"*) ;; *) fail "hetrt --version does not say $VERSION: $out" ;; esac

MODEL=/usr/share/libonnx-testdata/data/node/test_relu/model.onnx
if cmake -S "$SRC/examples/consumer" -B "$WORK/cmake" >"$WORK/log" 2>&1 &&
   cmake --build "$WORK/cmake" >>"$WORK/log" 2>&1; then
  "$WORK/cmake/consumer" "$MODEL" >"$WORK/out" 2>&1 && grep -q '^ok:' "$WORK/out" ||
    { fail "find_package consumer against /usr"; cat "$WORK/out"; }
else
  fail "find_package consumer against /usr does not build"; tail -20 "$WORK/log"
fi
# shellcheck disable=SC2046  # pkg-config prints words
if cc -std=c11 -o "$WORK/pc_consumer" "$SRC/examples/consumer/consumer.c" \
      $(pkg-config --cflags --libs hetrt) >"$WORK/log" 2>&1; then
  "$WORK/pc_consumer" "$MODEL" >"$WORK/out" 2>&1 && grep -q '^ok:' "$WORK/out" ||
    { fail "pkg-config consumer against /usr"; cat "$WORK/out"; }
else
  fail "pkg-config consumer against /usr does not build"; cat "$WORK/log"
fi
if [ -f "$PYTHON" ]; then
  # the README's Python line, from a folder outside the checkout
  out=$(cd "$WORK" && /usr/bin/python3 -c "
import numpy as np, hetrt
x = np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 4, 5)
s = hetrt.InferenceSession('$MODEL', providers=['emu', 'cpu'],
                           devices=['/usr/share/hetrt/configs/devices/npu.yaml'])
y = s.run(None, {'x': x})[0]
assert (y == np.maximum(x, 0)).all()
print(hetrt.__file__, y.shape)" 2>&1) || fail "python3-hetrt: $out"
  echo "python3-hetrt: $out"
fi
if [ "$failures" -ne 0 ]; then
  echo "test_deb.sh: $failures failure(s)"
  exit 1
fi
echo "test_deb.sh: ok (${PACKAGES[*]##*/} installed, used and removed)"
