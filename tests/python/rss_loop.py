#!/usr/bin/python3
"""rss_loop.py — leak check by resident memory: creates, runs and
destroys a session N times (default 10000), then runs one session N
times, then fails N runs and N session creations, printing the process's
RSS at checkpoints.  Flat numbers after the first checkpoint mean no
leak per iteration.

Usage: PYTHONPATH=BUILD/python /usr/bin/python3 tests/python/rss_loop.py [N]
(test_leaks.py runs a shorter version with limits.)"""

import gc
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hetrt  # noqa: E402
import models  # noqa: E402


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def loop(label, n, body):
    marks = []
    for i in range(n):
        body(i)
        if (i + 1) % max(1, n // 5) == 0:
            gc.collect()
            marks.append(rss_kib())
    print("%-28s n=%d  RSS KiB at each fifth: %s  (growth after first: %+d KiB)"
          % (label, n, marks, marks[-1] - marks[0]))
    return marks


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    model = models.conv_relu_add()
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    print("start RSS %d KiB" % rss_kib())

    def create_run_destroy(i):
        sess = hetrt.InferenceSession(model)
        sess.run(None, {"x": x})

    loop("create+run+destroy", n, create_run_destroy)
    sess = hetrt.InferenceSession(model)
    loop("run", n, lambda i: sess.run(None, {"x": x}))

    def failing_run(i):
        try:
            sess.run(None, {"x": x[:, :2]} if i % 2 else {"y": x})
        except hetrt.Error:
            pass

    loop("failing run", n, failing_run)

    def failing_create(i):
        try:
            hetrt.InferenceSession(model, options={"no_such_key": "1"} if i % 2 else None,
                                   providers=None if i % 2 else ["nope"])
        except hetrt.Error:
            pass

    loop("failing create", n, failing_create)
    print("refcount of the input after all loops: %d (a fresh array has 2 here)"
          % sys.getrefcount(x))


if __name__ == "__main__":
    main()
