#!/usr/bin/env bash
# test_partview.sh — end-to-end checks of the `partview` tool: every format
# (text, json, dot, html) on cpu alone and, when the emu provider and the
# npu profile exist, on emu,cpu; JSON parses and names every model node
# with op_type/provider/reason; the made model's memory figures (arena,
# intermediates without reuse, weights) equal hand-computed sizes; with
# --node-times each node's estimate next to the file's time, in every
# format; DOT has one node per report node and parses
# with graphviz when installed; HTML is self-contained; -o; --help,
# --version and the exit codes (0 ok, 1 failure, 2 usage).
# Usage: test_partview.sh PATH/TO/partview [MODELS_DIR]
#   without MODELS_DIR: a small CNN made by make_model.py, plus error cases;
#   with MODELS_DIR: every MODELS_DIR/*/model.onnx (tests/models fixtures).
set -u
PV=${1:?usage: test_partview.sh PATH/TO/partview [MODELS_DIR]}
MODELS=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
PY=${HETRT_PYTHON:-/usr/bin/python3}
NPU=$SRC/configs/devices/npu.yaml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

if ! "$PY" -c "import json, onnx" 2>/dev/null; then
  echo "SKIP: $PY lacks the onnx module"
  exit 77
fi

# pv WANT_RC ARGS...: runs partview, stdout in $WORK/out, stderr in $WORK/err.
pv() {
  local want=$1; shift
  "$PV" "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "exit $rc (wanted $want): partview $*"
    sed 's/^/  | /' "$WORK/err" | tail -5
    return 1
  fi
  return 0
}
has_out() { grep -q -- "$1" "$WORK/out" || fail "stdout of '$2' lacks '$1'"; }
has_err() { grep -q -- "$1" "$WORK/err" || fail "stderr of '$2' lacks '$1'"; }

# check_json FILE MODEL WANT_ALGORITHM [REQUIRE_SPLIT]: prints the node count.
check_json() {
  "$PY" - "$@" <<'EOF'
import json, sys
import onnx
path, model, algorithm = sys.argv[1:4]
split = len(sys.argv) > 4
with open(path, encoding="utf-8") as f:
    rep = json.load(f)
def need(cond, msg):
    if not cond:
        sys.exit("%s: %s" % (path, msg))
for key in ("model", "algorithm", "warnings", "nodes", "edges", "subgraphs",
            "boundary_nodes", "devices", "estimates", "summary"):
    need(key in rep, "no key %r" % key)
need(rep["algorithm"] == algorithm, "algorithm %r, wanted %r" % (rep["algorithm"], algorithm))
nodes = rep["nodes"]
for n in nodes:
    for k in ("name", "op_type", "provider", "reason"):
        need(isinstance(n.get(k), str) and n[k], "node %r lacks %s" % (n, k))
    if n["boundary"] is None:
        need(0 <= n["subgraph"] < len(rep["subgraphs"]), "node %s: bad subgraph" % n["name"])
    else:
        need(n["subgraph"] == -1, "boundary node %s in a subgraph" % n["name"])
names = {n["name"] for n in nodes}
missing = [n.name for n in onnx.load(model).graph.node if n.name and n.name not in names]
need(not missing, "model nodes missing: %s" % missing[:5])
need(sum(s["n_nodes"] for s in rep["subgraphs"]) ==
     sum(1 for n in nodes if n["boundary"] is None), "subgraph sizes")
for b in rep["boundary_nodes"]:
    need(b["kind"] in ("copy", "layout", "cast") and b["bytes"] > 0, "boundary %r" % b)
need(rep["summary"].startswith("estimated latency: cost "), "summary %r" % rep["summary"])
need(any(d["provider"] for d in rep["devices"]), "no devices")
if split:
    providers = {n["provider"] for n in nodes if n["boundary"] is None}
    need({"emu", "cpu"} <= providers, "not split across emu and cpu: %s" % providers)
    need(any(b["kind"] == "copy" for b in rep["boundary_nodes"]), "no copy nodes")
    emu = [d for d in rep["devices"] if d["provider"] == "emu"]
    need(emu and emu[0]["capacity"] == 512 << 20, "emu device/capacity: %s" % emu)
print(len(nodes))
EOF
}

GRAPHVIZ=0
if command -v dot >/dev/null 2>&1; then GRAPHVIZ=1; else
  echo "note: graphviz 'dot' not installed: DOT syntax check skipped"
fi

# all_formats MODEL ALGORITHM [partview options...]: every format checked.
all_formats() {
  local model=$1 algorithm=$2; shift 2
  local what="$model $*" split=""
  # priority must split the made model (emu claims all but Erf); what cost
  # chooses depends on the measured CPU speed, so it is not required there.
  case " $* " in *" emu,cpu "*) [ "$algorithm" = priority ] && split=$REQUIRE_SPLIT ;; esac
  # Every node of the file must appear in every format: no rewrites here.
  set -- "$@" --optimization none
  pv 0 "$model" --algorithm "$algorithm" "$@" --format json || return
  cp "$WORK/out" "$WORK/report.json"
  local n
  n=$(check_json "$WORK/report.json" "$model" "$algorithm" $split) || {
    fail "json of $what: $n"; return; }
  pv 0 "$model" --algorithm "$algorithm" "$@" || return
  has_out "^estimated latency: cost .* vs priority " "$what"
  has_out "^estimated total: " "$what"
  has_out "^subgraphs (" "$what"
  has_out "^boundary nodes (" "$what"
  has_out "^planned peak memory per device" "$what"
  has_out " peak .* of .*capacity" "$what"
  # The CPU's speed is measured per process, so `cost` may place (and copy)
  # differently from one run to the next: each format is checked against
  # itself and the model, not against the JSON run's node count.
  local mn; mn=$("$PY" -c 'import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))' "$model")
  pv 0 "$model" --algorithm "$algorithm" "$@" --format dot || return
  local dn dmax
  dn=$(grep -oE '^ +n[0-9]+ \[' "$WORK/out" | sort -u | wc -l)
  dmax=$(grep -oE '^ +n[0-9]+ \[' "$WORK/out" | tr -dc '0-9\n' | sort -n | tail -1)
  [ "$dn" -eq "$(grep -cE '^ +n[0-9]+ \[' "$WORK/out")" ] || fail "dot of $what repeats a node"
  [ "$dn" -eq $((dmax + 1)) ] && [ "$dn" -ge "$mn" ] ||
    fail "dot of $what has $dn nodes (last n$dmax), model $mn"
  grep -q 'cluster_sg[0-9]' "$WORK/out" || fail "dot of $what has no subgraph cluster"
  if [ "$GRAPHVIZ" -eq 1 ] && ! dot -Tsvg "$WORK/out" -o "$WORK/out.svg" 2>"$WORK/dot.err"; then
    fail "dot -Tsvg rejects the DOT of $what"; sed 's/^/  | /' "$WORK/dot.err" | head -5
  fi
  pv 0 "$model" --algorithm "$algorithm" "$@" --format html -o "$WORK/r.html" || return
  [ -s "$WORK/out" ] && fail "html of $what: -o still wrote to stdout"
  head -c 15 "$WORK/r.html" | grep -q '<!DOCTYPE html>' || fail "html of $what: no doctype"
  tail -n 1 "$WORK/r.html" | grep -q '</html>' || fail "html of $what: not closed"
  grep -qiE 'https?://' "$WORK/r.html" && fail "html of $what references a URL"
  grep -qiE '<link|<script[^>]* src=|@import' "$WORK/r.html" && fail "html of $what loads a resource"
  local rows hn
  rows=$(sed -n '/id="nodes"/,/<\/table>/p' "$WORK/r.html" | grep -c '^<tr>')
  hn=$(grep -oE '</b>, [0-9]+ nodes' "$WORK/r.html" | tr -dc '0-9')
  [ "$rows" -eq "${hn:-0}" ] && [ "$rows" -ge "$mn" ] ||
    fail "html of $what has $rows node rows of ${hn:-?}, model $mn"
  echo "ok: $what ($algorithm): $n nodes in all four formats"
}

EMU=0
if [ -f "$NPU" ] && "$PV" --version 2>/dev/null | grep -q 'emu'; then EMU=1; else
  echo "note: emu provider or $NPU missing: emu,cpu runs skipped"
fi

run_model() {
  all_formats "$1" cost --providers cpu
  all_formats "$1" priority --providers cpu
  if [ "$EMU" -eq 1 ]; then
    all_formats "$1" cost --providers emu,cpu --devices "$NPU"
    all_formats "$1" priority --providers emu,cpu --devices "$NPU"
  fi
}

# The made model's Erf is not in the npu profile: emu,cpu must split it.
# The fixtures' split depends on the profile, so it is not required there.
REQUIRE_SPLIT=""
if [ -n "$MODELS" ]; then
  found=0
  for m in "$MODELS"/*/model.onnx; do
    [ -f "$m" ] || continue
    found=$((found + 1))
    run_model "$m"
  done
  [ "$found" -gt 0 ] || fail "no MODELS_DIR/*/model.onnx in $MODELS"
  [ "$failures" -eq 0 ] && echo "partview: all checks passed" || echo "partview: $failures failures"
  [ "$failures" -eq 0 ]
  exit
fi

REQUIRE_SPLIT=split
MODEL=$WORK/cnn.onnx
"$PY" "$HERE/make_model.py" "$MODEL" || { echo "FAILED: make_model.py"; exit 1; }
run_model "$MODEL"

# Memory figures of the made model (no rewrites), sizes by hand (float32):
# intermediates c1,r1 [1,32,128,128] 2 MiB each, p1,e1 [1,32,64,64]
# 512 KiB each, c2,r2 [1,64,64,64] 1 MiB each, g,f 256 B each, logits
# 40 B: 7340584 bytes; weights W1 3456 + B1 128 + W2 73728 + B2 256 +
# Wfc 2560 + Bfc 40 = 80168; the arena's peak is c1 (which r1 takes over
# in place) and p1 live at once: 2621440; the planned peak adds the
# weights, input x (196608) and output y (40).
pv 0 "$MODEL" --providers cpu --optimization none --format json &&
  { "$PY" - "$WORK/out" <<'EOF2' || fail "json memory figures of the made model"
import json, sys
host = [d for d in json.load(open(sys.argv[1]))["devices"] if d["provider"] == "host"][0]
want = {"intermediates": 7340584, "weights": 80168, "arena": 2621440,
        "planned_peak": 2621440 + 80168 + 196608 + 40, "estimated": False}
bad = {k: (host.get(k), v) for k, v in want.items() if host.get(k) != v}
if bad:
    sys.exit("host device (got, wanted): %s" % bad)
EOF2
  }
pv 0 "$MODEL" --providers cpu --optimization none &&
  has_out "bytes: arena 2621440, intermediates 7340584, weights 80168" "text memory"
pv 0 "$MODEL" --providers cpu --optimization none --format html &&
  has_out '<td class="n" data-v="7340584">7.00 MiB</td><td class="n" data-v="80168">' "html memory"
pv 0 "$MODEL" --providers cpu --optimization none --format dot &&
  has_out 'host: peak 2.76 MiB, arena 2.50 MiB vs intermediates 7.00 MiB without reuse (2.8x), weights 78.29 KiB' "dot memory"

# Control flow: the If's branch bodies are partitioned too, so with the npu
# profile their Convs run on emu and the report lists them by their path,
# with provider and reason (tests/data/control/gen_control.py).
IFM=$SRC/tests/data/control/if_conv/model.onnx
if [ -f "$NPU" ] && pv 0 "$IFM" --providers emu,cpu --devices "$NPU" --algorithm priority; then
  grep -Eq '^ +[0-9]+ +If_0/then_branch/then_conv +Conv +emu .*emu .npu. runs Conv' "$WORK/out" ||
    fail "if_conv: then_conv not listed on emu with its reason"
  grep -Eq '^ +[0-9]+ +If_0/else_branch/else_conv +Conv +emu ' "$WORK/out" ||
    fail "if_conv: else_conv not listed on emu"
  grep -Eq '^ +[0-9]+ +If_0 +If +host .*control flow' "$WORK/out" ||
    fail "if_conv: the If is not listed as the host's"
fi

# Node times: with --node-times each compute node shows its estimate (the
# one partview shows without the file; within 20%, as two processes may
# measure the CPU's speed differently when the cache cannot be written),
# the file's time and placement's time (the file's); the totals cover the
# measured nodes only.
pv 0 "$MODEL" --providers cpu --optimization none --format json &&
  cp "$WORK/out" "$WORK/plain.json" &&
  "$PY" - "$WORK/plain.json" "$WORK/times.tsv" <<'EOF3' || fail "writing a node-times file"
import json, sys
nodes = [n for n in json.load(open(sys.argv[1]))["nodes"] if n["boundary"] is None]
with open(sys.argv[2], "w") as f:
    f.write("# made by test_partview.sh\n")
    for k, n in enumerate(nodes[:3]):
        f.write("%s\tcpu\t%.9g\t5\n" % (n["name"], (k + 1) * 1e-3))
EOF3
pv 0 "$MODEL" --providers cpu --optimization none --format json --node-times "$WORK/times.tsv" &&
  { "$PY" - "$WORK/plain.json" "$WORK/out" <<'EOF4' || fail "json with --node-times"
import json, sys
plain = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"] if n["boundary"] is None}
rep = json.load(open(sys.argv[2]))
nodes = [n for n in rep["nodes"] if n["boundary"] is None]
def need(cond, msg):
    if not cond:
        sys.exit(msg)
def near(a, b):
    return abs(a - b) <= 0.2 * max(abs(a), abs(b))
want_est = 0.0
for k, n in enumerate(nodes):
    p = plain[n["name"]]
    need(near(n["estimate_seconds"], p["est_seconds"]),
         "%s: estimate %r, %r without the file" % (n["name"], n["estimate_seconds"], p["est_seconds"]))
    if k < 3:
        need(abs(n["measured_seconds"] - (k + 1) * 1e-3) < 1e-12 and
             abs(n["est_seconds"] - (k + 1) * 1e-3) < 1e-12,
             "%s: measured %r, placement's %r" % (n["name"], n["measured_seconds"], n["est_seconds"]))
        want_est += n["estimate_seconds"]
    else:
        need(n["measured_seconds"] is None and n["est_seconds"] == n["estimate_seconds"],
             "%s: not measured, yet %r" % (n["name"], n))
t = rep["node_times"]
need(t["measured_nodes"] == 3 and t["compute_nodes"] == len(nodes), "counts %r" % t)
need(abs(t["measured_seconds"] - 6e-3) < 1e-12, "measured total %r" % t)
need(abs(t["estimate_seconds"] - want_est) < 1e-12, "estimate total %r, want %r" % (t, want_est))
need(abs(t["estimate_over_measured"] - want_est / 6e-3) < 1e-9, "ratio %r" % t)
need(json.load(open(sys.argv[1]))["node_times"] is None, "node_times without the file")
EOF4
  }
pv 0 "$MODEL" --providers cpu --optimization none --node-times "$WORK/times.tsv" && {
  has_out "  estimate    measured  est/meas  placed by" "text with --node-times"
  has_out "^node times (.*times.tsv): 3 of [0-9]* compute nodes measured on their provider; their estimate .* vs measured 6.00 ms (estimate / measured [0-9.]*); placement used the measured times" "text with --node-times"
  has_out " 1.00 ms  " "text with --node-times"; }
pv 0 "$MODEL" --providers cpu --optimization none --node-times "$WORK/times.tsv" --format html &&
  has_out "<th>measured</th><th>estimate / measured</th>" "html with --node-times"
pv 0 "$MODEL" --providers cpu --optimization none --node-times "$WORK/times.tsv" --format dot &&
  has_out ", measured 1.00 ms)" "dot with --node-times"

# Escaping of the node named  conv "stem" <a&b>\x  in HTML and DOT (the
# Conv and the MaxPool after it are one FusedConvPool at the default
# optimization level).
pv 0 "$MODEL" --providers cpu --format html
has_out 'conv &quot;stem&quot; &lt;a&amp;b&gt;\\x' "html escaping"
pv 0 "$MODEL" --providers cpu --format dot
has_out 'label="conv \\"stem\\" <a&b>\\\\x\\nFusedConvPool"' "dot escaping"

# -o writes what stdout gets (numbers aside: the CPU speed is measured).
pv 0 "$MODEL" --providers cpu --format json && tr -d '0-9.e+-' <"$WORK/out" >"$WORK/stdout.json"
pv 0 "$MODEL" --providers cpu --format json -o "$WORK/file.json" &&
  { tr -d '0-9.e+-' <"$WORK/file.json" | cmp -s "$WORK/stdout.json" - ||
    fail "-o output differs from stdout"; }

# Errors and usage: 0 ok, 1 failure, 2 usage error (one stderr line naming
# the option and 'partview --help', nothing on stdout).
pv 0 --help && {
  has_out "^usage: partview MODEL" "--help"
  has_out "exit status: 0 ok, 1 failure" "--help"
  # the option names and values shared with `hetrt` (tools/hetrt/options.c)
  for opt in "--providers LIST" "--devices PROFILE" "--threads N" "--option KEY=VALUE" \
             "--algorithm cost|priority" "--non-strict" "--node-times FILE" \
             "--optimization none|basic|extended|all" "-o, --output FILE" "--format text|json|dot|html"; do
    has_out "^  $opt" "--help"
  done
  [ -s "$WORK/err" ] && fail "--help wrote to stderr"
  [ -z "$(awk 'length > 80' "$WORK/out")" ] || fail "--help has lines over 80 columns"
  cp "$WORK/out" "$WORK/help.txt"
}
pv 0 "$MODEL" --bogus -h && { cmp -s "$WORK/out" "$WORK/help.txt" || fail "-h after a bad option is not --help"; }
pv 0 --version && has_out "^partview (hetrt [0-9]*\.[0-9]*\.[0-9]*, providers built: [a-z,]*cpu" "--version"
# usage WHAT ARGS...: exit 2, stderr one line with WHAT and the help pointer.
usage() {
  local what=$1; shift
  pv 2 "$@" || return
  has_err "$what" "partview $*"
  has_err "; see 'partview --help'$" "partview $*"
  [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "usage error of 'partview $*' is not one line"
  [ -s "$WORK/out" ] && fail "usage error of 'partview $*' wrote to stdout"
}
usage "no MODEL given"
usage "unknown option '--bogus'" "$MODEL" --bogus
usage "--format needs a value" "$MODEL" --format
usage "--format: 'xml' is not text, json, dot, html or rules" "$MODEL" --format xml
usage "--algorithm: 'fast' is not cost or priority" "$MODEL" --algorithm fast
usage "--optimization: 'max'" "$MODEL" --optimization max
usage "--threads: 'x' is not an integer >= 1" "$MODEL" --threads x
usage "--option: unknown session option 'nosuch'" "$MODEL" --option nosuch=1
usage "unexpected argument 'extra.onnx'" "$MODEL" extra.onnx
pv 1 "$WORK/missing.onnx" && has_err "missing.onnx" "missing model"
# several profiles after one --devices, then the model
[ -f "$NPU" ] && pv 0 --providers emu,cpu --devices "$NPU" "$SRC/configs/devices/cpu.yaml" "$MODEL" &&
  has_out "^estimated latency: cost" "--devices A.yaml B.yaml MODEL"
pv 1 "$MODEL" --providers tpu,cpu && has_err "tpu" "--providers tpu,cpu"
pv 1 "$MODEL" --providers emu,cpu --devices "$WORK/nope.yaml" && has_err "nope.yaml" "missing profile"
pv 1 "$MODEL" -o "$WORK/no/such/dir/x.txt" && has_err "cannot open" "-o into a missing folder"
# Non-strict: the unknown provider is skipped and reported as a warning.
pv 0 "$MODEL" --providers tpu,cpu --non-strict && has_out "^warning: .*tpu" "--non-strict text"
pv 0 "$MODEL" --providers tpu,cpu --non-strict --format json &&
  { "$PY" -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; sys.exit(not any("tpu" in x for x in w))' \
      "$WORK/out" || fail "--non-strict json lacks the tpu warning"; }

[ "$failures" -eq 0 ] && echo "partview: all checks passed" || echo "partview: $failures failures"
[ "$failures" -eq 0 ]
