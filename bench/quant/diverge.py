#!/usr/bin/python3
"""diverge.py — finds where hetrt's and ONNX Runtime's runs of a QDQ model part.

Usage: /usr/bin/python3 bench/quant/diverge.py QDQ.onnx INPUT_DIR --hetrt BIN
       [--sets N] [--work DIR] [--all]

Writes a copy of the QDQ model in which every QuantizeLinear output (the
integer tensor) is also a graph output, runs it on the first N input sets
of INPUT_DIR (test_data_set_*) in hetrt (`BIN run`), in ORT with graph
optimizations on (QDQ groups fused into int8 kernels, as run.sh times it)
and in ORT with them off (Q/DQ run as written, in float, as hetrt does),
and prints, per quantized tensor in graph order, the max difference of
the integer values in LSB for each pair:
  het-ORT     hetrt vs ORT (optimized)
  het-ORTref  hetrt vs ORT (no optimization)
  ORTref-ORT  ORT without vs with optimization
Then the first tensor whose het-ORT (and het-ORTref) difference exceeds
2 LSB and the node that writes it.  With --all every tensor is printed, else only those up to
and a few past that first divergence and the final outputs.  It checks that
the extra outputs leave ORT's fused model output unchanged (bit-exact
against a run of the unmodified model).
"""
import argparse
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT = 2.0


def tap_model(src, dst):
    """dst: src with every QuantizeLinear output a graph output.  Returns
    [(tensor, node name, op that feeds the Q, original output count)]."""
    m = onnx.load(src)
    g = m.graph
    producer = {o: n for n in g.node for o in n.output}
    have = {o.name for o in g.output}
    taps = []
    for n in g.node:
        if n.op_type != "QuantizeLinear" or n.output[0] in have:
            continue
        zp = next((i for i in g.initializer if i.name == n.input[2]), None) if len(
            n.input) > 2 else None
        elem = zp.data_type if zp is not None else onnx.TensorProto.UINT8
        g.output.append(helper.make_tensor_value_info(n.output[0], elem, None))
        feeder = producer.get(n.input[0])
        taps.append((n.output[0], n.name, feeder.op_type if feeder else "(graph input)",
                     n.input[1], n.input[2] if len(n.input) > 2 else None))
    onnx.save(m, dst)
    return taps, len(have)


def run_hetrt(binary, model, sets, out):
    for s in sets:
        d = os.path.join(out, os.path.basename(s))
        os.makedirs(d, exist_ok=True)
        subprocess.run([binary, "run", model] + sorted(glob.glob(os.path.join(s, "input_*.pb")))
                       + ["--threads", "1", "--output-dir", d], check=True,
                       stdout=subprocess.DEVNULL)


def run_ort(model, in_dir, out, opt):
    subprocess.run(["node", os.path.join(HERE, "compare_ort.js"), model, in_dir, "--out", out,
                    "--opt", opt], check=True)


def load(d, s, k):
    return numpy_helper.to_array(onnx.load_tensor(os.path.join(d, s, "output_%d.pb" % k)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("qdq")
    ap.add_argument("inputs")
    ap.add_argument("--hetrt", required=True)
    ap.add_argument("--sets", type=int, default=1)
    ap.add_argument("--work", default=None)
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    work = args.work or os.path.splitext(args.qdq)[0] + ".diverge"
    os.makedirs(work, exist_ok=True)
    sel = os.path.join(work, "inputs")
    os.makedirs(sel, exist_ok=True)
    sets = sorted(glob.glob(os.path.join(args.inputs, "test_data_set_*")),
                  key=lambda p: int(p.rsplit("_", 1)[1]))[:args.sets]
    for s in sets:  # the selected sets only, for the ORT runs
        link = os.path.join(sel, os.path.basename(s))
        if not os.path.exists(link):
            os.symlink(os.path.abspath(s), link)
    tapped = os.path.join(work, "tapped.onnx")
    taps, n_out = tap_model(args.qdq, tapped)
    m = onnx.load(args.qdq, load_external_data=False)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    names = [s for s in map(os.path.basename, sets)]
    print("%d quantized tensors tapped; %d input set(s)" % (len(taps), len(sets)),
          file=sys.stderr)
    run_hetrt(args.hetrt, tapped, sets, os.path.join(work, "hetrt"))
    run_ort(tapped, sel, os.path.join(work, "ort"), "all")
    run_ort(tapped, sel, os.path.join(work, "ortref"), "disabled")
    run_ort(args.qdq, sel, os.path.join(work, "ort_untapped"), "all")
    for s in names:  # the taps must not change what ORT computes
        for k in range(n_out):
            a, b = load(os.path.join(work, "ort"), s, k), load(os.path.join(work, "ort_untapped"),
                                                               s, k)
            if not np.array_equal(a, b):
                print("warning: %s output %d differs with the taps (max %g): ORT fused "
                      "differently" % (s, k, np.abs(a - b).max()), file=sys.stderr)
    rows = []
    for k, (t, qname, feeder, scale_name, zp_name) in enumerate(taps, start=n_out):
        diff = {}
        for pair in (("hetrt", "ort"), ("hetrt", "ortref"), ("ortref", "ort")):
            worst = 0.0
            for s in names:
                a = load(os.path.join(work, pair[0]), s, k).astype(np.int64)
                b = load(os.path.join(work, pair[1]), s, k).astype(np.int64)
                worst = max(worst, float(np.abs(a - b).max()))
            diff[pair] = worst
        a = np.concatenate([load(os.path.join(work, "hetrt"), s, k).ravel() for s in names])
        b = np.concatenate([load(os.path.join(work, "ort"), s, k).ravel() for s in names])
        frac = float((a != b).mean())
        rows.append((t, qname, feeder, diff, frac, float(np.max(inits[scale_name])),
                     int(inits[zp_name]) if zp_name in inits else 0, a.size))
    first = next((i for i, r in enumerate(rows) if r[3][("hetrt", "ort")] > LIMIT), None)
    first_ref = next((i for i, r in enumerate(rows) if r[3][("hetrt", "ortref")] > LIMIT), None)
    print("%-4s %-58s %-16s %7s %8s %8s %10s %11s %5s" % (
        "#", "quantized tensor (Q node output)", "fed by", "het-ORT", "het-ORTref",
        "ORTref-ORT", "% het!=ORT", "scale", "zp"))
    for i, (t, qname, feeder, diff, frac, scale, zp, size) in enumerate(rows):
        if not (args.all or first is None or i <= first + 5 or i >= len(rows) - 2):
            continue
        print("%-4d %-58s %-16s %7.0f %8.0f %10.0f %9.2f%% %11.4g %5d" % (
            i, t[-58:], feeder, diff[("hetrt", "ort")], diff[("hetrt", "ortref")],
            diff[("ortref", "ort")], 100 * frac, scale, zp))
    for idx, what in ((first, "ORT optimized"), (first_ref, "ORT unoptimized")):
        if idx is None:
            print("no quantized tensor differs by more than %g LSB between hetrt and %s" % (
                LIMIT, what))
        else:
            t, qname, feeder = rows[idx][:3]
            print("first tensor more than %g LSB apart (hetrt vs %s): #%d %s "
                  "(QuantizeLinear %s, fed by a %s)" % (LIMIT, what, idx, t, qname, feeder))


if __name__ == "__main__":
    main()
