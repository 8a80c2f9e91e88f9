// ort_time.js — times runs of an ONNX Runtime session on fixed feeds, for
// ort_bench.js and bench/quant/compare_ort.js: warm-up runs, then `runs`
// timed ones; returns {median_ms, min_ms, runs}.
'use strict';

async function timeRuns(session, feeds, warmup, runs) {
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((x, y) => x - y);
  const n = times.length;
  const median = n % 2 ? times[(n - 1) / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  return {median_ms: median, min_ms: times[0], runs: n};
}

module.exports = {timeRuns};
