#!/usr/bin/python3
"""compare_nodes.py MODEL.onnx [--threads N] [--runs R] [--build DIR] [--top K]

Where hetrt and ONNX Runtime spend their time on one model, node by node:
runs `hetrt profile MODEL --save-node-times` and `node ort_bench.js MODEL
--profile` (ORT 1.30's own per-node profile), both pinned to the same CPUs
(0 .. N-1), and prints each node's mean time in hetrt next to ORT's
median, the largest differences first.

ORT renames what its optimizer fuses: a Conv with its Relu, Clip or Add
is named after an output value (`<value>_nchwc` in NCHWc layout, or the
last fused node's name), a QDQ group after its operator (`<name>_token_K`).  Such a name is traced back through the model to
the Conv (or pool) that starts the fused group, which is the name hetrt
keeps for its own fused node (a name ORT kept is taken as it is); hetrt's split parts (`NAME_part0`, ...) are
summed under NAME.  Rows that match on neither side are listed apart.
Profiling costs ORT a few microseconds per node, so its per-node times
sum to more than its run time: compare rows, and the totals only roughly.
Uses a fresh hetrt cache folder unless HETRT_CACHE_DIR is set.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# ops ORT folds into the Conv/pool before them (activation, residual, BN)
FOLDED = {"Relu", "Clip", "Add", "Sum", "BatchNormalization", "LeakyRelu",
          "HardSigmoid", "Sigmoid", "Mul", "Tanh"}


def hetrt_times(args, path, cpus, env):
    out = tempfile.NamedTemporaryFile(suffix=".txt", delete=False).name
    trace = out + ".trace.json"
    cmd = [os.path.join(args.build, "hetrt"), "profile", path, "--threads",
           str(args.threads), "--runs", str(args.runs), "--save-node-times", out,
           "-o", trace]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env,
                   preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    times = {}
    for line in open(out):
        if line.startswith("#"):
            continue
        name, _prov, sec, _runs = line.rstrip("\n").split("\t")
        base = re.sub(r"_part\d+$", "", name)
        times[base] = times.get(base, 0.0) + float(sec) * 1e6
    os.unlink(out)
    os.unlink(trace)
    return times


def ort_times(args, path, cpus):
    d = tempfile.mkdtemp(prefix="ort-prof-")
    cmd = ["node", os.path.join(HERE, "ort_bench.js"), path, "--threads",
           str(args.threads), "--runs", str(args.runs), "--profile",
           os.path.join(d, "ort")]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=HERE,
                   preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    files = glob.glob(os.path.join(d, "ort*.json"))
    if not files:
        sys.exit("compare_nodes: ORT wrote no profile in %s" % d)
    per = {}
    for e in json.load(open(files[0])):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per.setdefault(e["name"][:-len("_kernel_time")], []).append(e["dur"])
    shutil.rmtree(d)
    return {k: sorted(v)[len(v) // 2] for k, v in per.items()}


def origin(name, nodes, producer):
    """The model node an ORT node name stands for (None when unknown)."""
    name = re.sub(r"_token_\d+$", "", name)
    if name in nodes:  # a node ORT kept (or a QDQ group named after it)
        return name
    n = producer.get(re.sub(r"_nchwc$", "", name))
    if n is None:
        return None
    # named after a value: walk back over the ops folded into the group
    while n.op_type in FOLDED:
        ups = [producer[i] for i in n.input if i in producer]
        if not ups:
            break
        n = ups[0]
    return n.name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    path = os.path.abspath(args.model)
    g = onnx.load(path, load_external_data=False).graph
    nodes = {n.name: n for n in g.node}
    producer = {o: n for n in g.node for o in n.output}
    cpus = set(range(args.threads))
    env = dict(os.environ)
    fresh = None
    if not env.get("HETRT_CACHE_DIR"):
        fresh = env["HETRT_CACHE_DIR"] = tempfile.mkdtemp(prefix="hetrt-cache-")
    try:
        het = hetrt_times(args, path, cpus, env)
    finally:
        if fresh:
            shutil.rmtree(fresh, ignore_errors=True)
    ort = {}
    unmatched_ort = []
    for k, t in ort_times(args, path, cpus).items():
        o = origin(k, nodes, producer)
        if o is None:
            unmatched_ort.append((k, t))
        else:
            ort[o] = ort.get(o, 0.0) + t
    rows = [(n, het[n], ort.get(n)) for n in het]
    rows.sort(key=lambda r: -(r[1] - (r[2] if r[2] is not None else 0.0)))
    print("%s, %d thread(s), %d runs: node times in us (hetrt mean, ORT median "
          "under its profiler)" % (os.path.basename(path), args.threads, args.runs))
    print("%-56s %9s %9s %6s" % ("node (hetrt's name)", "hetrt", "ORT", "ratio"))
    for n, h, o in rows[:args.top]:
        print("%-56s %9.1f %9s %6s" % (n[-56:], h, "%.1f" % o if o is not None else "-",
                                         "%.2f" % (h / o) if o else ""))
    matched = [(h, o) for _, h, o in rows if o is not None]
    print("matched %d of %d hetrt nodes: hetrt %.0f us, ORT %.0f us" % (
        len(matched), len(rows), sum(h for h, _ in matched), sum(o for _, o in matched)))
    print("hetrt total %.0f us; ORT total %.0f us" % (
        sum(het.values()), sum(ort.values()) + sum(t for _, t in unmatched_ort)))
    if unmatched_ort:
        print("ORT nodes not traced to a model node: " + ", ".join(
            "%s %.0f" % (k, t) for k, t in sorted(unmatched_ort, key=lambda x: -x[1])[:10]))


if __name__ == "__main__":
    main()
