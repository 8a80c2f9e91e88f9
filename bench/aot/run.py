#!/usr/bin/python3
"""run.py — start-up from ahead-of-time plans (docs/plan-format.md) against
ONNX Runtime 1.30's session creation, side by side.

Usage: /usr/bin/python3 bench/aot/run.py [--build DIR] [--models a,b]
       [--rounds K] [--cpu C] [--models-dir DIR]

For each model (bench/perf/gen_models.py: resnet50, bert4, mobilenet_v2 by
default) it writes a plan once (`hetrt compile`, one thread), then runs K
rounds, interleaved, each child in a fresh process pinned to CPU C:
  plan   `hetrt bench M.hplan --runs 1 --warmup 0`: session creation from
         the plan, and the first run (which waits for the compilation that
         continues after creation);
  onnx   the same on the ONNX file (the tuning cache warm after the
         compile: the kernel choices are remembered, not timed);
  ort    `node bench/perf/ort_bench.js M.onnx --runs 1 --warmup 0`.
Time to first result = creation + first run.  Peak RSS is the child's
ru_maxrss (a node process carries its runtime too).  Each figure is the
lowest of the rounds (the machine is shared; the least disturbed round
counts).  Prints a Markdown table; the plan's outputs are checked against
the model's by `hetrt compile`'s session (tests/test_aot.c does it
bitwise).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PERF = os.path.join(ROOT, "bench", "perf")


def run_child(cmd, cpu):
    """(rc, output, peak RSS MiB) of cmd pinned to cpu."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                         preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    out = p.stdout.read().decode("utf-8", "replace")
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), out, ru.ru_maxrss / 1024.0


def hetrt_start(args, path):
    rc, out, rss = run_child([os.path.join(args.build, "hetrt"), "bench", path, "--threads", "1",
                              "--runs", "1", "--warmup", "0"], args.cpu)
    cre = re.search(r"^session_create_ms=([0-9.]+)", out, re.M)
    first = re.search(r"^run_ms: ([0-9.]+)", out, re.M)
    if rc or not cre or not first:
        sys.exit("hetrt bench %s failed:\n%s" % (path, out[-2000:]))
    return float(cre.group(1)), float(first.group(1)), rss


def ort_start(args, path):
    rc, out, rss = run_child(["node", os.path.join(PERF, "ort_bench.js"), path, "--threads", "1",
                              "--runs", "1", "--warmup", "0"], args.cpu)
    line = [l for l in out.splitlines() if l.startswith("{")]
    if rc or not line:
        sys.exit("ort_bench %s failed:\n%s" % (path, out[-2000:]))
    j = json.loads(line[-1])
    return j["session_create_ms"], j["median_ms"], rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default="resnet50,bert4,mobilenet_v2")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "bench", "perf", "models"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args()
    models = args.models.split(",")
    missing = [m for m in models
               if not os.path.exists(os.path.join(args.models_dir, m + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(PERF, "gen_models.py"), args.models_dir,
                        "--models", ",".join(missing)], check=True)
    plans = {}
    for m in models:
        onnx = os.path.join(args.models_dir, m + ".onnx")
        plans[m] = os.path.join(args.models_dir, m + ".hplan")
        rc, out, _ = run_child([os.path.join(args.build, "hetrt"), "compile", onnx, "-o",
                                plans[m], "--threads", "1"], args.cpu)
        if rc:
            sys.exit("hetrt compile %s failed:\n%s" % (onnx, out[-2000:]))
    best = {}
    for _ in range(args.rounds):
        for m in models:
            onnx = os.path.join(args.models_dir, m + ".onnx")
            for kind, fn, path in (("plan", hetrt_start, plans[m]), ("onnx", hetrt_start, onnx),
                                   ("ort", ort_start, onnx)):
                create, first, rss = fn(args, path)
                b = best.setdefault((m, kind), [create, create + first, rss])
                b[0] = min(b[0], create)
                b[1] = min(b[1], create + first)
                b[2] = min(b[2], rss)
    print("Start-up, one thread, pinned to CPU %d, lowest of %d interleaved rounds, %s"
          % (args.cpu, args.rounds, datetime.date.today().isoformat()))
    print("(`/usr/bin/python3 bench/aot/run.py --rounds %d`)\n" % args.rounds)
    print("| model | hetrt from .hplan: create / first result | hetrt from .onnx (warm cache) "
          "| ORT 1.30: create / first result | create, plan / ORT | peak RSS plan / onnx / ORT (MiB) |")
    print("|---|---|---|---|---|---|")
    for m in models:
        p, o, r = best[(m, "plan")], best[(m, "onnx")], best[(m, "ort")]
        print("| %s | %.1f / %.0f ms | %.0f / %.0f ms | %.0f / %.0f ms | %.3f | %.0f / %.0f / %.0f |"
              % (m, p[0], p[1], o[0], o[1], r[0], r[1], p[0] / r[0], p[2], o[2], r[2]))


if __name__ == "__main__":
    main()
