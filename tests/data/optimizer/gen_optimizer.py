#!/usr/bin/python3
"""Generates the optimizer test models under tests/data/optimizer/<case>/ in
the backend-test layout (model.onnx + test_data_set_N/*.pb).  References
come from numpy or torch; tests/test_optimizer.c checks node counts after
het_optimize and compares optimized against unoptimized outputs.
Run: /usr/bin/python3 gen_optimizer.py
"""
import os
import shutil

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(11)
torch.manual_seed(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def case_dir(name):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def write_data(d, sets):
    """sets: list of (inputs, outputs), each a list of (name, ndarray)."""
    for k, (inputs, outputs) in enumerate(sets):
        sd = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(sd)
        for kind, vals in (("input", inputs), ("output", outputs)):
            for i, (n, a) in enumerate(vals):
                with open(os.path.join(sd, f"{kind}_{i}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(a, n).SerializeToString())


def save(name, nodes, sets, opset, inits=(), shapes=None):
    """sets[0] gives the declared inputs/outputs; shapes overrides declared
    shapes by value name (symbolic dims as strings)."""
    shapes = shapes or {}
    inputs, outputs = sets[0]

    def vi(n, a):
        t = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
        return helper.make_tensor_value_info(n, t, shapes.get(n, a.shape))
    graph = helper.make_graph(
        nodes, name, [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = case_dir(name)
    onnx.save(model, os.path.join(d, "model.onnx"))
    write_data(d, sets)


def gen_identity_chain():
    # X -> Id -> Id -> Relu -> Id -> Y;  b + K -> Id -> Z;  relu * Id(K) -> Id -> W
    x, k = f32(2, 3), f32(2, 3)
    n = helper.make_node
    nodes = [n("Identity", ["X"], ["a"]), n("Identity", ["a"], ["b"]),
             n("Relu", ["b"], ["c"]), n("Identity", ["c"], ["Y"]),
             n("Add", ["b", "K"], ["d"]), n("Identity", ["d"], ["Z"]),
             n("Identity", ["K"], ["k2"]), n("Mul", ["c", "k2"], ["e"]),
             n("Identity", ["e"], ["W"])]
    r = np.maximum(x, 0)
    save("identity_chain", nodes,
         [([("X", x)], [("Y", r), ("Z", x + k), ("W", r * k)])], 13, [("K", k)])


def gen_identity_passthrough():
    # Graph input straight to a graph output, and one graph output copied
    # into another: no producer can take the name, the Identities stay.
    x = f32(4)
    n = helper.make_node
    nodes = [n("Identity", ["X"], ["Y"]), n("Identity", ["Y"], ["Z"])]
    save("identity_passthrough", nodes, [([("X", x)], [("Y", x), ("Z", x)])], 13)


def gen_dropout():
    x = f32(3, 4)
    n = helper.make_node
    ratio = np.array(0.3, np.float32)
    nodes = [n("Dropout", ["X", "ratio"], ["a", "unused_mask"]),
             n("Dropout", ["a", "ratio", "train"], ["b"]),
             n("Relu", ["b"], ["Y"]),
             n("Dropout", ["X"], ["Y2", "M"])]
    save("dropout", nodes,
         [([("X", x)], [("Y", np.maximum(x, 0)), ("Y2", x),
                        ("M", np.ones((3, 4), bool))])],
         13, [("ratio", ratio), ("train", np.array(False))])


def gen_dropout_opset7():
    x = f32(5)
    n = helper.make_node
    nodes = [n("Abs", ["X"], ["a"]), n("Dropout", ["a"], ["Y"], ratio=0.5)]
    save("dropout_opset7", nodes, [([("X", x)], [("Y", np.abs(x))])], 7)


def gen_const_chain():
    # Everything but the last Add is constant; Neg(X) is read by nobody.
    x, k = f32(2, 3), f32(2, 3)
    n = helper.make_node
    c1 = np.array([1.0, -2.0, 0.25], np.float32)
    shp = np.array([2, 3], np.int64)
    nodes = [
        n("Constant", [], ["c1"], value=numpy_helper.from_array(c1)),
        n("Constant", [], ["shp"], value=numpy_helper.from_array(shp)),
        n("ConstantOfShape", ["shp"], ["cs"],
          value=numpy_helper.from_array(np.array([0.5], np.float32))),
        n("Add", ["cs", "c1"], ["t1"]), n("Mul", ["t1", "K"], ["t2"]),
        n("Range", ["r0", "r1", "r2"], ["r"]), n("Cast", ["r"], ["rf"], to=1),
        n("Add", ["t2", "rf"], ["t3"]), n("Add", ["X", "t3"], ["Y"]),
        n("Neg", ["X"], ["unused"])]
    t3 = (0.5 + c1) * k + np.arange(3, dtype=np.float32)
    inits = [("K", k), ("r0", np.array(0, np.int64)), ("r1", np.array(3, np.int64)),
             ("r2", np.array(1, np.int64))]
    save("const_chain", nodes, [([("X", x)], [("Y", x + t3)])], 13, inits)


def gen_shape_dynamic():
    # X is [N,3,4]: Shape(X) cannot fold, Shape(X, start=1) can.
    x = f32(2, 3, 4)
    n = helper.make_node
    nodes = [n("Shape", ["X"], ["s"]),
             n("Gather", ["s", "zero"], ["n0"], axis=0),
             n("Unsqueeze", ["n0", "axes"], ["nu"]),
             n("Shape", ["X"], ["s2"], start=1),
             n("ReduceProd", ["s2"], ["p"], keepdims=1),
             n("Concat", ["nu", "p"], ["shp"], axis=0),
             n("Reshape", ["X", "shp"], ["Y"])]
    inits = [("zero", np.array(0, np.int64)), ("axes", np.array([0], np.int64))]
    save("shape_dynamic", nodes, [([("X", x)], [("Y", x.reshape(2, 12))])], 15,
         inits, shapes={"X": ["N", 3, 4], "Y": ["N", 12]})


def gen_shape_sym():
    # X is [batch, seq, 24]: three Reshapes whose targets are computed from
    # Shape(X) (core/infer_sym.c): [0, seq*2, 24/2] -> [batch, seq*2, 12];
    # [batch, -1, 24/6] -> [batch, ?, 4]; [batch, (seq+1)-1, 24] through
    # Add, Sub, Squeeze and Unsqueeze.  Its own generator, so that adding
    # it changed no other case's data.
    rng = np.random.default_rng(23)
    n = helper.make_node
    i64 = lambda v: np.array(v, np.int64)
    nodes = [n("Shape", ["X"], ["s"]),
             n("Gather", ["s", "i0"], ["b"], axis=0),
             n("Gather", ["s", "i1"], ["t"], axis=0),
             n("Gather", ["s", "i2"], ["c"], axis=0),
             n("Div", ["c", "k2"], ["half"]),
             n("Div", ["c", "k6"], ["sixth"]),
             n("Mul", ["t", "k2"], ["t2"]),
             n("Add", ["t", "one"], ["t1"]),
             n("Sub", ["t1", "one"], ["t0"]),
             n("Unsqueeze", ["b", "ax"], ["bu0"]),
             n("Squeeze", ["bu0", "ax"], ["bs"]),
             n("Unsqueeze", ["bs", "ax"], ["bu"]),
             n("Unsqueeze", ["t2", "ax"], ["t2u"]),
             n("Unsqueeze", ["half", "ax"], ["hu"]),
             n("Unsqueeze", ["sixth", "ax"], ["su"]),
             n("Unsqueeze", ["t0", "ax"], ["t0u"]),
             n("Concat", ["zero", "t2u", "hu"], ["tgt1"], axis=0),
             n("Concat", ["bu", "minus1", "su"], ["tgt2"], axis=0),
             n("Concat", ["bu", "t0u", "c24"], ["tgt3"], axis=0),
             n("Reshape", ["X", "tgt1"], ["Y1"]),
             n("Reshape", ["X", "tgt2"], ["Y2"]),
             n("Reshape", ["X", "tgt3"], ["Y3"])]
    inits = [("i0", i64(0)), ("i1", i64(1)), ("i2", i64(-1)), ("k2", i64(2)),
             ("k6", i64(6)), ("one", i64(1)), ("ax", i64([0])), ("zero", i64([0])),
             ("minus1", i64([-1])), ("c24", i64([24]))]
    sets = []
    for b, t in ((2, 3), (1, 5)):
        x = rng.standard_normal((b, t, 24)).astype(np.float32)
        sets.append(([("X", x)], [("Y1", x.reshape(b, t * 2, 12)),
                                  ("Y2", x.reshape(b, -1, 4)),
                                  ("Y3", x.reshape(b, t, 24))]))
    save("shape_sym", nodes, sets, 13, inits,
         shapes={"X": ["batch", "seq", 24], "Y1": ["o0", "o1", "o2"],
                 "Y2": ["p0", "p1", "p2"], "Y3": ["q0", "q1", "q2"]})


def gen_bn_fold():
    # Conv without bias, group 2, BatchNormalization-9 with epsilon 1e-3.
    x, w = f32(1, 4, 5, 5), f32(6, 2, 3, 3)
    g, b, m = f32(6), f32(6), f32(6)
    v = (RNG.random(6) + 0.5).astype(np.float32)
    n = helper.make_node
    nodes = [n("Conv", ["X", "W"], ["c"], group=2, pads=[1, 1, 1, 1]),
             n("BatchNormalization", ["c", "g", "b", "m", "v"], ["Y"], epsilon=1e-3)]
    c = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                   padding=1, groups=2)
    y = torch.nn.functional.batch_norm(c, torch.from_numpy(m), torch.from_numpy(v),
                                       torch.from_numpy(g), torch.from_numpy(b),
                                       eps=1e-3).numpy()
    save("bn_fold", nodes, [([("X", x)], [("Y", y)])], 9,
         [("W", w), ("g", g), ("b", b), ("m", m), ("v", v)])


def gen_bn_shared():
    # The Conv output is also read by a Relu: the BatchNormalization stays.
    x, w, cb = f32(1, 2, 4, 4), f32(3, 2, 3, 3), f32(3)
    g, b, m = f32(3), f32(3), f32(3)
    v = (RNG.random(3) + 0.5).astype(np.float32)
    n = helper.make_node
    nodes = [n("Conv", ["X", "W", "cb"], ["c"]),
             n("BatchNormalization", ["c", "g", "b", "m", "v"], ["Y"]),
             n("Relu", ["c"], ["Z"])]
    c = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                   torch.from_numpy(cb))
    y = torch.nn.functional.batch_norm(c, torch.from_numpy(m), torch.from_numpy(v),
                                       torch.from_numpy(g), torch.from_numpy(b),
                                       eps=1e-5).numpy()
    save("bn_shared", nodes, [([("X", x)], [("Y", y), ("Z", np.maximum(c.numpy(), 0))])],
         14, [("W", w), ("cb", cb), ("g", g), ("b", b), ("m", m), ("v", v)])


def gen_bn_chain():
    # Conv -> BN -> BN -> Relu: the second BN folds into the already folded
    # Conv within the same round.
    x, w, cb = f32(1, 3, 5, 5), f32(4, 3, 3, 3), f32(4)
    p = [f32(4), f32(4), f32(4), (RNG.random(4) + 0.5).astype(np.float32),
         f32(4), f32(4), f32(4), (RNG.random(4) + 0.5).astype(np.float32)]
    n = helper.make_node
    nodes = [n("Conv", ["X", "W", "cb"], ["c"]),
             n("BatchNormalization", ["c", "g1", "b1", "m1", "v1"], ["n1"]),
             n("BatchNormalization", ["n1", "g2", "b2", "m2", "v2"], ["n2"]),
             n("Relu", ["n2"], ["Y"])]
    t = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                   torch.from_numpy(cb))
    for k in (0, 4):
        g, b, m, v = (torch.from_numpy(a) for a in p[k:k + 4])
        t = torch.nn.functional.batch_norm(t, m, v, g, b, eps=1e-5)
    names = ["g1", "b1", "m1", "v1", "g2", "b2", "m2", "v2"]
    save("bn_chain", nodes, [([("X", x)], [("Y", torch.relu(t).numpy())])], 14,
         [("W", w), ("cb", cb)] + list(zip(names, p)))


def gen_if_outer():
    # Both branches read outer values: k (a foldable Mul) and k_id (an
    # Identity of it); the If stays and so do the names it reads.  cond is
    # cond_in xor (sum(k_id) > 100) = cond_in: it makes the If explicitly
    # depend on k_id, since hetrt's topological order does not yet see the
    # implicit outer-scope reads of a subgraph.
    n = helper.make_node
    c = np.array([1.0, 2.0, 3.0], np.float32)
    t_out = helper.make_tensor_value_info("ty", TensorProto.FLOAT, [3])
    e_out = helper.make_tensor_value_info("ey", TensorProto.FLOAT, [3])
    then_g = helper.make_graph([n("Add", ["X", "k"], ["ty"])], "then", [], [t_out])
    else_g = helper.make_graph([n("Sub", ["X", "k_id"], ["ey"])], "else", [], [e_out])
    nodes = [n("Constant", [], ["c"], value=numpy_helper.from_array(c)),
             n("Mul", ["c", "c"], ["k"]), n("Identity", ["k"], ["k_id"]),
             n("ReduceSum", ["k_id"], ["ks"], keepdims=0),
             n("Greater", ["ks", "thr"], ["big"]),
             n("Xor", ["cond_in", "big"], ["cond"]),
             n("If", ["cond"], ["Y"], then_branch=then_g, else_branch=else_g)]
    x = f32(3)
    sets = [([("X", x), ("cond_in", np.array(True))], [("Y", x + c * c)]),
            ([("X", x), ("cond_in", np.array(False))], [("Y", x - c * c)])]
    save("if_outer", nodes, sets, 13, [("thr", np.array(100.0, np.float32))])


def gen_fold_large():
    # ConstantOfShape of 20 MiB is over the folding limit: it and the
    # ReduceSum reading it stay run-time nodes.
    x = f32(3)
    n = helper.make_node
    nodes = [n("ConstantOfShape", ["shp"], ["big"],
               value=numpy_helper.from_array(np.array([0.5], np.float32))),
             n("ReduceSum", ["big"], ["s"], keepdims=0),
             n("Add", ["X", "s"], ["Y"])]
    shp = np.array([5, 1024, 1024], np.int64)
    save("fold_large", nodes, [([("X", x)], [("Y", x + np.float32(2621440))])],
         13, [("shp", shp)])


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 6 * 6, 10)
        for bn in (self.bn1, self.bn2):
            bn.running_mean.copy_(torch.randn(8))
            bn.running_var.copy_(torch.rand(8) + 0.5)
            bn.weight.data.copy_(torch.randn(8))
            bn.bias.data.copy_(torch.randn(8))

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        return self.fc(x.reshape(x.shape[0], -1))


def gen_cnn_bn():
    # PRESERVE keeps BatchNormalization nodes (EVAL lets torch fold them).
    # Exported with a dynamic batch so torch emits Shape->Gather->Unsqueeze
    # ->Concat->Reshape, then the batch is fixed to 2: the chain is static.
    net = SmallCNN().eval()
    x = torch.randn(2, 3, 6, 6)
    d = case_dir("cnn_bn")
    path = os.path.join(d, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(net, x, path, opset_version=13, input_names=["X"],
                          output_names=["Y"], do_constant_folding=False,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          dynamic_axes={"X": {0: "N"}, "Y": {0: "N"}})
        y = net(x).numpy()
    model = onnx.load(path)
    for v in (model.graph.input[0], model.graph.output[0]):
        v.type.tensor_type.shape.dim[0].dim_value = 2
    del model.graph.value_info[:]
    onnx.save(model, path)
    ops = [nd.op_type for nd in model.graph.node]
    assert "BatchNormalization" in ops and "Shape" in ops, ops
    write_data(d, [([("X", x.numpy())], [("Y", y)])])


def main():
    gen_identity_chain()
    gen_identity_passthrough()
    gen_dropout()
    gen_dropout_opset7()
    gen_const_chain()
    gen_shape_dynamic()
    gen_bn_fold()
    gen_bn_shared()
    gen_bn_chain()
    gen_if_outer()
    gen_cnn_bn()
    gen_fold_large()
    gen_shape_sym()


if __name__ == "__main__":
    main()
