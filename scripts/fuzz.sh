#!/usr/bin/env bash
# fuzz.sh — runs one libFuzzer target of tests/fuzz (docs/reliability.md).
#   scripts/fuzz.sh TARGET SECONDS [JOBS]   fuzz TARGET for SECONDS
#   scripts/fuzz.sh minimize TARGET         merge the working corpus into
#                                           a minimal tests/fuzz/corpus
#   scripts/fuzz.sh list                    the targets
# Configures (once) and builds a clang ASan+UBSan+libFuzzer build in
# build-fuzz/ (HETRT_FUZZ_BUILD_DIR to change it), fuzzes on a working
# corpus build-fuzz/fuzz/corpus/TARGET seeded from the committed one
# (the source tree is never written, except by minimize), and prints the
# executions, coverage (cov:, ft:), new corpus files and every crash with
# its file (under build-fuzz/fuzz/crashes/TARGET/).  JOBS > 1 runs that
# many fuzzing processes (-jobs/-workers).  Exits 1 when a crash, leak,
# timeout or OOM was found.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD=${HETRT_FUZZ_BUILD_DIR:-build-fuzz}
TARGETS="fuzz_model fuzz_model_emu fuzz_tensor fuzz_profile fuzz_policy fuzz_plan"

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
corpus_of() { [ "$1" = fuzz_model_emu ] && echo fuzz_model || echo "$1"; }
dict_of() { case "$1" in fuzz_profile) echo profile ;; fuzz_policy) echo policy ;; fuzz_plan) echo plan ;; *) echo onnx ;; esac; }

build() {
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETRT_SANITIZE=ON -DHETRT_FUZZ=ON \
      -DHETRT_PYTHON=OFF -DHETRT_CUDA=OFF >/dev/null
  fi
  cmake --build "$BUILD" --target "$1" >"$BUILD/fuzz-build.log" 2>&1 ||
    { tail -30 "$BUILD/fuzz-build.log"; echo "fuzz.sh: build FAILED ($BUILD/fuzz-build.log)" >&2; exit 1; }
}

[ $# -ge 1 ] || usage
case "$1" in
  list) echo "$TARGETS"; exit 0 ;;
  minimize)
    [ $# -eq 2 ] || usage
    t=$2; c=$(corpus_of "$t")
    build "$t"
    work=$BUILD/fuzz/corpus/$t
    [ -d "$work" ] || { echo "fuzz.sh: no working corpus $work: fuzz first" >&2; exit 1; }
    new=$(mktemp -d)
    "$BUILD/fuzz/$t" -merge=1 -rss_limit_mb=2048 -timeout=10 "$new" \
      "$SRC/tests/fuzz/corpus/$c" "$work"
    echo "fuzz.sh: tests/fuzz/corpus/$c: $(ls "$SRC/tests/fuzz/corpus/$c" | wc -l) -> $(ls "$new" | wc -l) files"
    # Keep the named seeds; add the merge's new files (hashes as names).
    for f in "$new"/*; do
      h=$(basename "$f")
      cmp -s "$f" "$work/$h" && [ ! -e "$SRC/tests/fuzz/corpus/$c/$h" ] &&
        cp "$f" "$SRC/tests/fuzz/corpus/$c/$h"
    done
    rm -rf "$new"
    du -sh "$SRC/tests/fuzz/corpus/$c"
    exit 0 ;;
esac
[ $# -ge 2 ] || usage
t=$1 seconds=$2 jobs=${3:-1}
case " $TARGETS " in *" $t "*) ;; *) echo "fuzz.sh: unknown target '$t' ($TARGETS)" >&2; exit 2 ;; esac
build "$t"
c=$(corpus_of "$t")
work=$BUILD/fuzz/corpus/$t crashes=$BUILD/fuzz/crashes/$t
mkdir -p "$work" "$crashes" "$BUILD/fuzz/cache"
cp -n "$SRC/tests/fuzz/corpus/$c"/* "$work"/ 2>/dev/null || true
before=$(ls "$work" | wc -l)
log=$BUILD/fuzz/$t.log
par=()
[ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")
echo "fuzz.sh: $t for ${seconds}s, corpus $work ($before files), log $log"
set +e
HETRT_CACHE_DIR=$BUILD/fuzz/cache "$BUILD/fuzz/$t" -max_total_time="$seconds" \
  -rss_limit_mb=2048 -timeout=10 -dict="$SRC/tests/fuzz/dict/$(dict_of "$t").dict" \
  -print_final_stats=1 -artifact_prefix="$crashes/" "${par[@]}" "$work" >"$log" 2>&1
rc=$?
set -e
[ "$jobs" -gt 1 ] && cat fuzz-*.log >>"$log" 2>/dev/null && rm -f fuzz-*.log
grep -E '^#[0-9]+' "$log" | tail -1 || true
grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb' "$log" || true
echo "fuzz.sh: corpus $before -> $(ls "$work" | wc -l) files ($(du -sh "$work" | cut -f1))"
found=$(grep -hE '^artifact_prefix=|Test unit written to' "$log" | sed -n 's/.*Test unit written to //p' || true)
if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
  grep -E '^==[0-9]+==ERROR|SUMMARY:|runtime error|deadly signal|ALARM|out-of-memory' "$log" | head -5
  echo "fuzz.sh: $t FOUND a failure (exit $rc); reproducer(s):"
  for f in $found; do echo "  $f"; done
  echo "replay: $BUILD/fuzz/$t FILE; once fixed, keep it under tests/fuzz/regressions/$t/"
  exit 1
fi
echo "fuzz.sh: $t: no failure in ${seconds}s"
