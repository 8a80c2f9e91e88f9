#!/usr/bin/env python3
"""gen_regressions.py — writes the hand-made reproducers of
tests/fuzz/regressions/fuzz_model/ (the others there are libFuzzer's own
crash files, kept as found): ONNX models whose initializers carry the
values that crashed the library.  A tiny protobuf encoder, so it needs no
onnx module.  Run from anywhere: python3 gen_regressions.py"""
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fuzz_model')
FLOAT, INT64 = 1, 7


def varint(v):
    v &= (1 << 64) - 1
    out = b''
    while True:
        b, v = v & 0x7f, v >> 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def key(field, wire):
    return varint(field << 3 | wire)


def msg(field, body):
    return key(field, 2) + varint(len(body)) + body


def string(field, s):
    return msg(field, s.encode())


def integer(field, v):
    return key(field, 0) + varint(v)


def tensor_type(elem, dims):
    shape = b''.join(msg(1, integer(1, d)) for d in dims)
    return msg(1, integer(1, elem) + msg(2, shape))  # TypeProto.tensor_type


def value_info(name, elem, dims):
    return string(1, name) + msg(2, tensor_type(elem, dims))


def int64_tensor(name, values):
    raw = b''.join(struct.pack('<q', v) for v in values)
    return (integer(1, len(values)) + integer(2, INT64) + string(8, name) +
            msg(9, raw))


def model(nodes, inputs, outputs, inits, opset=13):
    graph = b''.join(msg(1, n) for n in nodes) + string(2, 'g')
    graph += b''.join(msg(5, t) for t in inits)
    graph += b''.join(msg(11, v) for v in inputs)
    graph += b''.join(msg(12, v) for v in outputs)
    return (integer(1, 8) + msg(7, graph) +
            msg(8, string(1, '') + integer(2, opset)))


def node(op, ins, outs, name):
    return (b''.join(string(1, i) for i in ins) +
            b''.join(string(2, o) for o in outs) + string(3, name) +
            string(4, op))


def write(name, data):
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)


os.makedirs(HERE, exist_ok=True)
# Tile: dim 3 times repeat 2^62 overflowed int64 in shape inference.
write('tile_repeat_overflow.onnx', model(
    [node('Tile', ['x', 'r'], ['y'], 'tile')],
    [value_info('x', FLOAT, [2, 3])], [value_info('y', FLOAT, [])],
    [int64_tensor('r', [1, 1 << 62])]))
# Reshape: the product of the known target dims (2^40 * 2^40) overflowed
# int64 while resolving the -1 dim.
write('reshape_target_overflow.onnx', model(
    [node('Reshape', ['x', 's'], ['y'], 'reshape')],
    [value_info('x', FLOAT, [2, 3])], [value_info('y', FLOAT, [])],
    [int64_tensor('s', [-1, 1 << 40, 1 << 40])]))
