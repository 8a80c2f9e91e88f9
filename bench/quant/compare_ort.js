// compare_ort.js — runs one ONNX model with ONNX Runtime (onnxruntime-node,
// one thread by default) on the input sets of a folder and writes each
// output as an ONNX TensorProto, so that bench/quant/compare.py can set ORT's
// outputs beside hetrt's (`hetrt run ... --output-dir D` writes output_K.pb).
// DIR holds test_data_set_N/input_K.pb folders (or, for a single-input model,
// one .pb per set); inputs bind by the TensorProto's name, else by position.
// OUTDIR/test_data_set_N/output_K.pb gets output K (session output order).
// With --runs R it also times R runs (after --warmup W) on the first set and
// prints one JSON line {"median_ms", "min_ms", "session_create_ms", ...}; with
// --no-output it only times.  --opt sets ORT's graph optimization level
// (default all, which fuses QDQ groups into int8 kernels; disabled runs
// the Q/DQ nodes as written, in float, as hetrt does).  Exit status 1 on
// any error (ORT rejecting the model included; the message is printed).
// Usage: node compare_ort.js MODEL.onnx DIR [--out OUTDIR] [--threads N]
//        [--warmup W] [--runs R] [--no-output] [--opt LEVEL]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'perf', 'node_modules', 'onnxruntime-node'));
const {timeRuns} = require(path.join(__dirname, '..', 'perf', 'ort_time.js'));

function parseArgs(argv) {
  const a = {model: null, dir: null, out: null, threads: 1, warmup: 3, runs: 0, output: true,
             opt: 'all'};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--out') a.out = argv[++i];
    else if (k === '--threads') a.threads = parseInt(argv[++i], 10);
    else if (k === '--warmup') a.warmup = parseInt(argv[++i], 10);
    else if (k === '--runs') a.runs = parseInt(argv[++i], 10);
    else if (k === '--no-output') a.output = false;
    else if (k === '--opt') a.opt = argv[++i];
    else if (!a.model) a.model = k;
    else if (!a.dir) a.dir = k;
    else throw new Error('unexpected argument ' + k);
  }
  if (!a.model || !a.dir || (a.output && !a.out)) {
    throw new Error('usage: node compare_ort.js MODEL.onnx DIR [--out OUTDIR] [--threads N] ' +
                    '[--warmup W] [--runs R] [--no-output] [--opt disabled|basic|extended|all]');
  }
  return a;
}

// ---- TensorProto (onnx.proto3): the fields numpy_helper and hetrt write ----

// data_type code -> [ort type name, typed array, bytes per element]
const DTYPES = {
  1: ['float32', Float32Array, 4], 2: ['uint8', Uint8Array, 1], 3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2], 5: ['int16', Int16Array, 2], 6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8], 9: ['bool', Uint8Array, 1], 10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8], 12: ['uint32', Uint32Array, 4],
  13: ['uint64', BigUint64Array, 8],
};
const CODE_OF = Object.fromEntries(Object.entries(DTYPES).map(([c, d]) => [d[0], Number(c)]));

function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos.i++];
    if (b === undefined) throw new Error('truncated varint');
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
    shift += 7n;
  }
}

// Decodes a TensorProto: {name, dims, dataType, data (typed array)}.
function decodeTensor(buf) {
  const t = {name: '', dims: [], dataType: 0, raw: null, floats: [], i32: [], i64: [], f64: []};
  const pos = {i: 0};
  const packed = (wire, len, fn) => {  // a repeated scalar, packed or not
    if (wire !== 2) return fn();
    const end = pos.i + len;
    while (pos.i < end) fn();
  };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos)), field = key >>> 3, wire = key & 7;
    let len = 0;
    if (wire === 2) len = Number(readVarint(buf, pos));
    const start = pos.i;
    if (field === 1) packed(wire, len, () => t.dims.push(Number(readVarint(buf, pos))));
    else if (field === 2) t.dataType = Number(readVarint(buf, pos));
    else if (field === 4) {
      packed(wire, len, () => { t.floats.push(buf.readFloatLE(pos.i)); pos.i += 4; });
    } else if (field === 5) packed(wire, len, () => t.i32.push(Number(BigInt.asIntN(32, readVarint(buf, pos)))));
    else if (field === 7) packed(wire, len, () => t.i64.push(BigInt.asIntN(64, readVarint(buf, pos))));
    else if (field === 10) {
      packed(wire, len, () => { t.f64.push(buf.readDoubleLE(pos.i)); pos.i += 8; });
    } else if (field === 8 && wire === 2) t.name = buf.toString('utf8', start, start + len);
    else if (field === 9 && wire === 2) t.raw = buf.subarray(start, start + len);
    else if (wire === 0) readVarint(buf, pos);
    else if (wire === 1) pos.i += 8;
    else if (wire === 5) pos.i += 4;
    else if (wire !== 2) throw new Error('unsupported wire type ' + wire);
    if (wire === 2) pos.i = start + len;
  }
  const d = DTYPES[t.dataType];
  if (!d) throw new Error('tensor ' + t.name + ': unsupported data_type ' + t.dataType);
  const n = t.dims.reduce((p, x) => p * x, 1);
  let data;
  if (t.raw) {
    const copy = new Uint8Array(t.raw);  // own ArrayBuffer at offset 0: aligned
    data = new d[1](copy.buffer, 0, copy.length / d[2]);
  } else if (t.dataType === 1) data = Float32Array.from(t.floats);
  else if (t.dataType === 11) data = Float64Array.from(t.f64);
  else if (t.dataType === 7) data = BigInt64Array.from(t.i64);
  else data = d[1].from(t.i32);
  if (data.length !== n) throw new Error('tensor ' + t.name + ': ' + data.length + ' values for dims ' + t.dims);
  return {name: t.name, dims: t.dims, type: d[0], data};
}

function varint(v) {
  const out = [];
  let x = BigInt(v);
  if (x < 0n) x = BigInt.asUintN(64, x);
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return Buffer.from(out);
}

function encodeTensor(name, tensor) {
  const code = CODE_OF[tensor.type];
  if (!code) throw new Error('output ' + name + ': cannot write type ' + tensor.type);
  const d = tensor.data;
  const raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  const nameBuf = Buffer.from(name, 'utf8');
  const parts = [];
  for (const dim of tensor.dims) parts.push(varint(1 << 3), varint(dim));
  parts.push(varint(2 << 3), varint(code));
  parts.push(varint((8 << 3) | 2), varint(nameBuf.length), nameBuf);
  parts.push(varint((9 << 3) | 2), varint(raw.length), raw);
  return Buffer.concat(parts);
}

// ---- input sets ----

function listSets(dir) {
  const natural = (x, y) => x.localeCompare(y, undefined, {numeric: true});
  const entries = fs.readdirSync(dir).sort(natural);
  const sets = entries.filter((e) => e.startsWith('test_data_set_'));
  if (sets.length) {
    return sets.map((s) => ({name: s, files: fs.readdirSync(path.join(dir, s))
      .filter((f) => /^input_.*\.pb$/.test(f)).sort(natural).map((f) => path.join(dir, s, f))}));
  }
  const pbs = entries.filter((e) => e.endsWith('.pb'));
  if (!pbs.length) throw new Error(dir + ': no test_data_set_* folder and no .pb file');
  return pbs.map((f) => ({name: path.basename(f, '.pb'), files: [path.join(dir, f)]}));
}

function feedsOf(session, files) {
  const feeds = {};
  files.forEach((f, k) => {
    const t = decodeTensor(fs.readFileSync(f));
    const name = session.inputNames.includes(t.name) ? t.name : session.inputNames[k];
    if (name === undefined) throw new Error(f + ': the model has only ' + session.inputNames.length + ' inputs');
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  });
  for (const n of session.inputNames) {
    if (!(n in feeds)) throw new Error('input ' + n + ' missing among ' + files.join(', '));
  }
  return feeds;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const opts = {
    intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: a.opt, executionProviders: ['cpu'],
  };
  const t0 = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(a.model, opts);
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const sets = listSets(a.dir);
  if (a.output) {
    for (const set of sets) {
      const res = await s.run(feedsOf(s, set.files));
      const od = path.join(a.out, set.name);
      fs.mkdirSync(od, {recursive: true});
      s.outputNames.forEach((n, k) => {
        fs.writeFileSync(path.join(od, 'output_' + k + '.pb'), encodeTensor(n, res[n]));
      });
    }
  }
  if (a.runs > 0) {
    const t = await timeRuns(s, feedsOf(s, sets[0].files), a.warmup, a.runs);
    console.log(JSON.stringify({median_ms: t.median_ms, min_ms: t.min_ms, session_create_ms: createMs,
                                runs: t.runs, threads: a.threads, sets: sets.length,
                                ort: ort.env.versions.common}));
  }
}

main().catch((e) => { console.error('compare_ort: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
