#!/usr/bin/env bash
# gpu-bundle.sh [OUT] — builds, here, what the GPU check (scripts/gpu-check.sh)
# runs on a GPU machine that has no Debian -dev packages and no package
# registry: a Release build with the CUDA plugin (build-gpu/), packed with
# every shared library it needs except glibc's own and the NVIDIA ones (the
# CUDA runtime and cuBLASLt come from the GPU machine), into one compressed
# file, default hetrt-gpu-bundle.tar.xz in the tree's root (ignored by git,
# carried to the GPU machine with the working tree; it must stay under
# 64 MiB).  Binaries find their libraries through $ORIGIN rpaths:
#   bin/    hetrt, partview, libhetrt.so, libhetrt_cuda.so
#   tests/  the gpu-labelled test executables
#   lib/    protobuf-c, yaml, hwloc, OpenBLAS, oneDNN, check, libstdc++, ...
#   MANIFEST  commit, build date, glibc and CUDA versions it was built with
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${1:-$ROOT/hetrt-gpu-bundle.tar.xz}
BUILD=${HETRT_GPU_BUILD_DIR:-build-gpu}
JOBS=$(nproc 2>/dev/null || echo 2)
LIMIT=$((64 * 1024 * 1024))

bash scripts/install-deps.sh >/dev/null
echo "== building $BUILD (Release, HETRT_CUDA=ON)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHETRT_CUDA=ON \
  -DCMAKE_BUILD_RPATH='$ORIGIN;$ORIGIN/../lib;$ORIGIN/../bin' >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target hetrt_cli partview hetrt hetrt_cuda test_cuda_ops >/dev/null

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
B=$STAGE/hetrt-gpu
mkdir -p "$B/bin" "$B/lib" "$B/tests"
cp "$BUILD/hetrt" "$BUILD/partview" "$BUILD/libhetrt.so" "$BUILD/libhetrt_cuda.so" "$B/bin/"
cp "$BUILD/tests/test_cuda_ops" "$B/tests/"

# Every library the binaries load, except glibc's and NVIDIA's.
skip='^(libhetrt|libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64|linux-vdso|libcuda|libcudart|libcublas|libcublasLt|libcudnn|libnvrtc|libnvJitLink)\.'
for f in "$B"/bin/* "$B"/tests/*; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  if [[ ! $name =~ $skip ]]; then cp -L "$path" "$B/lib/$name"; fi
done

glibc=$(ldd --version | head -1 | grep -oE '[0-9]+\.[0-9]+$')
cuda=$(/usr/local/cuda/bin/nvcc --version | grep -oE 'release [0-9.]+' | cut -d' ' -f2)
{
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo '+uncommitted')"
  echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "glibc: $glibc"
  echo "cuda: $cuda"
  echo "cuda_archs: $(grep -m1 CMAKE_CUDA_ARCHITECTURES "$BUILD/CMakeCache.txt" | cut -d= -f2)"
} >"$B/MANIFEST"

tar -C "$STAGE" -cJf "$OUT" hetrt-gpu
size=$(stat -c %s "$OUT")
echo "gpu-bundle: $OUT: $((size / 1024 / 1024)) MiB ($(du -sh "$B" | cut -f1) unpacked, $(ls "$B/lib" | wc -l) libraries)"
if [ "$size" -ge "$LIMIT" ]; then
  echo "gpu-bundle: the bundle is over 64 MiB: it cannot travel" >&2
  exit 1
fi
