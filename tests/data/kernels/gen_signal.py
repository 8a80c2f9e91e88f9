#!/usr/bin/python3
"""gen_signal.py - writes backend-test-layout cases for the signal/vision
operator group under tests/data/kernels/signal/ (model.onnx +
test_data_set_0/input_N.pb, output_N.pb).  They cover what the ONNX node
suite does not: NonMaxSuppression over several batches and classes (and
with optional inputs omitted), GridSample on non-square, multi-channel
input in every mode/padding pair that matters (torch reference), RoiAlign
against torchvision (opset 10 default and opset 16), DFT with dft_length,
onesided and inverse on non-power-of-two lengths, complex two-sided STFT,
windows with other output types, MelWeightMatrix.  Cases named err_* are
invalid models the errors suite expects to fail naming the node.
Run: /usr/bin/python3 tests/data/kernels/gen_signal.py
"""
import os
import shutil

import numpy as np
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "signal")
RNG = np.random.default_rng(4321)
NP2ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
           np.float16: TensorProto.FLOAT16, np.int64: TensorProto.INT64,
           np.int32: TensorProto.INT32, np.uint8: TensorProto.UINT8}


def vinfo(name, arr):
    return helper.make_tensor_value_info(name, NP2ONNX[arr.dtype.type],
                                         list(arr.shape))


def case(name, op, inputs, outputs, opset, **attrs):
    """inputs/outputs: lists of (name, array); an input named '' is omitted."""
    node = helper.make_node(op, [n for n, _ in inputs],
                            [n for n, _ in outputs], name=name + "_node",
                            **attrs)
    graph = helper.make_graph(
        [node], name, [vinfo(n, a) for n, a in inputs if n],
        [helper.make_tensor_value_info(n, NP2ONNX[a.dtype.type], None)
         for n, a in outputs])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, items in (("input", [x for x in inputs if x[0]]),
                        ("output", outputs)):
        for i, (n, a) in enumerate(items):
            t = numpy_helper.from_array(a, n)
            with open(os.path.join(d, "test_data_set_0",
                                   "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(t.SerializeToString())


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- NonMaxSuppression ----

def iou(a, b, center):
    if center:
        a = [a[1] - a[3] / 2, a[0] - a[2] / 2, a[1] + a[3] / 2, a[0] + a[2] / 2]
        b = [b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2]
    a = [min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])]
    b = [min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])]
    h = min(a[2], b[2]) - max(a[0], b[0])
    w = min(a[3], b[3]) - max(a[1], b[1])
    if h <= 0 or w <= 0:
        return 0.0
    inter = h * w
    ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / ua


def nms_ref(boxes, scores, max_out, iou_thr, score_thr, center):
    sel = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = [i for i in sorted(range(len(s)), key=lambda i: (-s[i], i))
                     if score_thr is None or s[i] > score_thr]
            kept = []
            for i in order:
                if len(kept) >= max_out:
                    break
                if all(iou(boxes[b, k], boxes[b, i], center) <= iou_thr
                       for k in kept):
                    kept.append(i)
                    sel.append([b, c, i])
    return np.array(sel, np.int64).reshape(-1, 3)


def nms_boxes(nb, n):
    xy = RNG.uniform(0, 10, (nb, n, 2))
    wh = RNG.uniform(1, 5, (nb, n, 2))
    return np.concatenate([xy, xy + wh], axis=2).astype(np.float32)


def nms_cases():
    boxes = nms_boxes(2, 12)
    scores = RNG.uniform(0, 1, (2, 3, 12)).astype(np.float32)
    mo, it, st = np.array([4], np.int64), np.array([0.3], np.float32), \
        np.array([0.25], np.float32)
    case("nms_batches_classes", "NonMaxSuppression",
         [("boxes", boxes), ("scores", scores), ("max_out", mo),
          ("iou", it), ("score_thr", st)],
         [("sel", nms_ref(boxes, scores, 4, 0.3, 0.25, False))], 11)
    cb = np.concatenate([boxes[..., :2] + 2, boxes[..., 2:] - boxes[..., :2]],
                        axis=2).astype(np.float32)
    case("nms_center_no_score_threshold", "NonMaxSuppression",
         [("boxes", cb), ("scores", scores), ("max_out", np.array([12],
                                                                  np.int64))],
         [("sel", nms_ref(cb, scores, 12, 0.0, None, True))], 11,
         center_point_box=1)
    case("nms_no_max_is_empty", "NonMaxSuppression",
         [("boxes", boxes), ("scores", scores)],
         [("sel", np.zeros((0, 3), np.int64))], 10)


# ---- GridSample ----

def grid_sample(x, g, mode, pad, ac):
    y = torch.nn.functional.grid_sample(
        torch.from_numpy(x), torch.from_numpy(g), mode=mode, padding_mode=pad,
        align_corners=bool(ac))
    return y.numpy()


def grid_sample_cases():
    x = rand(2, 3, 5, 7)
    g = RNG.uniform(-1.3, 1.3, (2, 4, 6, 2)).astype(np.float32)
    for mode, pad, ac in (("bilinear", "zeros", 0), ("bilinear", "reflection", 0),
                          ("nearest", "border", 1), ("bicubic", "zeros", 1),
                          ("bicubic", "border", 0),
                          ("bicubic", "reflection", 1)):
        case("gridsample_%s_%s_ac%d" % (mode, pad, ac), "GridSample",
             [("x", x), ("grid", g)],
             [("y", grid_sample(x, g, mode, pad, ac))], 16, mode=mode,
             padding_mode=pad, align_corners=ac)
    xd, gd = x.astype(np.float64), g.astype(np.float64)
    case("gridsample_float64", "GridSample", [("x", xd), ("grid", gd)],
         [("y", grid_sample(xd, gd, "bilinear", "border", 0))], 16,
         padding_mode="border")


# ---- RoiAlign ----

def roi_align_cases():
    x = RNG.uniform(0, 1, (2, 3, 9, 11)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 7.5, 6.0], [2.0, 0.0, 10.0, 8.5],
                     [3.3, 2.2, 4.1, 3.0], [-1.0, -1.0, 4.0, 3.0]], np.float32)
    bi = np.array([0, 1, 1, 0], np.int64)
    tb = torch.cat([torch.from_numpy(bi).double()[:, None],
                    torch.from_numpy(rois).double()], 1)
    for name, opset, aligned, attrs in (
            ("roialign_opset10_default", 10, False, {}),
            ("roialign_opset16_half_pixel", 16, True, {}),
            ("roialign_opset16_output_half_pixel_adaptive", 16, False,
             {"coordinate_transformation_mode": "output_half_pixel"})):
        sr = 0 if "adaptive" in name else 2
        y = torchvision.ops.roi_align(torch.from_numpy(x).double(), tb,
                                      (3, 4), spatial_scale=0.5,
                                      sampling_ratio=sr, aligned=aligned)
        case(name, "RoiAlign", [("x", x), ("rois", rois), ("bi", bi)],
             [("y", y.numpy().astype(np.float32))], opset, output_height=3,
             output_width=4, sampling_ratio=sr, spatial_scale=0.5, **attrs)


# ---- DFT / STFT ----

def cplx(z):
    return np.stack([z.real, z.imag], -1)


def dft_cases():
    x = rand(2, 12, 3, 1)
    case("dft_onesided_padded", "DFT", [("x", x), ("n", np.array(16, np.int64))],
         [("y", cplx(np.fft.rfft(x[..., 0], n=16, axis=1)).astype(np.float32))],
         17, axis=1, onesided=1)
    z = rand(2, 3, 10, 2)
    zc = z[..., 0] + 1j * z[..., 1]
    case("dft_inverse_truncated_axis2", "DFT",
         [("x", z), ("n", np.array([7], np.int32))],
         [("y", cplx(np.fft.ifft(zc, n=7, axis=2)).astype(np.float32))], 17,
         axis=2, inverse=1)
    z = rand(1, 97, 2, 2)
    zc = z[..., 0] + 1j * z[..., 1]
    case("dft_bluestein_prime_inverse", "DFT", [("x", z)],
         [("y", cplx(np.fft.ifft(zc, axis=1)).astype(np.float32))], 17,
         inverse=1)
    x = rand(2, 100, 1)
    case("dft_bluestein_100_onesided", "DFT", [("x", x)],
         [("y", cplx(np.fft.rfft(x[..., 0], axis=1)).astype(np.float32))], 17,
         onesided=1)
    xd = rand(3, 9, 2, dtype=np.float64)
    xdc = xd[..., 0] + 1j * xd[..., 1]
    case("dft_float64_negative_axis", "DFT", [("x", xd)],
         [("y", cplx(np.fft.fft(xdc, axis=1)))], 17, axis=-2)


def stft_cases():
    sig = rand(2, 50, 2)
    sc = sig[..., 0] + 1j * sig[..., 1]
    win = np.hanning(12).astype(np.float32)
    frames = (50 - 12) // 5 + 1
    y = np.stack([np.stack([np.fft.fft(sc[b, f * 5:f * 5 + 12] * win)
                            for f in range(frames)]) for b in range(2)])
    case("stft_complex_twosided", "STFT",
         [("sig", sig), ("step", np.array(5, np.int64)), ("win", win),
          ("len", np.array(12, np.int64))],
         [("y", cplx(y).astype(np.float32))], 17, onesided=0)


def stft_long_frame_case():
    sig = rand(1, 1200, 1)
    win = np.hanning(401)[:400].astype(np.float32)
    frames = (1200 - 400) // 160 + 1
    y = np.stack([np.fft.rfft(sig[0, f * 160:f * 160 + 400, 0].astype(
        np.float64) * win.astype(np.float64))
                  for f in range(frames)])[None]
    case("stft_frame_400_bluestein", "STFT",
         [("sig", sig), ("step", np.array(160, np.int64)), ("win", win)],
         [("y", cplx(y).astype(np.float32))], 17)


def window_cases():
    n = np.arange(7)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / 6)
    case("hannwindow_symmetric_double", "HannWindow",
         [("size", np.array(7, np.int64))], [("y", hann)], 17, periodic=0,
         output_datatype=TensorProto.DOUBLE)
    n = np.arange(16)
    black = 0.42 - 0.5 * np.cos(2 * np.pi * n / 16) + \
        0.08 * np.cos(4 * np.pi * n / 16)
    case("blackmanwindow_periodic_16", "BlackmanWindow",
         [("size", np.array(16, np.int32))], [("y", black.astype(np.float32))],
         17)
    ham = 25 / 46 - 21 / 46 * np.cos(2 * np.pi * np.arange(5) / 5)
    case("hammingwindow_float16", "HammingWindow",
         [("size", np.array(5, np.int64))], [("y", ham.astype(np.float16))], 17,
         output_datatype=TensorProto.FLOAT16)


def mel_ref(bins, dft_len, rate, lo, hi):
    lo_mel = 2595 * np.log10(1 + lo / 700)
    hi_mel = 2595 * np.log10(1 + hi / 700)
    edges = np.arange(bins + 2) * ((hi_mel - lo_mel) / (bins + 2)) + lo_mel
    edges = 700 * (np.power(10, edges / 2595) - 1)
    edges = (((dft_len + 1) * edges) // rate).astype(int)
    out = np.zeros((dft_len // 2 + 1, bins))
    for i in range(bins):
        l, c, h = edges[i], edges[i + 1], edges[i + 2]
        if c == l:
            out[c, i] = 1
        else:
            for j in range(l, c + 1):
                out[j, i] = (j - l) / (c - l)
        for j in range(c, h):
            out[j, i] = (h - j) / (h - c)
    return out.astype(np.float32)


def mel_cases():
    args = (10, 64, 16000, np.float32(100), np.float32(6000))
    case("melweightmatrix_64_10", "MelWeightMatrix",
         [("bins", np.array(10, np.int64)), ("len", np.array(64, np.int64)),
          ("rate", np.array(16000, np.int64)), ("lo", np.array(100, np.float32)),
          ("hi", np.array(6000, np.float32))], [("y", mel_ref(*args))], 17)


def limit_cases():
    case("nms_zero_boxes", "NonMaxSuppression",
         [("boxes", np.zeros((2, 0, 4), np.float32)),
          ("scores", np.zeros((2, 3, 0), np.float32)),
          ("max_out", np.array([5], np.int64))],
         [("sel", np.zeros((0, 3), np.int64))], 11)
    x = rand(1, 2, 1, 1)
    g = RNG.uniform(-3, 3, (1, 3, 5, 2)).astype(np.float32)
    case("gridsample_single_pixel_reflection_ac1", "GridSample",
         [("x", x), ("grid", g)],
         [("y", grid_sample(x, g, "bilinear", "reflection", 1))], 16,
         padding_mode="reflection", align_corners=1)
    x = rand(1, 1, 1)
    case("dft_length_one", "DFT", [("x", x)],
         [("y", cplx(np.fft.fft(x[..., 0], axis=1)).astype(np.float32))], 17)
    sig = rand(1, 9, 1)
    case("stft_single_frame_nonpow2", "STFT",
         [("sig", sig), ("step", np.array(4, np.int64)), ("",
                                                           np.zeros(0)),
          ("len", np.array(9, np.int64))],
         [("y", cplx(np.fft.rfft(sig[0, :, 0]))[None, None].astype(
             np.float32))], 17)


def error_cases():
    x = rand(1, 1, 3, 3)
    case("err_gridsample_grid_rank", "GridSample",
         [("x", x), ("grid", rand(1, 4, 2))], [("y", x)], 16)
    case("err_nms_boxes_last_dim", "NonMaxSuppression",
         [("boxes", rand(1, 4, 3)), ("scores", rand(1, 1, 4))],
         [("sel", np.zeros((0, 3), np.int64))], 11)
    case("err_roialign_mode", "RoiAlign",
         [("x", x), ("rois", rand(1, 4)), ("bi", np.zeros(1, np.int64))],
         [("y", x)], 16, mode="median")
    case("err_roialign_batch_index", "RoiAlign",
         [("x", x), ("rois", rand(1, 4)), ("bi", np.array([3], np.int64))],
         [("y", x)], 16)
    case("err_dft_axis_is_complex_dim", "DFT", [("x", rand(1, 8, 2))],
         [("y", rand(1, 8, 2))], 17, axis=2)
    case("err_stft_window_mismatch", "STFT",
         [("sig", rand(1, 64, 1)), ("step", np.array(4, np.int64)),
          ("win", rand(8)), ("len", np.array(16, np.int64))],
         [("y", rand(1, 13, 9, 2))], 17)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    nms_cases()
    grid_sample_cases()
    roi_align_cases()
    dft_cases()
    stft_cases()
    stft_long_frame_case()
    window_cases()
    mel_cases()
    limit_cases()
    error_cases()


if __name__ == "__main__":
    main()
