#!/usr/bin/env bash
# test_check_layers.sh — tools/check_layers.py: the real tree passes its
# include check, and small made-up trees show that an include reaching up,
# a header a layer may not see, a file outside every layer and a call that
# reaches up (nm of the layer archives) are each refused, naming the file
# and line or the archive and symbol.
# Usage: test_check_layers.sh SOURCE_DIR PYTHON
set -euo pipefail
src=$1
py=$2
check="$py $src/tools/check_layers.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$($check "$src") || fail "real tree: $out"
[ "$out" = "layers: ok" ] || fail "real tree said: $out"

# low <- mid (only low/pub.h) <- high
mk() {
  rm -rf "$tmp/t"; mkdir -p "$tmp/t/tools" "$tmp/t/src/low" "$tmp/t/src/mid" "$tmp/t/src/high"
  cat >"$tmp/t/tools/layers.txt" <<'L'
low   src/low
mid   src/mid   low:pub.h
high  src/high  low mid
L
  echo 'int het_low(void);' >"$tmp/t/src/low/pub.h"
  echo 'int het_low_priv(void);' >"$tmp/t/src/low/priv.h"
  printf '#include "low/pub.h"\n#include "priv.h"\nint het_low(void){return het_low_priv();}\nint het_low_priv(void){return 1;}\n' >"$tmp/t/src/low/low.c"
  printf '#include "low/pub.h"\nint het_mid(void){return het_low();}\n' >"$tmp/t/src/mid/mid.c"
  printf '#include "mid/../low/pub.h"\nint het_high(void){return het_low();}\n' >"$tmp/t/src/high/high.c"
}
expect() { # expect PATTERN ARGS...: check fails and prints PATTERN
  local pat=$1; shift
  if out=$($check "$tmp/t" "$@"); then fail "passed, wanted: $pat"; fi
  grep -qF -- "$pat" <<<"$out" || fail "wanted '$pat', got: $out"
}

mk
out=$($check "$tmp/t") || fail "clean tree: $out"

mk; printf '#include "high/../mid/x.h"\n' >"$tmp/t/src/low/up.h"; touch "$tmp/t/src/mid/x.h"
expect 'src/low/up.h:1: layer low includes "high/../mid/x.h" of layer mid, which it may not use'

mk; printf '\n#include "../low/priv.h"\n' >>"$tmp/t/src/mid/mid.c"
expect "src/mid/mid.c:4: layer mid may include only ['pub.h'] of layer low"

mk; mkdir -p "$tmp/t/src/stray"; touch "$tmp/t/src/stray/s.c"
expect 'src/stray/s.c: in no layer of tools/layers.txt'

mk; printf '#include "nowhere.h"\n' >"$tmp/t/src/low/bad.c"
expect 'src/low/bad.c:1: "nowhere.h" not found'

# symbols: low calling up into high is refused even without an include
mk
for l in low mid high; do cc -c -o "$tmp/$l.o" "$tmp/t/src/$l/$l.c" -I"$tmp/t/src"; ar rcs "$tmp/$l.a" "$tmp/$l.o"; done
out=$($check "$tmp/t" --nm low="$tmp/low.a" --nm mid="$tmp/mid.a" --nm high="$tmp/high.a") || fail "clean archives: $out"
printf 'int het_high(void);\nint het_sneak(void){return het_high();}\n' >"$tmp/t/src/low/sneak.c"
cc -c -o "$tmp/sneak.o" "$tmp/t/src/low/sneak.c"; ar rcs "$tmp/low.a" "$tmp/low.o" "$tmp/sneak.o"
expect "layer low calls het_high of layer high, which it may not use" --nm low="$tmp/low.a" --nm high="$tmp/high.a"
echo "check_layers: all cases behave"
