#!/bin/sh
# run_pytest.sh PYTHON PYTEST-ARGS... — runs pytest with PYTHON; exits 77
# (CTest's "skipped") when that interpreter has no pytest, or with the reason
# in $HETRT_PY_SKIP when that is set (sanitizer builds).
py=$1
shift
if [ -n "${HETRT_PY_SKIP:-}" ]; then
  echo "SKIP: $HETRT_PY_SKIP"
  exit 77
fi
if ! "$py" -c "import pytest" 2>/dev/null; then
  echo "SKIP: $py has no pytest (apt-get install python3-pytest)"
  exit 77
fi
exec "$py" -m pytest "$@"
