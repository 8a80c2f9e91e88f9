#!/usr/bin/python3
"""check_policy_doc.py — docs/policy.md describes the policy format the
parser reads: every key of the parser's key tables
(src/partitioner/policy_parse.c: top level, rule, match, block, prefer,
precision and algorithm words) appears in the page as `key`, and every
```yaml block of the page is a policy `hetrt policy check` accepts.

Usage: check_policy_doc.py --root SOURCE_DIR --hetrt PATH/TO/hetrt
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def key_tables(parser_c):
    text = open(parser_c, encoding="utf-8").read()
    tables = re.findall(r"static const char \*const (\w+)\[\] = \{(.*?)\};",
                        text, re.S)
    keys = {}
    for name, body in tables:
        keys[name] = re.findall(r'"([^"]+)"', body)
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--hetrt", required=True)
    a = ap.parse_args()
    page = open(os.path.join(a.root, "docs/policy.md"), encoding="utf-8").read()
    tables = key_tables(os.path.join(a.root, "src/partitioner/policy_parse.c"))
    failures = []
    if len(tables) < 6:
        failures.append(f"found only {len(tables)} key tables in policy_parse.c")
    # het_precision_str's names are output words, not input keys.
    tables.pop("names", None)
    for name, keys in sorted(tables.items()):
        for k in keys:
            if not re.search(r"`[^`\n]*\b" + re.escape(k) + r"\b[^`\n]*`", page):
                failures.append(f"docs/policy.md does not describe '{k}' ({name})")
    blocks = re.findall(r"```yaml\n(.*?)```", page, re.S)
    if len(blocks) < 5:
        failures.append(f"docs/policy.md has only {len(blocks)} yaml examples")
    with tempfile.TemporaryDirectory() as tmp:
        for i, block in enumerate(blocks):
            path = os.path.join(tmp, f"example_{i}.yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(block)
            r = subprocess.run([a.hetrt, "policy", "check", path],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"example {i} is not a valid policy: {r.stderr.strip()}")
    for f in failures:
        print("FAILED:", f)
    checked = sum(len(k) for k in tables.values())
    print(f"check_policy_doc: {checked} keys, {len(blocks)} examples, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
