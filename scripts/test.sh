#!/usr/bin/env bash
# test.sh — the full check, as CI runs it (.ci/run): installs dependencies,
# builds Release in build/, a sanitizer build (ASan+UBSan) in build-asan/ and
# a ThreadSanitizer build in build-tsan/, runs the unit tests under each
# sanitizer, builds the libFuzzer targets with clang in build-fuzz/ and
# replays their corpora and past crashes and fuzzes each for
# HETRT_FUZZ_SECONDS (default 60), then every CTest test of the Release
# build (unit, the ONNX backend suites, whole models, resnet18), then
# builds the Debian packages, installs them, builds a program against them
# and removes them again (tests/install/test_deb.sh).
# Exits non-zero when anything fails.
# Environment: HETRT_CMAKE_ARGS (extra configure arguments, word-split),
# HETRT_BUILD_DIR (default build), HETRT_ASAN_DIR (default build-asan),
# HETRT_TSAN_DIR (default build-tsan), HETRT_FUZZ_DIR (default build-fuzz),
# HETRT_FUZZ_SECONDS (default 60).
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
BUILD=${HETRT_BUILD_DIR:-build}
ASAN=${HETRT_ASAN_DIR:-build-asan}
TSAN=${HETRT_TSAN_DIR:-build-tsan}
FUZZ=${HETRT_FUZZ_DIR:-build-fuzz}
FUZZ_SECONDS=${HETRT_FUZZ_SECONDS:-60}
read -r -a EXTRA <<<"${HETRT_CMAKE_ARGS:-}"
status=0

step() { echo; echo "== $*"; }

step "installing dependencies"
bash scripts/install-deps.sh || exit 1

step "sanitizer build ($ASAN, HETRT_SANITIZE=ON) and unit tests"
if cmake -S . -B "$ASAN" -DCMAKE_BUILD_TYPE=Debug -DHETRT_SANITIZE=ON "${EXTRA[@]}" >/dev/null &&
   cmake --build "$ASAN" -j"$JOBS"; then
  (cd "$ASAN" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest -L unit -j"$JOBS" --output-on-failure) || { status=1; echo "test.sh: sanitizer unit tests FAILED"; }
else
  status=1
  echo "test.sh: sanitizer build FAILED"
fi

step "ThreadSanitizer build ($TSAN, HETRT_TSAN=ON) and unit tests"
if cmake -S . -B "$TSAN" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETRT_TSAN=ON "${EXTRA[@]}" >/dev/null &&
   cmake --build "$TSAN" -j"$JOBS"; then
  (cd "$TSAN" && ctest -L unit -j"$JOBS" --output-on-failure) || { status=1; echo "test.sh: ThreadSanitizer unit tests FAILED"; }
else
  status=1
  echo "test.sh: ThreadSanitizer build FAILED"
fi

step "libFuzzer build ($FUZZ, clang, HETRT_FUZZ=ON): corpus and crash replay, ${FUZZ_SECONDS}s per target"
if CC=clang CXX=clang++ cmake -S . -B "$FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETRT_SANITIZE=ON \
     -DHETRT_FUZZ=ON -DHETRT_FUZZ_SECONDS="$FUZZ_SECONDS" -DHETRT_PYTHON=OFF -DHETRT_CUDA=OFF >/dev/null &&
   cmake --build "$FUZZ" -j"$JOBS" --target fuzz_model fuzz_model_emu fuzz_tensor fuzz_profile fuzz_policy fuzz_plan; then
  (cd "$FUZZ" && ctest -L fuzz -j"$JOBS" --output-on-failure) || { status=1; echo "test.sh: fuzz tests FAILED"; }
else
  status=1
  echo "test.sh: libFuzzer build FAILED"
fi

step "Release build ($BUILD) and all tests"
if cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}" >/dev/null &&
   cmake --build "$BUILD" -j"$JOBS"; then
  [ "$status" -ne 0 ] && echo "test.sh: note: a sanitizer stage above failed"
  (cd "$BUILD" && ctest -j"$JOBS" --output-on-failure) || status=1
  step "Debian packages (cpack in $BUILD, apt-get install, use, remove)"
  bash tests/install/test_deb.sh "$BUILD" || status=1
else
  echo "test.sh: Release build FAILED"
  status=1
fi
exit "$status"
