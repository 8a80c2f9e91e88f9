#!/usr/bin/python3
"""estimates.py — the CPU cost model's estimated totals against measured
single-thread run times, the derivation of its table, and the emu's
estimates against its timed runs (docs/estimates.md).

Usage: /usr/bin/python3 bench/estimates.py [--build DIR] [--models-dir DIR]
       [--models a,b] [--runs N] [--rounds K] [--cpu C] [--write]
       [--option KEY=VALUE ...]
       [--derive FILE.json] [--fit FILE.json ...] [--emu PROFILE.yaml]

The models of bench/ (bench/perf/gen_models.py: resnet18, resnet50,
mobilenet_v2, squeezenet1_1, bert4, mlp4; bench/vad/gen_vad_model.py: vad;
bench/micro/gen_models.py: resize_linear, resize_nearest, f16_cnn,
f16_elementwise, f16_mlp, qop_conv) and the dynamic-shape ones of
tests/models/gen_detector.py (detector, segmenter, recognizer, given
--shape) are generated into --models-dir (default /tmp/hetrt-estimates)
when missing, and so are resnet18_int8, resnet50_int8, mobilenet_v2_int8,
bert4_int8 (`hetrt quantize --random 4 --method minmax` of the perf
models) and bert4_dynamic (`--dynamic`); the case qop_conv_novnni runs
qop_conv under ONEDNN_MAX_CPU_ISA=AVX512_CORE (the reference int8
kernels).
Then, by default, for each case (model, shapes):

  estimated  `partview MODEL [--shape ..] --format json --threads 1`
             (provider cpu): estimates.total_seconds;
  measured   `taskset -c C hetrt bench MODEL [--shape ..] --threads 1
             --runs N`, K rounds interleaved over the cases: the lowest of
             the rounds' medians (the machine is shared; the least
             disturbed round counts);

and prints model, shape, estimated ms, measured ms and estimated /
measured; --write also writes the table to bench/ESTIMATES.md.  --option
passes a session/provider option to both tools (e.g. cpu.estimate=roofline
for the uncalibrated roofline).

--derive FILE.json writes, per node of every case, what the CPU's table
(src/providers/cpu/estimate.c) is fitted to: the node's time (the median
over the runs of a `hetrt profile` trace, the lowest of K rounds), its FLOPs
and bytes (partview with cpu.estimate=roofline on two device profiles that
make one side of the roofline free; a ConvTranspose's bytes are its column
buffer's and a float16 elementwise op's five times its own, and a recurrent
node's time steps, as in estimate.c), its row of the table (the op's class;
for a Conv, channels-last or NCHW as the CPU plans it: the estimate
changes under cpu.layout=nchw) and whether it counts as Winograd (the
estimate changes under cpu.conv_algo=direct).

--fit FILE.json ... fits each row's compute, memory and overhead (and the
Winograd gain the gemm and conv_nchw rows share) to those nodes,
minimising the time-weighted squared log error of the node estimates,
relative to this machine's probes (cpu-profile.txt in the hetrt cache
folder), prints the rows as estimate.c's table and each case's estimated
total under the fit against the sum of its measured node times.

--emu PROFILE.yaml compares the emu's estimates with its timed-mode runs
(`--providers emu,cpu --devices PROFILE --option emu.mode=timed --algorithm
priority`, so every node the emu claims runs there): per case
the estimated total and the measured median, and per op type the summed
estimated and measured (median) node times of the nodes on the emu; with
--write into bench/ESTIMATES-emu.md.  bench/emu-slow.yaml is a device
slower than this CPU's kernels, so that timed mode paces every node.
"""
import argparse
import collections
import datetime
import json
import math
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
    ("segmenter", ["x=1x3x256x256"]),
    ("segmenter", ["x=1x3x192x320"]),
    ("recognizer", ["x=1x1x32x320"]),
    ("recognizer", ["x=4x1x32x640"]),
    ("resnet18", []),
    ("resnet50", []),
    ("mobilenet_v2", []),
    ("squeezenet1_1", []),
    ("bert4", []),
    ("mlp4", []),
    ("vad", []),
    ("resize_linear", []),
    ("resize_nearest", []),
    ("f16_cnn", []),
    ("f16_elementwise", []),
    ("f16_mlp", []),
    ("resnet18_int8", []),
    ("resnet50_int8", []),
    ("mobilenet_v2_int8", []),
    ("bert4_int8", []),
    ("bert4_dynamic", []),
    ("qop_conv", []),
    ("qop_conv_novnni", []),
]
PERF_MODELS = ("resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "bert4", "mlp4")
DYNAMIC_MODELS = ("detector", "segmenter", "recognizer")
MICRO_MODELS = ("resize_linear", "resize_nearest", "f16_cnn", "f16_elementwise", "f16_mlp",
                "qop_conv")
# QDQ models `hetrt quantize` writes from the perf models (minmax, 4 random
# input sets: the time of a node does not depend on its ranges), and
# bert4's dynamic quantization.
INT8_MODELS = dict({m + "_int8": (m, ["--random", "4", "--method", "minmax"])
                    for m in ("resnet18", "resnet50", "mobilenet_v2", "bert4")},
                   bert4_dynamic=("bert4", ["--dynamic"]))
# A case run as another case's file under an environment: qop_conv with
# oneDNN held below VNNI, so the quantized ops run on the reference kernels.
ALIASES = {"qop_conv_novnni": ("qop_conv", {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"})}

# Device profiles for --derive: one side of the roofline made free.
RATE = 1e9  # the side that is kept: 1 GFLOP/s or 1 GB/s, so est * 1e9
FREE = 1e21  # the side that is made free
PROFILE_FLOPS = "provider: cpu\npeak_flops: %g\nmemory_bandwidth: %g\n" % (RATE, FREE)
PROFILE_BYTES = "provider: cpu\npeak_flops: %g\nmemory_bandwidth: %g\n" % (FREE, RATE)

# The rows of estimate.c's table, in its order; BLAS rows' compute is
# relative to OpenBLAS's one-thread rate, the others' to the kernels' GEMM.
ROWS = ("gemm", "conv_nchw", "conv_transpose", "conv_transpose_tiles", "recurrent",
        "depthwise_nhwc", "depthwise_nchw", "elementwise", "resize", "movement", "view",
        "int8", "int8_depthwise", "int8_reference")
QUANTIZED = ("QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger")
BLAS_ROWS = ("conv_transpose", "recurrent")
# core/roofline.c's op lists, as far as the rows need them.
PRODUCTS = ("Conv", "FusedConv", "ConvInteger", "QLinearConv", "ConvTranspose", "MatMul",
            "MatMulInteger", "QLinearMatMul", "FusedMatMul", "Gemm", "Attention")
RECURRENT = ("LSTM", "GRU", "RNN")
VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape", "Size")


def generate(args, names):
    models_dir = args.models_dir
    os.makedirs(models_dir, exist_ok=True)
    names = sorted({ALIASES.get(n, (n,))[0] for n in names})
    names = sorted(set(names) | {INT8_MODELS[n][0] for n in names if n in INT8_MODELS})
    missing = [n for n in names if not os.path.exists(os.path.join(models_dir, n + ".onnx"))]
    perf = [n for n in missing if n in PERF_MODELS]
    dyn = [n for n in missing if n in DYNAMIC_MODELS]
    if perf:
        subprocess.run([sys.executable, os.path.join(HERE, "perf", "gen_models.py"),
                        models_dir, "--models", ",".join(perf)], check=True)
    if dyn:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models",
                                                     "gen_detector.py"),
                        models_dir, "--models", ",".join(dyn)], check=True)
    if "vad" in missing:
        subprocess.run([sys.executable, os.path.join(HERE, "vad", "gen_vad_model.py"),
                        os.path.join(models_dir, "vad.onnx")], check=True)
    if any(n in MICRO_MODELS for n in missing):
        subprocess.run([sys.executable, os.path.join(HERE, "micro", "gen_models.py"),
                        models_dir], check=True)
    for n in missing:
        if n in INT8_MODELS:
            src, how = INT8_MODELS[n]
            subprocess.run([os.path.join(args.build, "hetrt"), "quantize",
                            os.path.join(models_dir, src + ".onnx"), "-o",
                            os.path.join(models_dir, n + ".onnx"), "--holdout", "0"] + how,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def case_file(args, name):
    """(the ONNX file of case name, the environment to run it in)."""
    base, env = ALIASES.get(name, (name, {}))
    return os.path.join(args.models_dir, base + ".onnx"), dict(os.environ, **env)


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


def partview_json(args, model, shapes, extra=(), env=None):
    cmd = [os.path.join(args.build, "partview"), model, "--format", "json",
           "--threads", "1"] + shape_args(shapes) + option_args(args.option) + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                       env=env)
    if p.returncode:
        sys.exit("partview failed (%s): %s" % (" ".join(cmd), p.stderr.decode()))
    return json.loads(p.stdout.decode())


def bench_median(args, model, shapes, trace=None, extra=(), env=None):
    """`hetrt bench` (or, with trace, `hetrt profile -o TRACE`): the median
    run time in ms."""
    cmd = ["taskset", "-c", str(args.cpu)] if shutil.which("taskset") else []
    cmd += [os.path.join(args.build, "hetrt"), "profile" if trace else "bench", model,
            "--threads", "1", "--warmup", str(args.warmup), "--runs", str(args.runs)]
    cmd += shape_args(shapes) + option_args(args.option) + list(extra)
    if trace:
        cmd += ["-o", trace]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                       env=env)
    out = p.stdout.decode("utf-8", "replace")
    m = re.search(r"^median_ms=([0-9.]+)", out, re.M)
    if p.returncode or not m:
        raise RunFailed("hetrt failed (%s): %s" % (" ".join(cmd), out[-2000:]))
    return float(m.group(1))


class RunFailed(Exception):
    """A hetrt run that failed; the message has its command and output."""


def trace_node_medians(path):
    """Per node of a `hetrt profile` trace: (provider, the median over the
    runs of its seconds in a run).  Medians, not the means of
    --save-node-times: a few runs that page-fault a fresh output buffer
    (the first runs after the warm-up, until malloc reuses the block) or
    are preempted would otherwise weigh in."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    per_run = collections.defaultdict(lambda: collections.defaultdict(float))
    provider = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        per_run[e["name"]][e["args"]["run"]] += e["dur"] * 1e-6
        provider[e["name"]] = e["args"].get("provider")
    out = {}
    for name, runs in per_run.items():
        v = sorted(runs.values())
        mid = len(v) // 2
        out[name] = (provider[name], v[mid] if len(v) % 2 else 0.5 * (v[mid - 1] + v[mid]))
    return out


def least_disturbed_times(args, model, shapes, tmp, extra=(), env=None):
    """(the lowest of --rounds medians in ms, per node the lowest of the
    rounds' median times): the least disturbed round counts, node by
    node."""
    best_med, best = None, {}
    for k in range(args.rounds):
        trace = os.path.join(tmp, "trace%d.json" % k)
        med = bench_median(args, model, shapes, trace=trace, extra=extra, env=env)
        best_med = med if best_med is None else min(best_med, med)
        for name, (prov, secs) in trace_node_medians(trace).items():
            if name not in best or secs < best[name][1]:
                best[name] = (prov, secs)
    return best_med, best


def convt_tiles(node, w, out_type):
    """estimate.c's het_cpu_convt_tiles: float32 2-D, one group, kernel ==
    strides (at most 8 wide), no pads, dilation 1, no output padding or
    output_shape."""
    import onnx
    at = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    auto = at.get("auto_pad", b"NOTSET")
    k = list(at.get("kernel_shape", w[2:] if w else []))
    st = list(at.get("strides", []))
    return (out_type in (None, onnx.TensorProto.FLOAT) and bool(w) and len(w) == 4
            and at.get("group", 1) == 1 and "output_shape" not in at
            and auto in (b"NOTSET", "NOTSET") and len(st) == 2 and k == st and k[1] <= 8
            and all(p == 0 for p in at.get("pads", []))
            and all(d == 1 for d in at.get("dilations", []))
            and all(p == 0 for p in at.get("output_padding", [])))


def model_facts(model):
    """Facts of the ONNX file the table's rows need, by node name (the
    loader's "<op>_<index>" for an unnamed node; the optimizer keeps a
    node's name when it folds or fuses into it): Conv and ConvTranspose ->
    (group, input channels, whether a ConvTranspose runs by tiles as
    estimate.c's het_cpu_convt_tiles says); -> True where the first output is float16 or
    bfloat16; LSTM/GRU/RNN (If/Loop bodies too) -> (gates * hidden,
    input + hidden), from which the time steps follow."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    try:
        m = onnx.shape_inference.infer_shapes(m)
    except Exception:  # types are a refinement; go without them
        pass
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input)}
    groups, half, recurrent = {}, {}, {}

    def walk(graph, shapes):
        shapes = dict(shapes, **{t.name: list(t.dims) for t in graph.initializer})
        for n in graph.node:  # a QDQ model's weight: its DequantizeLinear's input
            if n.op_type == "DequantizeLinear" and n.input[0] in shapes:
                shapes[n.output[0]] = shapes[n.input[0]]
        for i, n in enumerate(graph.node):
            name = n.name or "%s_%d" % (n.op_type, i)
            half[name] = bool(n.output) and types.get(n.output[0]) in (
                onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)
            wi = 3 if n.op_type == "QLinearConv" else 1
            w = shapes.get(n.input[wi]) if len(n.input) > wi else None
            if n.op_type in ("Conv", "ConvTranspose", "QLinearConv"):
                g = next((a.i for a in n.attribute if a.name == "group"), 1)
                cin = None if not w else w[0] if n.op_type == "ConvTranspose" else w[1] * g
                groups[name] = (g, cin, n.op_type == "ConvTranspose" and
                                convt_tiles(n, w, types.get(n.output[0])))
            if n.op_type in RECURRENT and w and len(w) == 3:
                r = shapes.get(n.input[2])
                recurrent[name] = (w[1], w[2] + (r[2] if r else 0))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, shapes)

    walk(m.graph, {})
    return groups, half, recurrent


def node_row(node, flops, groups, nhwc, novnni=False):
    """The row of estimate.c's table a node's estimate uses (novnni: the
    int8 kernels are the reference ones)."""
    op = node["op_type"]
    if op in QUANTIZED:
        if op == "ConvInteger" or novnni:
            return "int8_reference"
        g, cin, _ = groups.get(node["name"], (1, None, False))
        return "int8_depthwise" if op == "QLinearConv" and g > 1 and cin and g == cin else "int8"
    if op in ("Conv", "FusedConv"):
        g, cin, _ = groups.get(re.sub(r"_part\d+$", "", node["name"]), (1, None, False))
        if g > 1 and cin and g == cin:
            return "depthwise_nhwc" if nhwc else "depthwise_nchw"
        return "gemm" if nhwc else "conv_nchw"
    if op == "ConvTranspose":
        tiles = groups.get(node["name"], (1, None, False))[2]
        return "conv_transpose_tiles" if tiles else "conv_transpose"
    if op in RECURRENT:
        return "recurrent"
    if op in PRODUCTS:
        return "gemm"
    if op in VIEWS:
        return "view"
    if op in ("Resize", "Upsample"):
        return "resize"
    return "movement" if flops < 0.5 else "elementwise"


def derive(args, cases, path):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pf, pb = os.path.join(tmp, "flops.yaml"), os.path.join(tmp, "bytes.yaml")
        with open(pf, "w") as f:
            f.write(PROFILE_FLOPS)
        with open(pb, "w") as f:
            f.write(PROFILE_BYTES)
        for name, shapes in cases:
            model, env = case_file(args, name)
            _, times = least_disturbed_times(args, model, shapes, tmp, env=env)
            raw = ["--option", "cpu.estimate=roofline"]
            jf = partview_json(args, model, shapes, raw + ["--devices", pf], env=env)
            jb = partview_json(args, model, shapes, raw + ["--devices", pb], env=env)
            jc = partview_json(args, model, shapes, env=env)
            jn = partview_json(args, model, shapes, ["--option", "cpu.layout=nchw"], env=env)
            jd = partview_json(args, model, shapes, ["--option", "cpu.conv_algo=direct"],
                               env=env)
            novnni = bool(ALIASES.get(name, (name, {}))[1])
            groups, half, recurrent = model_facts(model)
            batch = int(shapes[0].split("=")[1].split("x")[0]) if shapes else 1
            for nf, nb, nc, nn, nd in zip(jf["nodes"], jb["nodes"], jc["nodes"], jn["nodes"],
                                          jd["nodes"]):
                if nf["name"] not in times or nf["provider"] != "cpu":
                    continue
                flops, nbytes = nf["est_seconds"] * RATE, nb["est_seconds"] * RATE
                nhwc = abs(nc["est_seconds"] - nn["est_seconds"]) > 1e-12
                row = node_row(nf, flops, groups, nhwc, novnni)
                if row == "conv_transpose":  # its column buffer, as estimate.c
                    g, cin, _ = groups.get(nf["name"], (1, None, False))
                    nbytes = 4 * flops / (cin // g) if cin else nbytes
                if row == "elementwise" and half.get(nf["name"]):
                    nbytes *= 5  # computed through float32 copies, as estimate.c
                steps = 1  # recurrent: sequence * directions, as estimate.c
                key = nf["name"] if nf["name"] in recurrent else nf["name"].split("/")[-1]
                if row == "recurrent" and key in recurrent:  # a body's: by its own name
                    gates, width = recurrent[key]
                    steps = round(flops / (2 * batch * gates * width))
                rows.append({"model": name, "shape": " ".join(shapes), "node": nf["name"],
                             "op": nf["op_type"], "row": row,
                             "winograd": abs(nc["est_seconds"] - nd["est_seconds"]) > 1e-12,
                             "flops": flops, "bytes": nbytes, "steps": steps,
                             "estimated_s": nc["est_seconds"],
                             "measured_s": times[nf["name"]][1]})
    with open(path, "w") as f:
        json.dump(rows, f, indent=0)
    print("wrote %d nodes to %s" % (len(rows), path))


def cache_rates():
    """(kernels' GEMM FLOP/s, OpenBLAS FLOP/s, memcpy bytes/s) of one
    thread, from cpu-profile.txt in the hetrt cache folder."""
    base = os.environ.get("HETRT_CACHE_DIR") or (
        os.path.join(os.environ["XDG_CACHE_HOME"], "hetrt") if os.environ.get("XDG_CACHE_HOME")
        else os.path.join(os.path.expanduser("~"), ".cache", "hetrt"))
    vals = {}
    with open(os.path.join(base, "cpu-profile.txt")) as f:
        for line in f:
            k, v = line.split()
            vals[k] = float(v)
    return vals["gemm_flops_f32_thread"], vals["blas_flops_f32_thread"], vals["memory_bandwidth"]


def minimise(f, x0, iters=4000):
    """Nelder-Mead: the x near x0 with the least f(x)."""
    n = len(x0)
    simplex = [list(x0)] + [[x + (0.5 if i == j else 0) for j, x in enumerate(x0)]
                            for i in range(n)]
    vals = [f(s) for s in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        c = [sum(s[j] for s in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]
        xr = [c[j] + (c[j] - worst[j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - worst[j]) for j in range(n)]
            fe = f(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (worst[j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                best = simplex[0]
                simplex = [best] + [[best[j] + 0.5 * (s[j] - best[j]) for j in range(n)]
                                    for s in simplex[1:]]
                vals = [vals[0]] + [f(s) for s in simplex[1:]]
    i = min(range(n + 1), key=lambda k: vals[k])
    return simplex[i]


def node_estimate(r, cost, gain, rates):
    """estimate.c's formula for one node under a row's (compute, memory,
    overhead) and the Winograd gain."""
    gemm, blas, bw = rates
    compute, memory, overhead = cost
    flops = r["flops"] / gain if r["winograd"] else r["flops"]
    rate = blas if r["row"] in BLAS_ROWS else gemm
    return overhead * r.get("steps", 1) + compute * flops / rate + memory * r["bytes"] / bw


def fit(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += json.load(f)
    rates = cache_rates()
    by_row = collections.defaultdict(list)
    for r in rows:
        by_row[r["row"]].append(r)

    def loss(nodes, costs, gain):
        total = sum(n["measured_s"] for n in nodes)
        err = 0.0
        for n in nodes:
            w = n["measured_s"] / total + 0.2 / len(nodes)  # time-weighted, every node a little
            err += w * math.log(node_estimate(n, costs[n["row"]], gain, rates) /
                                n["measured_s"]) ** 2
        return err

    # Each parameter is fitted as a log, so it stays positive; one that
    # does not matter drifts to ~0 and is printed as 0.
    costs, gain = {}, 1.0
    conv = by_row["gemm"] + by_row["conv_nchw"]
    if conv:
        def f(x):
            c = {"gemm": [math.exp(v) for v in x[0:3]],
                 "conv_nchw": [math.exp(v) for v in x[3:6]]}
            return loss(conv, c, math.exp(x[6]))
        x = minimise(f, [0, 0, math.log(5e-6), 0, 0, math.log(5e-6), math.log(1.3)], 8000)
        costs["gemm"] = [math.exp(v) for v in x[0:3]]
        costs["conv_nchw"] = [math.exp(v) for v in x[3:6]]
        gain = math.exp(x[6])
    for row in ROWS:
        if row in costs or not by_row[row]:
            continue
        x = minimise(lambda x: loss(by_row[row], {row: [math.exp(v) for v in x]}, gain),
                     [0, 0, math.log(3e-6)])
        costs[row] = [math.exp(v) for v in x]
    print("one thread: kernels' GEMM %.3g FLOP/s, OpenBLAS %.3g FLOP/s, memcpy %.3g B/s" % rates)
    print("%d nodes from %s\n" % (len(rows), ", ".join(paths)))
    print("/* row: blas, compute, memory, overhead; nodes, their measured ms */")
    for row in ROWS:
        if row not in costs:
            print("    [%s] no nodes" % row)
            continue
        nodes = by_row[row]
        # a compute or memory term worth under 1% of the row's time is
        # dropped (it would only drift); an overhead under 10 ns too
        meas = sum(n["measured_s"] for n in nodes)
        work = (sum(n["flops"] for n in nodes) / (rates[1] if row in BLAS_ROWS else rates[0]),
                sum(n["bytes"] for n in nodes) / rates[2])
        c = [v if v * w >= 0.01 * meas else 0.0 for v, w in zip(costs[row][:2], work)]
        c.append(costs[row][2] if costs[row][2] >= 1e-8 else 0.0)
        costs[row] = c
        print("    [HET_CPU_ROW_%s] = {\"%s\", %s, %.2g, %.2g, %s},  /* %d nodes, %.2f ms */"
              % (row.upper(), row, "true" if row in BLAS_ROWS else "false", c[0], c[1],
                 "%.2ge-6" % (c[2] * 1e6) if c[2] else "0", len(nodes), meas * 1e3))
    print("winograd gain %.2f\n" % gain)
    per_case = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        k = (r["model"], r["shape"])
        if r["row"] in costs:
            per_case[k][0] += node_estimate(r, costs[r["row"]], gain, rates)
        per_case[k][1] += r["measured_s"]
        per_case[k][2] += r["estimated_s"]
    print("| model | shape | fitted ms | partview ms | measured (node sum) ms | fitted / measured |")
    print("|---|---|---:|---:|---:|---:|")
    for (m, s), (e, t, c) in sorted(per_case.items()):
        print("| %s | %s | %.2f | %.2f | %.2f | %.2f |" % (m, s or "(file)", e * 1e3, c * 1e3,
                                                         t * 1e3, e / t))


def emu_compare(args, cases, profile):
    """The emu's estimates against its timed-mode runs."""
    extra = ["--providers", "emu,cpu", "--devices", profile, "--option", "emu.mode=timed",
             "--algorithm", "priority"]
    ops = collections.defaultdict(lambda: [0, 0.0, 0.0])
    lines = ["| model | shape | emu nodes | estimated ms | measured ms | ratio |",
             "|---|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, shapes in cases:
            model, env = case_file(args, name)
            shape = " ".join(shapes) or "(file)"
            j = partview_json(args, model, shapes, extra, env=env)
            try:
                med, times = least_disturbed_times(args, model, shapes, tmp, extra, env=env)
            except RunFailed as e:
                why = [l for l in str(e).splitlines() if "hetrt profile:" in l]
                lines.append("| %s | %s | - | %.3f | run failed: %s | - |" % (
                    name, shape, j["estimates"]["total_seconds"] * 1e3,
                    why[0].split(": ", 2)[-1] if why else "see the command"))
                continue
            n_emu = 0
            for n in j["nodes"]:
                prov, secs = times.get(n["name"], (None, None))
                if n["provider"] != "emu" or prov != "emu":
                    continue
                n_emu += 1
                o = ops[n["op_type"]]
                o[0] += 1
                o[1] += n["est_seconds"]
                o[2] += secs
            est = j["estimates"]["total_seconds"] * 1e3
            lines.append("| %s | %s | %d | %.3f | %.3f | %.2f |" % (name, shape, n_emu, est, med,
                                                                 est / med))
    lines += ["", "| op on emu | nodes | estimated ms | measured ms | ratio |",
              "|---|---:|---:|---:|---:|"]
    for op, (n, e, t) in sorted(ops.items(), key=lambda kv: -kv[1][2]):
        lines.append("| %s | %d | %.3f | %.3f | %.2f |" % (op, n, e * 1e3, t * 1e3, e / t))
    cmd = "/usr/bin/python3 bench/estimates.py --emu %s --runs %d --rounds %d%s" % (
        os.path.relpath(profile, ROOT), args.runs, args.rounds,
        " --models " + args.models if args.models else "")
    header = ["The emu's estimates (partview: the roofline on the profile plus its launch",
              "overhead per node, and the copies) against its timed-mode runs",
              "(`taskset -c %d hetrt profile --threads 1 --algorithm priority --option "
              "emu.mode=timed`, the lowest of %d rounds' medians of %d runs; per op the "
              "nodes' median times)." % (args.cpu, args.rounds, args.runs),
              "", "- date: %s" % datetime.date.today().isoformat(),
              "- machine: %s" % machine(), "- command: `%s`" % cmd, ""]
    md = "\n".join(header + lines) + "\n"
    print(md)
    if args.write:
        with open(os.path.join(HERE, "ESTIMATES-emu.md"), "w") as f:
            f.write("# emu estimates against its timed runs\n\n" + md)


def machine():
    """The CPU's model name and count."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            name = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return "%s, %d CPUs" % (name, os.cpu_count())


def table_markdown(rows, header):
    lines = header + ["", "| model | shape | estimated ms | measured ms | ratio |",
                      "|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %s | %.3f | %.3f | %.2f |" % (
            r["model"], r["shape"] or "(file)", r["est_ms"], r["meas_ms"],
            r["est_ms"] / r["meas_ms"]))
    return "\n".join(lines) + "\n"


def compare(args, cases):
    rows = []
    for name, shapes in cases:
        model, env = case_file(args, name)
        j = partview_json(args, model, shapes, env=env)
        rows.append({"model": name, "shape": " ".join(shapes), "shapes": shapes,
                     "est_ms": j["estimates"]["total_seconds"] * 1e3, "meas": []})
    for _ in range(args.rounds):
        for r in rows:
            model, env = case_file(args, r["model"])
            r["meas"].append(bench_median(args, model, r["shapes"], env=env))
    for r in rows:
        r["meas_ms"] = min(r["meas"])
    cmd = "/usr/bin/python3 bench/estimates.py --runs %d --rounds %d%s%s" % (
        args.runs, args.rounds, "".join(" --option " + o for o in args.option),
        " --models " + args.models if args.models else "")
    header = ["Estimated (partview, provider cpu, --threads 1) against measured",
              "(`taskset -c %d hetrt bench --threads 1`, lowest of %d rounds' medians of "
              "%d runs)." % (args.cpu, args.rounds, args.runs),
              "", "- date: %s" % datetime.date.today().isoformat(),
              "- machine: %s" % machine(),
              "- command: `%s`" % cmd]
    md = table_markdown(rows, header)
    worst = max(abs(r["est_ms"] / r["meas_ms"] - 1) for r in rows)
    md += "\nlargest deviation: %.0f%%\n" % (100 * worst)
    print(md)
    if args.write:
        with open(os.path.join(HERE, "ESTIMATES.md"), "w") as f:
            f.write("# CPU estimates against measured times\n\n" + md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models-dir", default="/tmp/hetrt-estimates")
    ap.add_argument("--models", default="")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--derive", metavar="FILE.json")
    ap.add_argument("--fit", metavar="FILE.json", nargs="+")
    ap.add_argument("--emu", metavar="PROFILE.yaml")
    args = ap.parse_args()
    if args.fit:
        fit(args.fit)
        return
    want = set(args.models.split(",")) if args.models else None
    cases = [c for c in CASES if want is None or c[0] in want]
    generate(args, sorted({c[0] for c in cases}))
    try:
        if args.derive:
            derive(args, cases, args.derive)
        elif args.emu:
            emu_compare(args, cases, args.emu)
        else:
            compare(args, cases)
    except RunFailed as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
