#!/usr/bin/python3
"""estimates.py — the CPU cost model's estimated totals against measured
single-thread run times (docs/estimates.md).

Usage: /usr/bin/python3 bench/estimates.py [--build DIR] [--models-dir DIR]
       [--models a,b] [--runs N] [--rounds K] [--cpu C] [--write]
       [--derive FILE.json] [--option KEY=VALUE ...]

Generates the models if missing (bench/perf/gen_models.py: resnet18,
resnet50, mobilenet_v2, squeezenet1_1, bert4, mlp4; tests/models/
gen_detector.py: detector, recognizer) into --models-dir (default
/tmp/hetrt-estimates), then for each case (model, shapes):

  estimated  `partview MODEL [--shape ..] --format json` (provider cpu,
             --threads 1): estimates.total_seconds;
  measured   `taskset -c C hetrt bench MODEL [--shape ..] --threads 1
             --runs N`, K rounds, interleaved over the cases: the lowest
             of the rounds' medians (the machine is shared; the least
             disturbed round counts).

and prints a table of model, shape, estimated ms, measured ms and the
ratio estimated / measured; --write also writes it to bench/ESTIMATES.md.
--option passes a session/provider option to both tools (e.g.
cpu.estimate=roofline to see the uncalibrated roofline).

--derive FILE.json also collects, per node, what the calibration in
docs/estimates.md is derived from: the measured mean time
(`hetrt bench --save-node-times`), the node's class, FLOPs and bytes (two
more partview runs with cpu.estimate=roofline on device profiles that make
one side of the roofline free: est * rate gives FLOPs and bytes), and
writes them to FILE.json with per-class fits (bench/estimates_fit.py).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (model, shapes): shapes are --shape arguments; [] = the file's own shapes.
CASES = [
    ("detector", ["x=1x3x640x640"]),
    ("detector", ["x=1x3x320x960"]),
    ("recognizer", ["x=1x1x32x320"]),
    ("recognizer", ["x=4x1x32x640"]),
    ("resnet18", []),
    ("resnet50", []),
    ("mobilenet_v2", []),
    ("squeezenet1_1", []),
    ("bert4", []),
    ("mlp4", []),
]
PERF_MODELS = ("resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "bert4", "mlp4")
DYNAMIC_MODELS = ("detector", "recognizer")

# Device profiles for --derive: one side of the roofline made free.
RATE = 1e9  # the side that is kept: 1 GFLOP/s or 1 GB/s, so est * 1e9
FREE = 1e21  # the side that is made free
PROFILE_FLOPS = "provider: cpu\npeak_flops: %g\nmemory_bandwidth: %g\n" % (RATE, FREE)
PROFILE_BYTES = "provider: cpu\npeak_flops: %g\nmemory_bandwidth: %g\n" % (FREE, RATE)


def generate(models_dir, names):
    os.makedirs(models_dir, exist_ok=True)
    perf = [n for n in names if n in PERF_MODELS and
            not os.path.exists(os.path.join(models_dir, n + ".onnx"))]
    dyn = [n for n in names if n in DYNAMIC_MODELS and
           not os.path.exists(os.path.join(models_dir, n + ".onnx"))]
    if perf:
        subprocess.run([sys.executable, os.path.join(HERE, "perf", "gen_models.py"),
                        models_dir, "--models", ",".join(perf)], check=True)
    if dyn:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models",
                                                     "gen_detector.py"),
                        models_dir, "--models", ",".join(dyn)], check=True)


def shape_args(shapes):
    out = []
    for s in shapes:
        out += ["--shape", s]
    return out


def option_args(options):
    out = []
    for o in options:
        out += ["--option", o]
    return out


def partview_json(args, model, shapes, extra=()):
    cmd = [os.path.join(args.build, "partview"), model, "--format", "json",
           "--threads", "1"] + shape_args(shapes) + option_args(args.option) + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if p.returncode:
        sys.exit("partview failed (%s): %s" % (" ".join(cmd), p.stderr.decode()))
    return json.loads(p.stdout.decode())


def bench_median(args, model, shapes, node_times=None):
    cmd = ["taskset", "-c", str(args.cpu)] if shutil.which("taskset") else []
    cmd += [os.path.join(args.build, "hetrt"), "bench", model, "--threads", "1",
            "--warmup", str(args.warmup), "--runs", str(args.runs)]
    cmd += shape_args(shapes) + option_args(args.option)
    if node_times:
        cmd += ["--save-node-times", node_times]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    out = p.stdout.decode("utf-8", "replace")
    m = re.search(r"^median_ms=([0-9.]+)", out, re.M)
    if p.returncode or not m:
        sys.exit("hetrt bench failed (%s): %s" % (" ".join(cmd), out[-2000:]))
    return float(m.group(1))


def read_node_times(path):
    times = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, _prov, secs, _runs = line.rstrip("\n").split("\t")
            times[name] = float(secs)
    return times


def conv_groups(model):
    """Conv node name -> (group, input channels) from the ONNX file (the
    optimizer keeps a Conv's name when it folds or fuses into it)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    shapes = {}
    for init in m.graph.initializer:
        shapes[init.name] = list(init.dims)
    out = {}
    for n in m.graph.node:
        if n.op_type == "Conv":
            g = 1
            for a in n.attribute:
                if a.name == "group":
                    g = a.i
            w = shapes.get(n.input[1])
            out[n.name] = (g, w[1] * g if w else None)
    return out


def node_class(op, name, groups):
    """The class a node's estimate uses (docs/estimates.md)."""
    if op in ("Conv", "FusedConv"):
        g, cin = groups.get(name, (1, None))
        return "depthwise" if g > 1 and cin and g == cin else "gemm"
    if op in ("ConvTranspose", "MatMul", "Gemm", "FusedMatMul", "Attention", "LSTM",
              "GRU", "RNN", "MatMulInteger", "QLinearConv", "QLinearMatMul"):
        return "gemm"
    if op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
              "Slice", "Gather", "Expand", "Tile", "Pad", "Identity", "Shape",
              "ConstantOfShape", "Cast", "Resize", "Upsample", "DepthToSpace",
              "SpaceToDepth"):
        return "movement"
    return "elementwise"


def derive(args, cases, path):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pf, pb = os.path.join(tmp, "flops.yaml"), os.path.join(tmp, "bytes.yaml")
        with open(pf, "w") as f:
            f.write(PROFILE_FLOPS)
        with open(pb, "w") as f:
            f.write(PROFILE_BYTES)
        for name, shapes in cases:
            model = os.path.join(args.models_dir, name + ".onnx")
            nt = os.path.join(tmp, "times.txt")
            bench_median(args, model, shapes, node_times=nt)
            times = read_node_times(nt)
            raw = ["--option", "cpu.estimate=roofline"]
            jf = partview_json(args, model, shapes, raw + ["--devices", pf])
            jb = partview_json(args, model, shapes, raw + ["--devices", pb])
            jc = partview_json(args, model, shapes)
            groups = conv_groups(model)
            for nf, nb, nc in zip(jf["nodes"], jb["nodes"], jc["nodes"]):
                if nf["name"] not in times:
                    continue
                rows.append({"model": name, "shape": " ".join(shapes), "node": nf["name"],
                             "op": nf["op_type"],
                             "class": node_class(nf["op_type"], nf["name"], groups),
                             "flops": nf["est_seconds"] * RATE,
                             "bytes": nb["est_seconds"] * RATE,
                             "estimated_s": nc["est_seconds"],
                             "measured_s": times[nf["name"]]})
    with open(path, "w") as f:
        json.dump(rows, f, indent=0)
    print("wrote %d nodes to %s" % (len(rows), path))


def table_markdown(rows, header):
    lines = header + ["", "| model | shape | estimated ms | measured ms | ratio |",
                      "|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %s | %.2f | %.2f | %.2f |" % (
            r["model"], r["shape"] or "(file)", r["est_ms"], r["meas_ms"],
            r["est_ms"] / r["meas_ms"]))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(ROOT), "build-l"))
    ap.add_argument("--models-dir", default="/tmp/hetrt-estimates")
    ap.add_argument("--models", default="")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--derive", metavar="FILE.json")
    args = ap.parse_args()
    want = set(args.models.split(",")) if args.models else None
    cases = [c for c in CASES if want is None or c[0] in want]
    generate(args.models_dir, sorted({c[0] for c in cases}))
    if args.derive:
        derive(args, cases, args.derive)
        return
    rows = []
    for name, shapes in cases:
        model = os.path.join(args.models_dir, name + ".onnx")
        j = partview_json(args, model, shapes)
        rows.append({"model": name, "shape": " ".join(shapes), "shapes": shapes,
                     "est_ms": j["estimates"]["total_seconds"] * 1e3, "meas": []})
    for _ in range(args.rounds):
        for r in rows:
            model = os.path.join(args.models_dir, r["model"] + ".onnx")
            r["meas"].append(bench_median(args, model, r["shapes"]))
    for r in rows:
        r["meas_ms"] = min(r["meas"])
    cmd = "/usr/bin/python3 bench/estimates.py --runs %d --rounds %d%s%s" % (
        args.runs, args.rounds, "".join(" --option " + o for o in args.option),
        " --models " + args.models if args.models else "")
    header = ["Estimated (partview, provider cpu, --threads 1) against measured",
              "(`taskset -c %d hetrt bench --threads 1`, lowest of %d rounds' medians of "
              "%d runs)." % (args.cpu, args.rounds, args.runs),
              "", "- date: %s" % datetime.date.today().isoformat(),
              "- machine: %s, %d CPUs" % (platform.processor() or platform.machine(),
                                          os.cpu_count()),
              "- command: `%s`" % cmd]
    md = table_markdown(rows, header)
    print(md)
    worst = max(abs(r["est_ms"] / r["meas_ms"] - 1) for r in rows)
    print("largest deviation: %.0f%%" % (100 * worst))
    if args.write:
        with open(os.path.join(HERE, "ESTIMATES.md"), "w") as f:
            f.write("# CPU estimates against measured times\n\n" + md)


if __name__ == "__main__":
    main()
