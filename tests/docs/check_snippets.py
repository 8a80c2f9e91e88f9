#!/usr/bin/python3
"""check_snippets.py — the code in a Markdown page is real code.

A fenced block is checked according to the HTML comment on the line
before its opening fence:

  <!-- file: PATH -->     the block is exactly the file PATH (relative to
                          the source root), e.g. a program a test compiles
  <!-- excerpt: PATH -->  the block's lines appear, in a row and unchanged,
                          in the file PATH
  <!-- run: sh -->        with --run, the page's sh blocks so marked run in
                          order, as one bash script (set -euo pipefail), in
                          the --run folder
  <!-- run: python -->    with --run, run by --python, when it has what
                          --python-needs names (a module, or module.attr;
                          else skipped, said so on stdout)
  <!-- shown -->          not checked (commands that need root, say)

Every ```c and ```python block needs one of these; unmarked blocks of other
languages are left alone.

Usage: check_snippets.py --root SRC [--run DIR] [--python PY]
                         [--python-needs MODULE] PAGE.md...
"""
import argparse
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```(\w*)\s*$")
MARK = re.compile(r"^<!--\s*(file|excerpt|run|shown)\s*:?\s*(.*?)\s*-->\s*$")


def blocks(path):
    """(line number, language, marker kind, marker argument, text) per block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            lang, start = m.group(1), i
            mark = MARK.match(lines[i - 1]) if i else None
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            text = "\n".join(lines[i + 1:j]) + "\n"
            out.append((start + 1, lang, mark.group(1) if mark else None,
                        mark.group(2) if mark else "", text))
            i = j + 1
            continue
        i += 1
    return out


def check_page(page, root, problems):
    runs = []
    for line, lang, kind, arg, text in blocks(page):
        where = "%s:%d" % (page, line)
        if kind in ("file", "excerpt"):
            path = os.path.join(root, arg)
            try:
                with open(path, encoding="utf-8") as f:
                    want = f.read()
            except OSError as e:
                problems.append("%s: %s" % (where, e))
                continue
            if kind == "file" and text != want:
                problems.append("%s: the block differs from %s" % (where, arg))
            if kind == "excerpt" and text not in want:
                problems.append("%s: the block is not a run of lines of %s" % (where, arg))
        elif kind == "run":
            if arg not in ("sh", "python") or arg != (lang or "sh").replace("bash", "sh"):
                problems.append("%s: 'run: %s' on a ```%s block" % (where, arg, lang))
            runs.append((where, arg, text))
        elif kind is None and lang in ("c", "python"):
            problems.append("%s: a ```%s block without a file/excerpt/run/shown "
                            "marker" % (where, lang))
    return runs


def run_blocks(runs, folder, python, needs):
    script = "set -euo pipefail\n" + "".join(
        "# %s\n%s" % (where, text) for where, kind, text in runs if kind == "sh")
    problems = []
    if script.count("\n") > 1:
        print("running the sh blocks in %s" % folder, flush=True)
        r = subprocess.run(["bash", "-c", script], cwd=folder)
        if r.returncode != 0:
            problems.append("the sh blocks failed (exit %d)" % r.returncode)
    for where, kind, text in runs:
        if kind != "python":
            continue
        module = needs.split(".")[0]
        probe = subprocess.run([python, "-c", "import %s; %s" % (module, needs)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if needs and probe.returncode != 0:
            print("skipped %s: %s has no %s" % (where, python, needs))
            continue
        print("running %s" % where, flush=True)
        r = subprocess.run([python, "-c", text], cwd=folder)
        if r.returncode != 0:
            problems.append("%s: the python block failed (exit %d)" % (where, r.returncode))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--run")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--python-needs", default="")
    ap.add_argument("pages", nargs="+")
    a = ap.parse_args()
    problems, runs, n = [], [], 0
    for page in a.pages:
        runs += check_page(page, a.root, problems)
        n += len(blocks(page))
    if a.run and not problems:
        problems += run_blocks(runs, a.run, a.python, a.python_needs)
    for p in problems:
        print("FAILED: " + p)
    print("%s: %d blocks in %d pages, %d problems" % (
        os.path.basename(sys.argv[0]), n, len(a.pages), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
