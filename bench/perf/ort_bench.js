// ort_bench.js — times one ONNX model with ONNX Runtime (onnxruntime-node):
// session creation, then warm-up and timed runs on random inputs of the
// model's input shapes (symbolic dims -> 1).  Prints one JSON line:
// {"median_ms", "min_ms", "session_create_ms", "runs", "threads", "ort"}.
// --profile PREFIX: ORT's own per-node profile of the warm-up and timed
// runs goes to PREFIX_<date>.json (ORT's naming).
// Usage: node ort_bench.js MODEL.onnx [--threads N] [--warmup W] [--runs R]
//        [--profile PREFIX]
'use strict';
const ort = require('onnxruntime-node');
const {timeRuns} = require('./ort_time.js');

function parseArgs(argv) {
  const a = {model: null, threads: 1, warmup: 3, runs: 20, profile: null};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--threads') a.threads = parseInt(argv[++i], 10);
    else if (k === '--warmup') a.warmup = parseInt(argv[++i], 10);
    else if (k === '--runs') a.runs = parseInt(argv[++i], 10);
    else if (k === '--profile') a.profile = argv[++i];
    else if (!a.model) a.model = k;
    else throw new Error('unexpected argument ' + k);
  }
  if (!a.model) {
    throw new Error('usage: node ort_bench.js MODEL.onnx [--threads N] [--warmup W] [--runs R] ' +
                    '[--profile PREFIX]');
  }
  return a;
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array,
  int64: BigInt64Array, uint8: Uint8Array, int8: Int8Array, bool: Uint8Array,
};

function randomTensor(meta) {
  const type = meta.type || 'float32';
  const dims = (meta.shape || []).map((d) => (typeof d === 'number' && d > 0 ? d : 1));
  const n = dims.reduce((p, d) => p * d, 1);
  const Arr = ARRAYS[type];
  if (!Arr) throw new Error('unsupported input type ' + type + ' for ' + meta.name);
  const data = new Arr(n);
  for (let i = 0; i < n; i++) {
    if (type === 'int64') data[i] = 0n;
    else if (type.startsWith('float')) data[i] = Math.random() * 2 - 1;
    else data[i] = 0;
  }
  return new ort.Tensor(type, data, dims);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const opts = {
    intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', executionProviders: ['cpu'],
  };
  if (a.profile) {
    opts.enableProfiling = true;
    opts.profileFilePrefix = a.profile;
  }
  const t0 = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(a.model, opts);
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  for (const meta of s.inputMetadata) feeds[meta.name] = randomTensor(meta);
  const t = await timeRuns(s, feeds, a.warmup, a.runs);
  const out = {median_ms: t.median_ms, min_ms: t.min_ms, session_create_ms: createMs,
               runs: t.runs, threads: a.threads, ort: ort.env.versions.common};
  if (a.profile) await s.endProfiling();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error('ort_bench: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
