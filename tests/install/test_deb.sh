#!/usr/bin/env bash
# test_deb.sh — the Debian packages as a user installs them (a step of
# scripts/test.sh, not a CTest test: it installs into the system).
#   test_deb.sh BUILD
# Builds the packages with CPack in BUILD, installs hetrt and hetrt-dev
# with `apt-get install ./hetrt_*.deb ./hetrt-dev_*.deb`, runs the
# installed `hetrt --version` and builds examples/consumer against the
# system install (find_package without a prefix, and pkg-config), runs it,
# then removes the packages again.  Needs root or sudo.
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
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
cleanup() {
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq hetrt-dev hetrt >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

rm -f "$BUILD"/hetrt*_*.deb
(cd "$BUILD" && cpack -G DEB) >"$WORK/log" 2>&1 || { cat "$WORK/log"; echo "FAILED: cpack"; exit 1; }
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
RUNTIME="$BUILD/hetrt_${VERSION}_amd64.deb"
DEV="$BUILD/hetrt-dev_${VERSION}_amd64.deb"
for f in "$RUNTIME" "$DEV"; do
  [ -f "$f" ] || { echo "FAILED: cpack wrote no $(basename "$f")"; ls "$BUILD"/*.deb; exit 1; }
done
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$RUNTIME" "$DEV" >"$WORK/log" 2>&1; then
  cat "$WORK/log"
  echo "FAILED: apt-get install $(basename "$RUNTIME") $(basename "$DEV")"
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
if [ "$failures" -ne 0 ]; then
  echo "test_deb.sh: $failures failure(s)"
  exit 1
fi
echo "test_deb.sh: ok (hetrt and hetrt-dev $VERSION installed, used and removed)"
