#!/usr/bin/env bash
# test_cli.sh — end-to-end checks of the `hetrt` command line: --help,
# --version and the exit codes of every command (0 ok, 1 failure, 2 usage,
# with the option or file at fault named), the shared option names, the
# progress line, the PASS/FAIL/SKIP lines and summary of `hetrt test`,
# --expected and --list-passing, --fork, `hetrt run` outputs (.pb round trip
# through `hetrt test`), missing-input errors, `hetrt bench`'s last line, and
# `hetrt quantize` (input folders, methods, report, usage and model errors),
# `hetrt policy check` with --policy and --shape, and `hetrt compile` /
# `hetrt plan info` with a plan run like a model.
# Usage: test_cli.sh PATH/TO/hetrt   (uses the ONNX backend node tests)
set -u
HETRT=${1:?usage: test_cli.sh PATH/TO/hetrt}
NODE=${HETRT_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$NODE/test_abs" ]; then
  echo "SKIP: $NODE not found (install libonnx-testdata)"
  exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# expect_rc WANT CMD... : runs CMD, keeps stdout in $WORK/out and stderr in
# $WORK/err, and checks the exit status.
expect_rc() {
  local want=$1; shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "exit $rc (wanted $want): $*"
    sed 's/^/  | /' "$WORK/out" "$WORK/err" | tail -20
    return 1
  fi
  return 0
}
expect_out() { grep -q -- "$1" "$WORK/out" || { fail "stdout lacks '$1'"; sed 's/^/  | /' "$WORK/out" | tail -10; }; }
expect_err() { grep -q -- "$1" "$WORK/err" || { fail "stderr lacks '$1'"; sed 's/^/  | /' "$WORK/err" | tail -10; }; }
expect_last() {
  local last; last=$(tail -n 1 "$WORK/out")
  [[ "$last" =~ $1 ]] || fail "last line '$last' does not match '$1'"
}

# A case whose outputs cannot match: test_abs's model on test_neg's data.
mkdir -p "$WORK/cases/bad_abs/test_data_set_0" "$WORK/cases/good_abs"
cp "$NODE/test_abs/model.onnx" "$WORK/cases/bad_abs/"
cp "$NODE/test_neg/test_data_set_0/"*.pb "$WORK/cases/bad_abs/test_data_set_0/"
cp -r "$NODE/test_abs/." "$WORK/cases/good_abs/"

expect_no_out() { [ ! -s "$WORK/out" ] || { fail "stdout not empty"; sed 's/^/  | /' "$WORK/out" | head -5; }; }
expect_no_err() { [ ! -s "$WORK/err" ] || { fail "stderr not empty"; sed 's/^/  | /' "$WORK/err" | head -5; }; }
# expect_usage OPTION CMD...: exit 2, one stderr line naming OPTION and the
# command's --help, nothing on stdout.
expect_usage() {
  local opt=$1; shift
  expect_rc 2 "$@" || return
  expect_err "$opt"
  expect_err "see 'hetrt $2 --help'$"
  [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "usage error of '$*' is not one line"
  expect_no_out
}

echo "== hetrt --help, --version, commands"
expect_rc 2 "$HETRT" && expect_err "^usage: hetrt COMMAND"
expect_rc 0 "$HETRT" --help && {
  expect_out "^usage: hetrt COMMAND"
  for cmd in run test bench profile quantize policy; do expect_out "^  $cmd "; done
  expect_no_err
}
expect_rc 0 "$HETRT" help && expect_out "^usage: hetrt COMMAND"
expect_rc 0 "$HETRT" --version && {
  expect_out "^hetrt [0-9]*\.[0-9]*\.[0-9]* (providers built: [a-z,]*cpu"
  expect_no_err
}
expect_rc 2 "$HETRT" frobnicate && expect_err "unknown command 'frobnicate'; see 'hetrt --help'"
expect_rc 2 "$HETRT" --frobnicate && expect_err "'--frobnicate'"

echo "== every command: --help, -h, a bogus option, a missing value"
for cmd in run test bench profile quantize policy; do
  expect_rc 0 "$HETRT" "$cmd" --help && {
    expect_out "^usage: hetrt $cmd "
    expect_out "exit status: 0 ok, 1 failure"
    expect_no_err
    # the shared names, spelled and explained alike in every command
    for opt in "--providers LIST" "--devices PROFILE" "--threads N" "--option KEY=VALUE" \
               "--algorithm cost|priority" "--non-strict" "--node-times FILE"; do
      expect_out "^  $opt"
    done
    long=$(awk 'length > 80' "$WORK/out")
    [ -z "$long" ] || fail "hetrt $cmd --help has lines over 80 columns: $long"
    cp "$WORK/out" "$WORK/help_$cmd"
  }
  # -h anywhere, even after a bad option, is help
  expect_rc 0 "$HETRT" "$cmd" --bogus -h && cmp -s "$WORK/out" "$WORK/help_$cmd" ||
    fail "hetrt $cmd --bogus -h is not the --help text"
  expect_rc 0 "$HETRT" help "$cmd" && expect_out "^usage: hetrt $cmd "
  expect_usage "unknown option '--bogus'" "$HETRT" "$cmd" x.onnx --bogus
  expect_usage "--threads needs a value" "$HETRT" "$cmd" x.onnx --threads
  expect_usage "--threads: 'x' is not an integer" "$HETRT" "$cmd" x.onnx --threads x
  expect_usage "--algorithm: 'fastest' is not cost or priority" "$HETRT" "$cmd" x.onnx --algorithm fastest
  expect_usage "--option expects KEY=VALUE" "$HETRT" "$cmd" x.onnx --option emu.mode
  expect_usage "--non-strict takes no value" "$HETRT" "$cmd" x.onnx --non-strict=yes
done
# options of one command are not silently taken by another
expect_usage "unknown option '--fork'" "$HETRT" run "$NODE/test_abs/model.onnx" --fork
expect_usage "unknown option '--input'" "$HETRT" test "$NODE/test_abs" --input x=y.pb
expect_usage "unknown option '-o'" "$HETRT" bench "$NODE/test_abs/model.onnx" -o t.json
expect_usage "no MODEL given" "$HETRT" run
expect_usage "no MODEL given" "$HETRT" bench
expect_usage "no DIR given" "$HETRT" test
expect_usage "--threads: '0' is not an integer >= 1" "$HETRT" run "$NODE/test_abs/model.onnx" --threads 0
expect_usage "--runs: '0' is not an integer >= 1" "$HETRT" bench "$NODE/test_abs/model.onnx" --runs 0
expect_usage "--optimization: 'most'" "$HETRT" run "$NODE/test_abs/model.onnx" --optimization most
expect_usage "--option: unknown session option 'nosuch'" "$HETRT" run "$NODE/test_abs/model.onnx" --option nosuch=1
expect_usage "--dim: 'x' is not an integer" "$HETRT" bench "$NODE/test_abs/model.onnx" --dim N=x
expect_usage "-o needs a value" "$HETRT" profile "$NODE/test_add/model.onnx" -o
expect_usage "--timeout: 'soon'" "$HETRT" test "$NODE/test_abs" --timeout soon

echo "== every command: a missing model or folder is a failure naming it"
for cmd in run bench profile; do
  expect_rc 1 "$HETRT" "$cmd" "$WORK/no-model.onnx" && expect_err "no-model.onnx"
done
expect_rc 1 "$HETRT" quantize "$WORK/no-model.onnx" -o "$WORK/q.onnx" --random 1 && expect_err "no-model.onnx"
expect_rc 1 "$HETRT" test "$WORK/does-not-exist" && expect_err "does-not-exist"

echo "== hetrt test: pass, fail, skip and the summary line"
expect_rc 0 "$HETRT" test "$NODE/test_abs" "$NODE/test_add" "$NODE/test_bernoulli" && {
  expect_out "^PASS test_abs$"
  expect_out "^PASS test_add$"
  expect_out "^SKIP test_bernoulli: .*Bernoulli"
  expect_last "^2 passed, 0 failed, 1 skipped$"
  # stderr is no terminal here: no progress line, no carriage returns
  expect_no_err
}
# On a terminal (script(1) gives stderr one) the progress line names each case.
if command -v script >/dev/null 2>&1 &&
   script -q -c "'$HETRT' test '$NODE/test_abs' '$NODE/test_add' >/dev/null" "$WORK/tty.log" >/dev/null 2>&1; then
  grep -q $'\r\[1/2\] test_abs' "$WORK/tty.log" && grep -q $'\r\[2/2\] test_add' "$WORK/tty.log" ||
    fail "no '[1/2] test_abs' progress line on a terminal: $(tr '\r\033' '~^' <"$WORK/tty.log" | head -3)"
else
  echo "note: script(1) not usable: the terminal progress line is not checked"
fi
expect_rc 1 "$HETRT" test "$WORK/cases" && {
  expect_out "^FAIL bad_abs: "
  expect_out "^PASS good_abs$"
  expect_last "^1 passed, 1 failed, 0 skipped$"
}
expect_rc 1 "$HETRT" test --fork --timeout 60 "$WORK/cases" && expect_last "^1 passed, 1 failed, 0 skipped$"

echo "== --list-passing and --expected"
expect_rc 1 "$HETRT" test --list-passing "$WORK/passing.txt" "$WORK/cases"
[ "$(cat "$WORK/passing.txt" 2>/dev/null)" = "good_abs" ] || fail "--list-passing wrote '$(cat "$WORK/passing.txt" 2>/dev/null)'"
printf '# comment\ngood_abs\n' >"$WORK/expected_ok.txt"
expect_rc 0 "$HETRT" test --fork --expected "$WORK/expected_ok.txt" "$WORK/cases" && expect_last "^1 passed, 1 failed, 0 skipped$"
printf 'good_abs\nbad_abs\n' >"$WORK/expected_reg.txt"
expect_rc 1 "$HETRT" test --expected "$WORK/expected_reg.txt" "$WORK/cases" && expect_out "^REGRESSION bad_abs: "
: >"$WORK/expected_none.txt"
expect_rc 0 "$HETRT" test --expected "$WORK/expected_none.txt" "$WORK/cases" && expect_out "^NEW PASS good_abs$"

echo "== hetrt run"
expect_rc 0 "$HETRT" run "$NODE/test_abs/model.onnx" "$NODE/test_abs/test_data_set_0/input_0.pb" \
  --output-dir "$WORK/run_out" -v && {
  expect_out "output 0 'y': float32 \[3,4,5\]  min="
  expect_out "placement: 1 nodes"
  expect_out "cpu"
}
expect_rc 0 "$HETRT" run "$NODE/test_add/model.onnx" --input "y=$NODE/test_add/test_data_set_0/input_1.pb" \
  "$NODE/test_add/test_data_set_0/input_0.pb"
# The written output must equal the reference: run it back through `hetrt test`.
mkdir -p "$WORK/roundtrip/rt_abs/test_data_set_0"
cp "$NODE/test_abs/model.onnx" "$WORK/roundtrip/rt_abs/"
cp "$NODE/test_abs/test_data_set_0/input_0.pb" "$WORK/roundtrip/rt_abs/test_data_set_0/"
cp "$WORK/run_out/output_0.pb" "$WORK/roundtrip/rt_abs/test_data_set_0/" 2>/dev/null || fail "no output_0.pb written"
expect_rc 0 "$HETRT" test "$WORK/roundtrip" && expect_last "^1 passed, 0 failed, 0 skipped$"
expect_rc 1 "$HETRT" run "$NODE/test_add/model.onnx" "$NODE/test_add/test_data_set_0/input_0.pb" && expect_err "missing input 'y'"
expect_rc 1 "$HETRT" run "$NODE/test_add/model.onnx" --input "nosuch=$NODE/test_add/test_data_set_0/input_0.pb" && expect_err "nosuch"
expect_rc 1 "$HETRT" run "$NODE/test_abs/model.onnx" "$WORK/no-input.pb" && expect_err "no-input.pb"
expect_rc 1 "$HETRT" run "$NODE/test_add/model.onnx" \
  --input "x=$NODE/test_argmax_default_axis_example/test_data_set_0/output_0.pb" \
  "$NODE/test_add/test_data_set_0/input_1.pb" && expect_err "input 'x': got int64, model expects float32"
expect_rc 1 "$HETRT" run "$NODE/test_add/model.onnx" --input "x=$NODE/test_add_bcast/test_data_set_0/input_1.pb" \
  "$NODE/test_add/test_data_set_0/input_1.pb" && expect_err "input 'x': got rank 1, model expects 3"

echo "== hetrt bench"
expect_rc 0 "$HETRT" bench "$NODE/test_add/model.onnx" --warmup 1 --runs 3 && {
  expect_out "session_create_ms="
  expect_last "^median_ms=[0-9]+\.[0-9]+$"
}

echo "== hetrt profile"
expect_rc 0 "$HETRT" profile "$NODE/test_add/model.onnx" --runs 2 -o "$WORK/trace.json" && {
  expect_out "per-op time over 2 runs"
  expect_out "Add "
  /usr/bin/python3 - "$WORK/trace.json" <<'PY' || fail "trace.json is not a Chrome trace with 2 Add events"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
adds = [e for e in events if e.get("ph") == "X" and e.get("cat") == "Add"]
assert len(adds) == 2 and all(e["dur"] >= 0 and "provider" in e["args"] for e in adds)
assert any(e.get("ph") == "M" and e["args"]["name"] == "cpu compute" for e in events)
PY
}

echo "== placement options"
expect_rc 0 "$HETRT" bench "$NODE/test_add/model.onnx" --runs 1 --providers emu,cpu --explain \
  --devices "$(dirname "$0")/../../configs/devices/npu.yaml" --algorithm priority && {
  expect_out "placement report"
  expect_out "estimated latency: cost"
}
expect_rc 1 "$HETRT" bench "$NODE/test_add/model.onnx" --providers cuda,cpu && expect_err "cuda"
expect_rc 0 "$HETRT" bench "$NODE/test_add/model.onnx" --runs 1 --providers cuda,cpu --non-strict --explain &&
  expect_out "provider 'cuda' skipped"

echo "== hetrt quantize"
QDATA="$(dirname "$0")/../data/quant"
# input sets: test_data_set_N folders of the backend-test layout
for n in 0 1 2 3 4; do
  mkdir -p "$WORK/qdata/test_data_set_$n" "$WORK/qflat"
  /usr/bin/python3 - "$WORK/qdata/test_data_set_$n/input_0.pb" "$n" <<'PY'
import sys, numpy as np
from onnx import numpy_helper
x = np.random.default_rng(int(sys.argv[2])).standard_normal((1, 3, 16, 16)).astype(np.float32)
open(sys.argv[1], "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
PY
  cp "$WORK/qdata/test_data_set_$n/input_0.pb" "$WORK/qflat/sample_$n.pb"
done
expect_rc 0 "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q.onnx" --data "$WORK/qdata" \
  --method entropy && {
  expect_out "quantized 6 nodes and 8 activation tensors into"
  expect_out "on 1 held-apart input:"
  expect_out "output 'y': cosine 0.9"
  expect_out "worst 8 of 8 quantized tensors by SQNR"
  expect_err "calibrating on 4 input sets"
  expect_err "^calibrate: histograms: 4/4$"
  grep -q $'\r' "$WORK/err" && fail "quantize wrote carriage returns off a terminal"
  expect_rc 0 "$HETRT" run "$WORK/q.onnx" "$WORK/qdata/test_data_set_0/input_0.pb" &&
    expect_out "output 0 'y': float32 \[1,10\]"
}
expect_rc 0 "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q2.onnx" --data "$WORK/qflat" \
  --eval-data "$WORK/qdata" --per-tensor --exclude-op-types Gemm && {
  expect_out "quantized 5 nodes"
  expect_out "on 5 held-apart inputs"
}
expect_rc 0 "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q3.onnx" --random 3 --holdout 0 && {
  expect_err "warning: calibrating on 3 random normal inputs"
  expect_out "no accuracy report"
}
expect_rc 0 "$HETRT" quantize "$QDATA/matmul.onnx" -o "$WORK/qd.onnx" --dynamic --random 2 && {
  expect_out "quantized 1 MatMuls dynamically"
  expect_out "on 2 evaluation inputs"
}
expect_usage "give --data DIR or --random N" "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q4.onnx"
expect_usage "no -o OUT.onnx given" "$HETRT" quantize "$QDATA/cnn.onnx" --random 2
expect_usage "--data and --random exclude each other" "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q4.onnx" \
  --random 2 --data "$WORK/qdata"
expect_usage "--method: 'kl' is not minmax, percentile or entropy" "$HETRT" quantize "$QDATA/cnn.onnx" \
  -o "$WORK/q4.onnx" --random 2 --method kl
# a value only the quantizer can judge: still a usage error, after loading
expect_rc 2 "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q4.onnx" --random 2 --percentile 150 &&
  expect_err "^hetrt quantize: --percentile: .*'150'.*; see 'hetrt quantize --help'$"
expect_rc 1 "$HETRT" quantize "$QDATA/cnn9.onnx" -o "$WORK/q4.onnx" --random 2 &&
  expect_err "opset 9"
expect_rc 1 "$HETRT" quantize "$QDATA/add.onnx" -o "$WORK/q4.onnx" --data "$WORK/qflat" &&
  expect_err "the model has 2 inputs"
expect_rc 1 "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q4.onnx" --data "$WORK/nowhere" &&
  expect_err "cannot open folder"
expect_rc 1 "$HETRT" quantize "$QDATA/cnn.onnx" -o "$WORK/q4.onnx" --data "$WORK/qflat" --holdout 5 &&
  expect_err "leaves no calibration input"

echo "== hetrt policy check, --policy, --shape"
SRC="$(dirname "$0")/../.."
PDATA="$SRC/tests/data/policy"
expect_rc 0 "$HETRT" policy --help && expect_out "^usage: hetrt policy check FILE"
expect_rc 0 "$HETRT" policy check "$SRC/configs/policies/cpu-only.yaml" && expect_out "cpu-only.yaml: valid"
expect_rc 1 "$HETRT" policy check "$PDATA/bad/unknown_action.yaml" &&
  expect_err "unknown_action.yaml:4:5: unknown action 'pinn' (expected name, match, pin, forbid, prefer or precision)"
expect_rc 1 "$HETRT" policy check "$WORK/no-policy.yaml" && expect_err "no-policy.yaml"
expect_rc 0 "$HETRT" policy check "$SRC/configs/policies/edge-512mib.yaml" \
    "$SRC/tests/data/emu/resnet_small.onnx" --devices "$SRC/configs/devices/npu.yaml" && {
  expect_out "^policy rules (1):"
  expect_out "rule 1 'wide-types-on-host' matches no node"
}
expect_rc 0 "$HETRT" policy check "$SRC/configs/policies/attention-on-device.yaml" \
    "$SRC/tests/data/nlp/encoder/model.onnx" --devices "$SRC/configs/devices/big-gpu-like.yaml" && {
  expect_out "rule 1 'attention' (.*attention-on-device.yaml:7:5): pin cuda, emu: 7 nodes"
  expect_out "^      /self_attn/Gemm$"
}
expect_usage "unknown verb 'lint'" "$HETRT" policy lint x.yaml
expect_usage "no policy FILE given" "$HETRT" policy check
expect_usage "--policy: .*unknown_action.yaml:4:5: unknown action 'pinn'" \
  "$HETRT" run "$NODE/test_abs/model.onnx" --policy "$PDATA/bad/unknown_action.yaml"
expect_rc 0 "$HETRT" bench "$PDATA/dynamic_det.onnx" --shape images=1x3x64x96 --runs 2 --warmup 1 &&
  expect_out "input 'images': float32 \[1,3,64,96\]"
expect_rc 1 "$HETRT" bench "$PDATA/dynamic_det.onnx" --shape images=1x3x64 --runs 1 &&
  expect_err "rank 3, the model declares 4"
expect_usage "--shape: .*'1x3xbig' is not dims" "$HETRT" run "$PDATA/dynamic_det.onnx" --shape images=1x3xbig

echo "== hetrt compile, hetrt plan info, a plan where a model goes"
expect_rc 0 "$HETRT" compile --help && expect_out "^usage: hetrt compile MODEL -o FILE.hplan"
expect_rc 0 "$HETRT" compile "$NODE/test_abs/model.onnx" -o "$WORK/abs.hplan" &&
  expect_out "wrote $WORK/abs.hplan in"
expect_rc 0 "$HETRT" run "$WORK/abs.hplan" "$NODE/test_abs/test_data_set_0/input_0.pb" \
    --output-dir "$WORK/plan_out" --explain && {
  expect_out "^plan: $WORK/abs.hplan (made by hetrt"
  expect_out "optimal here"
}
# the plan's output, as the expected output of the model's case, passes
mkdir -p "$WORK/plancase/plan_abs/test_data_set_0"
cp "$NODE/test_abs/model.onnx" "$WORK/plancase/plan_abs/"
cp "$NODE/test_abs/test_data_set_0/input_0.pb" "$WORK/plancase/plan_abs/test_data_set_0/"
cp "$WORK/plan_out/output_0.pb" "$WORK/plancase/plan_abs/test_data_set_0/"
expect_rc 0 "$HETRT" test "$WORK/plancase" && expect_out "PASS plan_abs"
expect_rc 0 "$HETRT" plan info "$WORK/abs.hplan" && {
  expect_out "^  option.providers: cpu$"
  expect_out "^  cpu.isa: "
  expect_out "^on this machine: optimal$"
}
expect_usage "no output given" "$HETRT" compile "$NODE/test_abs/model.onnx"
# a second shape regime planned at compile time, stored and described
expect_rc 0 "$HETRT" compile "$SRC/tests/data/emu/regime_convs.onnx" -o "$WORK/rc.hplan" \
    --providers emu,cpu --devices "$SRC/configs/devices/npu.yaml" --shape x=1x3x16x16 \
    --regime x=1x3x128x128 --regime x=1x3x20x20 && {
  expect_out "^  x=1x3x128x128: shape regime 1$"
  expect_out "^  x=1x3x20x20: shape regime 0 (the session's own placement)$"
}
expect_rc 0 "$HETRT" plan info "$WORK/rc.hplan" &&
  expect_out "^  shape regime 1: 1 graph, 6 nodes, planned for x=1x3x128x128$"
expect_rc 1 "$HETRT" compile "$SRC/tests/data/emu/regime_convs.onnx" -o "$WORK/rc2.hplan" \
    --providers emu,cpu --regime x=1x3x16 && expect_err "input .x. needs its declared rank"
expect_usage "--regime expects NAME=DIMS" "$HETRT" compile "$SRC/tests/data/emu/regime_convs.onnx" -o "$WORK/rc2.hplan" \
    --regime x
expect_usage "unknown verb 'show'" "$HETRT" plan show "$WORK/abs.hplan"
head -c 100 "$WORK/abs.hplan" >"$WORK/cut.hplan"
expect_rc 1 "$HETRT" plan info "$WORK/cut.hplan" && expect_err "cut.hplan"
expect_rc 1 "$HETRT" run "$WORK/cut.hplan" "$NODE/test_abs/test_data_set_0/input_0.pb" &&
  expect_err "cut.hplan"
PARTVIEW="$(dirname "$HETRT")/partview"
if [ -x "$PARTVIEW" ]; then
  expect_rc 0 "$PARTVIEW" "$WORK/abs.hplan" && expect_out "(plan)"
fi

if [ "$failures" -ne 0 ]; then
  echo "test_cli: $failures check(s) failed"
  exit 1
fi
echo "test_cli: all checks passed"
