#!/usr/bin/python3
"""check_layers.py — hetrt's layering, checked (the rules: tools/layers.txt).

Usage: check_layers.py SOURCE_DIR [--nm LAYER=ARCHIVE ...]

1. Includes: every quoted #include of every .c/.h under SOURCE_DIR/src is
   resolved as the compiler would (the including file's folder first, then
   src/), relative paths ("../executor/x.h") included; the header must
   belong to the including file's own layer or to one it uses (for a
   "layer:file.h" use, that one header).  Public headers (hetrt/...) and
   generated ones (onnx.pb-c.h) are allowed everywhere.
2. With --nm: for each layer's static library, every undefined het_* symbol
   must be defined in that layer's library or in one of the layers it uses
   (so a call that reaches up without an include fails too).

Prints each violation as FILE:LINE: what, and exits 1 when there is any;
exit 0 and "layers: ok" otherwise.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(root):
    layers = []  # (name, folder, {layer: None | set(files)})
    with open(os.path.join(root, "tools", "layers.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line and line[0] == "plugin":  # a layer built on its own
                line = line[1:]
            if not line:
                continue
            name, folder, uses = line[0], line[1], {}
            for u in line[2:]:
                layer, _, header = u.partition(":")
                if header:
                    uses.setdefault(layer, set())
                    if uses[layer] is not None:
                        uses[layer].add(header)
                else:
                    uses[layer] = None
            layers.append((name, os.path.normpath(folder), uses))
    return layers


def layer_of(layers, rel):
    """The layer owning path rel (relative to the source dir): the one
    whose folder is the longest prefix."""
    best = None
    for name, folder, _ in layers:
        if rel == folder or rel.startswith(folder + os.sep):
            if best is None or len(folder) > len(best[1]):
                best = (name, folder)
    return best


def check_includes(root, layers):
    by_name = {n: (f, u) for n, f, u in layers}
    errors = []
    src = os.path.join(root, "src")
    for dirpath, _, files in os.walk(src):
        for fn in sorted(files):
            if not fn.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root)
            own = layer_of(layers, rel)
            if own is None:
                errors.append("%s: in no layer of tools/layers.txt" % rel)
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
            for no, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if inc.startswith("hetrt/") or inc == "onnx.pb-c.h":
                    continue
                here = os.path.normpath(os.path.join(dirpath, inc))
                target = here if os.path.exists(here) else \
                    os.path.normpath(os.path.join(src, inc))
                if not os.path.exists(target):
                    errors.append("%s:%d: \"%s\" not found" % (rel, no, inc))
                    continue
                trel = os.path.relpath(target, root)
                tl = layer_of(layers, trel)
                if tl is None:
                    errors.append("%s:%d: \"%s\" is outside every layer" %
                                  (rel, no, inc))
                    continue
                if tl[0] == own[0]:
                    continue
                uses = by_name[own[0]][1]
                if tl[0] not in uses:
                    errors.append("%s:%d: layer %s includes \"%s\" of layer %s,"
                                  " which it may not use" %
                                  (rel, no, own[0], inc, tl[0]))
                elif uses[tl[0]] is not None and \
                        os.path.relpath(trel, tl[1]) not in uses[tl[0]]:
                    errors.append("%s:%d: layer %s may include only %s of layer"
                                  " %s, not \"%s\"" %
                                  (rel, no, own[0], sorted(uses[tl[0]]), tl[0],
                                   inc))
    return errors


def symbols(archive):
    out = subprocess.run(["nm", "-g", archive], capture_output=True,
                         text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[-1].startswith("het_"):
            continue
        (undefined if parts[-2] == "U" else defined).add(parts[-1])
    return defined, undefined


def check_symbols(layers, archives):
    errors = []
    syms = {n: symbols(a) for n, a in archives.items()}
    for name, _, uses in layers:
        if name not in syms:
            continue
        ok = set(syms[name][0])
        for u in uses:
            ok |= syms.get(u, (set(), set()))[0]
        for s in sorted(syms[name][1] - ok):
            home = [n for n, (d, _) in syms.items() if s in d]
            errors.append("%s: layer %s calls %s%s, which it may not use" %
                          (archives[name], name, s,
                           " of layer " + home[0] if home else
                           " (defined nowhere)"))
    return errors


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root = argv[1]
    archives = {}
    rest = argv[2:]
    while rest:
        if rest[0] != "--nm" or len(rest) < 2 or "=" not in rest[1]:
            sys.exit("check_layers.py: bad argument %r" % rest[0])
        name, path = rest[1].split("=", 1)
        archives[name] = path
        rest = rest[2:]
    layers = read_layers(root)
    errors = check_includes(root, layers)
    if archives:
        errors += check_symbols(layers, archives)
    for e in errors:
        print(e)
    if errors:
        print("layers: %d violations of tools/layers.txt" % len(errors))
        return 1
    print("layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
