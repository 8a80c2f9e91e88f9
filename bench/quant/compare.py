#!/usr/bin/python3
"""compare.py — checks and tabulates the quantization benchmark (bench/quant/run.sh).

Usage:
  /usr/bin/python3 bench/quant/compare.py report REPORT.txt
      prints the accuracy figures of a `hetrt quantize` report as JSON
      {"cosine", "min_cosine", "top1_agree", "top1_total"} (worst output).
  /usr/bin/python3 bench/quant/compare.py outputs --qdq QDQ.onnx --hetrt DIR --ort DIR
      [--ort-fp32 DIR]
      compares hetrt's and ORT's outputs on the QDQ model, set by set
      (DIR/test_data_set_N/output_K.pb, output K in graph-output order), in
      steps of each output's quantization scale, read from the initializer
      "<output>_scale" of the QDQ model (the DequantizeLinear that makes the
      graph output): |hetrt - ORT| / scale.  With --ort-fp32 it also gives
      ORT's own float-vs-QDQ cosine and top-1 agreement, a cross-check of
      hetrt's report.  Prints one JSON line.
  /usr/bin/python3 bench/quant/compare.py pick MODEL_DIR
      the method of MODEL_DIR/quantize.<method>.txt with the best report
      (highest cosine, then highest worst-input cosine).
  /usr/bin/python3 bench/quant/compare.py table RESULTS_DIR MODEL...
      the markdown table of RESULTS_DIR/<model>/ (written by run.sh:
      quantize.<method>.txt, method, compare.json, times.tsv, output_shape).
"""
import argparse
import glob
import json
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

LSB_LIMIT = 2.0


def parse_report(path):
    """Worst output's figures from a `hetrt quantize` report."""
    pat = re.compile(r"output '([^']*)': cosine ([0-9.eE+-]+) \(worst input ([0-9.eE+-]+)\)"
                     r"(?:.*top-1 agreement (\d+)/(\d+))?")
    best = None
    with open(path) as f:
        for line in f:
            m = pat.search(line)
            if not m:
                continue
            r = {"output": m.group(1), "cosine": float(m.group(2)),
                 "min_cosine": float(m.group(3)),
                 "top1_agree": int(m.group(4)) if m.group(4) else None,
                 "top1_total": int(m.group(5)) if m.group(5) else None}
            if best is None or r["cosine"] < best["cosine"]:
                best = r
    return best


def load_sets(d):
    """{set name: [output arrays in index order]}."""
    res = {}
    for s in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
        files = sorted(glob.glob(os.path.join(s, "output_*.pb")),
                       key=lambda p: int(re.search(r"output_(\d+)\.pb$", p).group(1)))
        res[os.path.basename(s)] = [numpy_helper.to_array(onnx.load_tensor(f)) for f in files]
    return res


def output_scales(qdq_path):
    """[(output name, scale array, zero point array or None)] in graph-output order."""
    m = onnx.load(qdq_path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    res = []
    for o in m.graph.output:
        s = inits.get(o.name + "_scale")
        if s is None:
            raise SystemExit("%s: no initializer %s_scale for output %s" % (qdq_path, o.name,
                                                                            o.name))
        res.append((o.name, s.astype(np.float64), inits.get(o.name + "_zero_point")))
    return res


def compare_outputs(args):
    scales = output_scales(args.qdq)
    het, ort = load_sets(args.hetrt), load_sets(args.ort)
    fp32 = load_sets(args.ort_fp32) if args.ort_fp32 else {}
    if not het or set(het) != set(ort):
        raise SystemExit("input sets differ: hetrt %d (%s), ORT %d (%s)" % (
            len(het), args.hetrt, len(ort), args.ort))
    outs = []
    for k, (name, scale, _) in enumerate(scales):
        worst = {"lsb": 0.0, "set": None, "index": None}
        n = n_diff = 0
        dots = [0.0, 0.0, 0.0]
        top = [0, 0]
        for sname in sorted(het):
            a = het[sname][k].astype(np.float64)
            b = ort[sname][k].astype(np.float64)
            if a.shape != b.shape:
                raise SystemExit("%s %s: hetrt shape %s, ORT shape %s" % (sname, name, a.shape,
                                                                          b.shape))
            lsb = np.abs(a - b) / scale  # scale: scalar (per-tensor output)
            n += lsb.size
            n_diff += int((lsb > 0.5).sum())
            i = int(np.argmax(lsb))
            if lsb.flat[i] > worst["lsb"]:
                worst = {"lsb": float(lsb.flat[i]), "set": sname,
                         "index": [int(x) for x in np.unravel_index(i, a.shape)],
                         "hetrt": float(a.flat[i]), "ort": float(b.flat[i])}
            if sname in fp32:
                f = fp32[sname][k].astype(np.float64)
                dots[0] += float((f * b).sum())
                dots[1] += float((f * f).sum())
                dots[2] += float((b * b).sum())
                if f.ndim == 2 and f.shape[1] >= 2:
                    top[0] += int((f.argmax(1) == b.argmax(1)).sum())
                    top[1] += f.shape[0]
        r = {"output": name, "scale": float(np.max(scale)), "sets": len(het),
             "max_lsb": worst["lsb"], "values": n, "values_off_by_1lsb_or_more": n_diff,
             "worst": worst, "within_limit": worst["lsb"] <= LSB_LIMIT + 1e-3}
        if fp32:
            r["ort_cosine"] = dots[0] / np.sqrt(dots[1] * dots[2]) if dots[1] * dots[2] else None
            r["ort_top1"] = top if top[1] else None
        outs.append(r)
    print(json.dumps({"outputs": outs}))


def fmt(v, spec):
    return "-" if v is None else spec % v


def reports(model_dir):
    """{method: report figures} of model_dir/quantize.<method>.txt."""
    res = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "quantize.*.txt"))):
        r = parse_report(path)
        if r:
            res[path.rsplit(".", 2)[-2]] = r
    return res


def pick(model_dir):
    """The method whose report has the highest cosine (then worst-input cosine)."""
    rep = reports(model_dir)
    if not rep:
        sys.exit("%s: no accuracy report" % model_dir)
    return max(rep, key=lambda m: (rep[m]["cosine"], rep[m]["min_cosine"]))


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def best_times(model_dir):
    """{variant: lowest round median ms} from model_dir/times.tsv (variant round ms)."""
    res = {}
    for line in (read(os.path.join(model_dir, "times.tsv")) or "").splitlines():
        variant, _, ms = line.split()
        if ms != "-":
            res[variant] = min(res.get(variant, float("inf")), float(ms))
    return res


def table_row(model_dir):
    model = os.path.basename(model_dir)
    method = read(os.path.join(model_dir, "method"))
    rep = reports(model_dir)
    r = rep.get(method) or {}
    others = ", ".join("%s %.5f" % (m, rep[m]["cosine"]) for m in sorted(rep) if m != method)
    t = best_times(model_dir)
    cmp_text = read(os.path.join(model_dir, "compare.json"))
    outs = json.loads(cmp_text)["outputs"] if cmp_text and cmp_text.startswith("{") else []
    worst = max(outs, key=lambda o: o["max_lsb"]) if outs else None
    top1 = ("%d/%d" % (r["top1_agree"], r["top1_total"]) if r.get("top1_total")
            else "n/a (output %s)" % (read(os.path.join(model_dir, "output_shape")) or "?"))
    if worst:
        lsb = "%.2f%s" % (worst["max_lsb"], "" if worst["within_limit"] else " **> 2**")
        off = "%d / %d" % (worst["values_off_by_1lsb_or_more"], worst["values"])
        ort_cos = fmt(worst.get("ort_cosine"), "%.5f")
    else:
        lsb, off, ort_cos = "failed (see compare.err)", "-", "-"
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        model, method or "-", fmt(t.get("hetrt_fp32"), "%.2f"), fmt(t.get("hetrt_qdq"), "%.2f"),
        fmt(t.get("ort_fp32"), "%.2f"), fmt(t.get("ort_qdq"), "%.2f"),
        fmt(r.get("cosine"), "%.5f"), top1, lsb, off, ort_cos, others or "-")


def table(results_dir, models):
    rows = ["| model | method | hetrt fp32 ms | hetrt QDQ ms | ORT fp32 ms | ORT QDQ ms "
            "| cosine | top-1 agreement | max LSB hetrt vs ORT (QDQ) | values >= 1 LSB off "
            "| ORT cosine fp32 vs QDQ | cosine, other method |",
            "|" + "---|" * 12]
    for m in models:
        rows.append(table_row(os.path.join(results_dir, m)))
    dyn = [m for m in models if "hetrt_dyn" in best_times(os.path.join(results_dir, m))]
    if dyn:
        rows += ["", "| model (--dynamic) | hetrt fp32 ms | hetrt dynamic ms | ORT dynamic ms | cosine |",
                 "|---|---|---|---|---|"]
    for m in dyn:
        d = os.path.join(results_dir, m)
        t, r = best_times(d), parse_report(os.path.join(d, "dynamic.txt")) or {}
        rows.append("| %s | %s | %s | %s | %s |" % (
            m, fmt(t.get("hetrt_fp32"), "%.2f"), fmt(t.get("hetrt_dyn"), "%.2f"),
            fmt(t.get("ort_dyn"), "%.2f"), fmt(r.get("cosine"), "%.5f")))
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("report")
    p.add_argument("path")
    p = sub.add_parser("outputs")
    p.add_argument("--qdq", required=True)
    p.add_argument("--hetrt", required=True)
    p.add_argument("--ort", required=True)
    p.add_argument("--ort-fp32")
    p = sub.add_parser("pick")
    p.add_argument("dir")
    p = sub.add_parser("table")
    p.add_argument("dir")
    p.add_argument("models", nargs="+")
    args = ap.parse_args()
    if args.cmd == "report":
        r = parse_report(args.path)
        if r is None:
            sys.exit("%s: no accuracy line" % args.path)
        print(json.dumps(r))
    elif args.cmd == "outputs":
        compare_outputs(args)
    elif args.cmd == "pick":
        print(pick(args.dir))
    else:
        table(args.dir, args.models)


if __name__ == "__main__":
    main()
