"""setup.py — builds the Python package hetrt (python/) with CMake.

`pip install --no-build-isolation .` runs this: it configures a CMake build
in build-pip/ (Release, HETRT_PYTHON=ON, HETRT_PYTHON_BUNDLE=ON, no tests)
for the Python running pip, builds libhetrt.so and the extension (and the
CUDA plugin when CMake builds it), installs the extension into a staging
folder (so its RPATH becomes $ORIGIN) and copies it, libhetrt.so and the
plugin into the package: the result needs no hetrt installed elsewhere.
Extra CMake arguments come from $HETRT_CMAKE_ARGS (e.g. -DHETRT_CUDA=OFF).
"""

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
BUILD_BASE = "build-pip"


def version():
    """The library's version, from include/hetrt/hetrt.h."""
    text = (ROOT / "include" / "hetrt" / "hetrt.h").read_text()
    return ".".join(re.search(r"#define HET_VERSION_%s (\d+)" % part, text).group(1)
                    for part in ("MAJOR", "MINOR", "PATCH"))


class CMakeBuild(build_ext):
    """Builds hetrt._hetrt through CMake instead of compiling sources."""

    def run_cmake(self, *args):
        print("setup.py: cmake " + " ".join(shlex.quote(str(a)) for a in args), flush=True)
        subprocess.run(["cmake"] + [str(a) for a in args], check=True)

    def build_extension(self, ext):
        temp = pathlib.Path(self.build_temp).resolve()
        build_dir, stage = temp / "cmake", temp / "stage"
        configure = ["-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                     "-DHETRT_PYTHON=ON", "-DHETRT_PYTHON_BUNDLE=ON", "-DBUILD_TESTING=OFF",
                     "-DPython3_EXECUTABLE=" + sys.executable,
                     "-DHETRT_PYTHON_INSTALL_DIR=python"]
        if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("HETRT_CMAKE_ARGS", ""))
        self.run_cmake(*configure)
        libs = [pathlib.Path(line) for line in
                (build_dir / "python" / "bundle.txt").read_text().splitlines() if line]
        # The extension's target builds libhetrt.so too ("--target hetrt"
        # would name the command-line tool's file for Ninja).
        targets = ["hetrt_python"]
        if any(p.name.startswith("libhetrt_cuda") for p in libs):
            targets.append("hetrt_cuda")
        self.run_cmake("--build", build_dir, "-j", str(os.cpu_count() or 1),
                       "--target", *targets)
        shutil.rmtree(stage, ignore_errors=True)
        self.run_cmake("--install", build_dir, "--component", "python", "--prefix", stage)

        dest = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        dest.parent.mkdir(parents=True, exist_ok=True)
        (module,) = (stage / "python" / "hetrt").glob("_hetrt*.so")
        shutil.copyfile(module, dest)
        for lib in libs:  # real files under the names the loader asks for
            shutil.copyfile(lib.resolve(), dest.parent / lib.name)


os.makedirs(BUILD_BASE, exist_ok=True)
setup(
    version=version(),
    package_dir={"": "python"},
    packages=["hetrt"],
    ext_modules=[Extension("hetrt._hetrt", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
)
