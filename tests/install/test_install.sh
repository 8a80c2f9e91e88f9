#!/usr/bin/env bash
# test_install.sh — the installed hetrt as a user meets it.
#   test_install.sh prefix BUILD PREFIX
#       cmake --install BUILD into PREFIX (fresh) and checks what lands there
#       (headers, libhetrt.so with its SONAME and no CUDA, libhetrt.a, the
#       tools, the configs, hetrtConfig.cmake, hetrt.pc) and that the
#       installed `hetrt --version` runs.
#   test_install.sh consumer SRC PREFIX
#       builds examples/consumer out of tree against PREFIX three ways —
#       find_package(hetrt) with hetrt::hetrt, with hetrt::hetrt_static, and
#       `pkg-config --cflags --libs hetrt` — and runs each on the backend
#       suite's test_relu model.
set -u
MODE=${1:?usage: test_install.sh prefix BUILD PREFIX | consumer SRC PREFIX}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

case "$MODE" in
prefix)
  BUILD=$2 PREFIX=$3
  rm -rf "$PREFIX"
  cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/log" 2>&1 ||
    { cat "$WORK/log"; echo "FAILED: cmake --install"; exit 1; }
  LIB=$(ls -d "$PREFIX"/lib*/libhetrt.so 2>/dev/null | head -1)
  [ -n "$LIB" ] || { echo "FAILED: no libhetrt.so under $PREFIX/lib*"; exit 1; }
  LIBDIR=$(dirname "$LIB")
  for f in include/hetrt/hetrt.h include/hetrt/provider.h include/hetrt/quantize.h \
           bin/hetrt bin/partview share/hetrt/configs/devices/npu.yaml; do
    [ -e "$PREFIX/$f" ] || fail "$f not installed"
  done
  for f in libhetrt.a pkgconfig/hetrt.pc cmake/hetrt/hetrtConfig.cmake \
           cmake/hetrt/hetrtConfigVersion.cmake cmake/hetrt/hetrtTargets.cmake; do
    [ -e "$LIBDIR/$f" ] || fail "$LIBDIR/$f not installed"
  done
  soname=$(readelf -d "$LIB" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  case "$soname" in
    libhetrt.so.[0-9]*) [ -e "$LIBDIR/$soname" ] || fail "SONAME $soname has no file" ;;
    *) fail "libhetrt.so SONAME is '$soname'" ;;
  esac
  if readelf -d "$LIB" | grep -qE 'libcuda|libcublas|libcudnn'; then
    fail "libhetrt.so links CUDA"
  fi
  if "$PREFIX/bin/hetrt" --version >"$WORK/out" 2>&1; then
    grep -q "hetrt" "$WORK/out" || fail "hetrt --version printed: $(cat "$WORK/out")"
  else
    fail "installed hetrt --version: $(cat "$WORK/out")"
  fi
  ;;
consumer)
  SRC=$2 PREFIX=$3
  MODEL=${HETRT_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}/test_relu/model.onnx
  if [ ! -f "$MODEL" ]; then
    echo "SKIP: $MODEL not found (install libonnx-testdata)"
    exit 77
  fi
  LIBDIR=$(dirname "$(ls -d "$PREFIX"/lib*/libhetrt.so | head -1)")
  for how in shared static; do
    static=OFF
    [ "$how" = static ] && static=ON
    if cmake -S "$SRC/examples/consumer" -B "$WORK/$how" -DCMAKE_PREFIX_PATH="$PREFIX" \
             -DCONSUMER_STATIC=$static >"$WORK/log" 2>&1 &&
       cmake --build "$WORK/$how" >>"$WORK/log" 2>&1; then
      "$WORK/$how/consumer" "$MODEL" >"$WORK/out" 2>&1 && grep -q '^ok:' "$WORK/out" ||
        { fail "find_package consumer ($how)"; sed 's/^/  | /' "$WORK/out"; }
    else
      fail "find_package consumer ($how) does not build"; tail -20 "$WORK/log"
    fi
  done
  if [ "$static" = ON ] && readelf -d "$WORK/static/consumer" 2>/dev/null | grep -q 'libhetrt\.so'; then
    fail "the static consumer needs libhetrt.so"
  fi
  flags=$(PKG_CONFIG_PATH="$LIBDIR/pkgconfig" pkg-config --cflags --libs hetrt) ||
    fail "pkg-config --cflags --libs hetrt"
  # shellcheck disable=SC2086  # flags are words
  if cc -std=c11 -Wall -Werror -o "$WORK/pc_consumer" "$SRC/examples/consumer/consumer.c" \
        $flags -Wl,-rpath,"$LIBDIR" >"$WORK/log" 2>&1; then
    "$WORK/pc_consumer" "$MODEL" >"$WORK/out" 2>&1 && grep -q '^ok:' "$WORK/out" ||
      { fail "pkg-config consumer"; sed 's/^/  | /' "$WORK/out"; }
  else
    fail "pkg-config consumer does not build"; cat "$WORK/log"
  fi
  ;;
*)
  echo "usage: test_install.sh prefix BUILD PREFIX | consumer SRC PREFIX"
  exit 2
  ;;
esac
if [ "$failures" -ne 0 ]; then
  echo "test_install.sh $MODE: $failures failure(s)"
  exit 1
fi
echo "test_install.sh $MODE: ok"
