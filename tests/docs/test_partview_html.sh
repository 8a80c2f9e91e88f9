#!/usr/bin/env bash
# test_partview_html.sh — partview's HTML report in a real browser: the
# small CNN of tests/partview/make_model.py, split across emu (npu profile)
# and cpu, written with `partview --format html`, opened unchanged inside
# partview_check.html (an iframe) by headless Chromium.  Fails when the
# page logs a JavaScript error or console error, or when the wrapper finds
# the report's tables, timeline, split, sorting or filter wrong (its #result,
# read with --dump-dom); then takes a 1400x900 screenshot and checks it is
# a PNG of that size.  HETRT_DOCS_SCREENSHOT=FILE also keeps the screenshot
# there (how docs/partview-html.png is made).
# Usage: test_partview_html.sh PATH/TO/partview
# Skips (77) without chromium, without python3's onnx module, or without
# the emu provider.
set -u
PV=${1:?usage: test_partview_html.sh PATH/TO/partview}
case "$PV" in /*) ;; *) PV=$PWD/$PV ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
PY=${HETRT_PYTHON:-/usr/bin/python3}
CHROMIUM=${HETRT_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
NPU=$SRC/configs/devices/npu.yaml

if [ -z "$CHROMIUM" ] || [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: chromium not installed"; exit 77
fi
if ! "$PY" -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: $PY lacks the onnx module"; exit 77
fi
if ! "$PV" --version 2>/dev/null | grep -q emu; then
  echo "SKIP: partview built without the emu provider"; exit 77
fi

WORK=$(mktemp -d)
CHROME_PGID=""
cleanup() {
  # Chromium's helper processes are in the process group we started.
  [ -n "$CHROME_PGID" ] && kill -TERM -- "-$CHROME_PGID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# chrome OUT ERR ARGS...: headless Chromium on a fresh profile, in a
# process group of its own, killed with its helpers after 90 s.
chrome() {
  local out=$1 err=$2; shift 2
  HOME=$WORK/home setsid "$CHROMIUM" --headless --no-sandbox --disable-gpu \
    --no-first-run --disable-extensions --disable-dev-shm-usage \
    --user-data-dir="$WORK/profile" --enable-logging=stderr --v=0 \
    "$@" >"$out" 2>"$err" &
  CHROME_PGID=$!
  local waited=0
  while kill -0 "$CHROME_PGID" 2>/dev/null && [ "$waited" -lt 900 ]; do
    sleep 0.1; waited=$((waited + 1))
  done
  if kill -0 "$CHROME_PGID" 2>/dev/null; then
    kill -KILL -- "-$CHROME_PGID" 2>/dev/null
    wait "$CHROME_PGID" 2>/dev/null
    CHROME_PGID=""
    echo "FAILED: chromium did not finish in 90 s"; return 1
  fi
  wait "$CHROME_PGID"; local rc=$?
  kill -TERM -- "-$CHROME_PGID" 2>/dev/null # helpers left behind, if any
  CHROME_PGID=""
  [ "$rc" -eq 0 ] || { echo "FAILED: chromium exited with $rc"; tail -5 "$err"; return 1; }
}

mkdir -p "$WORK/home" "$WORK/page"
"$PY" "$SRC/tests/partview/make_model.py" --plain "$WORK/cnn.onnx" ||
  { echo "FAILED: make_model.py"; exit 1; }
# priority: emu runs everything the npu profile has, cpu the Erf.  Run in
# $WORK so that the report names the model "cnn.onnx".
(cd "$WORK" && "$PV" cnn.onnx --providers emu,cpu --devices "$NPU" --algorithm priority \
  --format html -o page/report.html) ||
  { echo "FAILED: partview --format html"; exit 1; }
cp "$HERE/partview_check.html" "$WORK/page/check.html"

failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

chrome "$WORK/dom.html" "$WORK/console.log" --allow-file-access-from-files \
  --virtual-time-budget=10000 --dump-dom "file://$WORK/page/check.html" || exit 1
result=$("$PY" -c 'import html, re, sys
m = re.search(r"<pre id=\"result\">(.*?)</pre>", open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m else "")' "$WORK/dom.html")
case "$result" in
  OK*) echo "ok: the report in Chromium: ${result#OK }" ;;
  *) fail "the wrapper page says: ${result:-nothing (page did not load?)}" ;;
esac
# Chromium logs each console message as ...:CONSOLE(LINE)] "TEXT", source: URL
if grep -E ':CONSOLE' "$WORK/console.log" | grep -Eiq 'uncaught|error'; then
  fail "JavaScript errors in the console:"
  grep -E ':CONSOLE' "$WORK/console.log" | sed 's/^/  | /' | head -10
fi

chrome "$WORK/shot.out" "$WORK/shot.log" --hide-scrollbars --window-size=1400,900 \
  --screenshot="$WORK/shot.png" "file://$WORK/page/report.html" || exit 1
if grep -E ':CONSOLE' "$WORK/shot.log" | grep -Eiq 'uncaught|error'; then
  fail "JavaScript errors while loading report.html alone"
fi
"$PY" - "$WORK/shot.png" <<'EOF' || fail "screenshot is not a 1400x900 PNG"
import struct, sys
data = open(sys.argv[1], "rb").read()
ok = data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1400, 900)
sys.exit(0 if ok else 1)
EOF
if [ -n "${HETRT_DOCS_SCREENSHOT:-}" ]; then
  cp "$WORK/shot.png" "$HETRT_DOCS_SCREENSHOT" && echo "screenshot: $HETRT_DOCS_SCREENSHOT"
fi

[ "$failures" -eq 0 ] && echo "partview_html: all checks passed" || echo "partview_html: $failures failures"
[ "$failures" -eq 0 ]
