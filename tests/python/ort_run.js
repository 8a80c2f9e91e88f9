// ort_run.js — runs an ONNX model once with ONNX Runtime (onnxruntime-node)
// on float32 inputs from raw files, for test_ort.py's comparison.
// Usage: node ort_run.js MODEL.onnx OUTDIR NAME=FILE.f32:D0xD1x... ...
// Writes OUTDIR/<output>.f32 (raw little-endian float32) per output and
// prints one JSON line {output: dims}.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const [model, outDir, ...specs] = process.argv.slice(2);
  const feeds = {};
  for (const spec of specs) {
    const m = /^([^=]+)=(.+):([0-9x]+)$/.exec(spec);
    if (!m) throw new Error('bad input spec ' + spec);
    const dims = m[3].split('x').map(Number);
    const buf = fs.readFileSync(m[2]);
    const data = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    feeds[m[1]] = new ort.Tensor('float32', Float32Array.from(data), dims);
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: 1,
  });
  const results = await session.run(feeds);
  const shapes = {};
  for (const [name, t] of Object.entries(results)) {
    if (t.type !== 'float32') throw new Error('output ' + name + ' is ' + t.type);
    fs.writeFileSync(path.join(outDir, name + '.f32'), Buffer.from(t.data.buffer, t.data.byteOffset,
                                                                   t.data.byteLength));
    shapes[name] = t.dims;
  }
  console.log(JSON.stringify(shapes));
}

main().catch((e) => { console.error('ort_run: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
