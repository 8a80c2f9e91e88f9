#!/usr/bin/python3
"""doxygen_filter.py — Doxygen's INPUT_FILTER for include/hetrt/*.h.

The headers document their declarations with plain /* */ comments; this
filter turns them into Doxygen comments on the way in, keeping every line
where it was (so warnings and source links name the real line):

1. the file's opening comment becomes the file's documentation (\\file);
2. a comment right before a declaration becomes its documentation; at file
   scope, a comment followed by several declarations with no blank line
   between (pin/forbid/prefer; a callback type and its setter) documents
   each function among them (a \\copydoc of the first declaration on the
   later ones' first line);
3. a comment after a member on its line documents that member (/**<);
4. a section banner inside a struct ("/* ---- ABI 3: streams ----") heads
   a member group (@name) of the slots up to the next banner; at file
   scope a one-line banner ("/* ---- tensors ---- */") stays a plain
   comment and one with text under it documents what follows, like any
   comment; comments inside macros stay plain;
5. "e.g. ", "i.e. " and "ABI 1. " no longer end the brief description
   (the first sentence, JAVADOC_AUTOBRIEF).

Usage (what Doxygen runs): doxygen_filter.py HEADER  > filtered text
"""
import re
import sys

BANNER = re.compile(r"^(\s*)/\* -{3,} *(.*?) *(-{3,})? *(\*/)?$")
TRAILING = re.compile(r"^(\s*\S.*?\s)/\*(?![*<])")
COMMENT_START = re.compile(r"^(\s*)/\*(?!\*)")
NOT_A_STOP = re.compile(r"\b(e\.g|i\.e|ABI \d(?:-\d)?)\. ")
FUNCTION_NAME = re.compile(r"\b(het_\w+)\s*\(")
POINTER_TYPEDEF = re.compile(r"\(\s*\*\s*(het_\w+)\s*\)")
LAST_NAME = re.compile(r"\b(het_\w+)\s*;\s*$")


def strip_comments(line):
    return re.sub(r"/\*.*?\*/", "", line)


def comment_end(lines, i):
    """Index of the line holding the end of the comment that starts at i."""
    j, start = i, lines[i].find("/*") + 2
    while "*/" not in lines[j][start:]:
        j, start = j + 1, 0
        if j == len(lines):
            return len(lines) - 1
    return j


def declaration_end(lines, i):
    """Index of the line ending the declaration that starts at i, or None
    when line i does not start a declaration (a macro, a comment, blank)."""
    s = lines[i].strip()
    if not s or s.startswith(("#", "/*", "//", "}")):
        return None
    depth = 0
    for j in range(i, len(lines)):
        code = strip_comments(lines[j])
        depth += code.count("{") - code.count("}")
        if depth == 0 and code.rstrip().endswith(";"):
            return j
        if depth < 0:
            return None
    return None


def declared_name(text):
    """The name a declaration declares: a function, or a typedef (of a
    function pointer too); None for anything else."""
    text = " ".join(strip_comments(text).split())
    if text.startswith("typedef"):
        m = POINTER_TYPEDEF.search(text) or LAST_NAME.search(text)
    else:
        m = FUNCTION_NAME.search(text)
    return m.group(1) if m else None


def share_comment(lines, out, end):
    """Rule 2's sharing: the declarations right after the comment ending on
    line end; the functions among the second and later ones copy the
    first's documentation."""
    decls, j = [], end + 1
    while j < len(lines):
        d = declaration_end(lines, j)
        if d is None:
            break
        decls.append((j, declared_name("\n".join(lines[j:d + 1]))))
        j = d + 1
    if len(decls) < 2 or not decls[0][1]:
        return
    for start, name in decls[1:]:
        if name and "(" in lines[start] and not lines[start].lstrip().startswith("typedef"):
            out[start] = "/** \\copydoc %s */ %s" % (decls[0][1], out[start])


def struct_banner(lines, out, i, banner, group_open):
    """Rule 4: the banner at line i heads a member group; returns the line
    after its comment."""
    end = comment_end(lines, i)
    title = banner.group(2)
    if not banner.group(3) and end > i and "----" in lines[i + 1]:
        # the title goes on to the closing dashes on the next line
        title += " " + re.sub(r"^\s*\*\s?|\s*-{3,}.*$", "", lines[i + 1])
        out[i + 1] = banner.group(1) + " *"
    out[i] = "%s%s/** @name %s" % ("/** @} */ " if group_open else "",
                                   banner.group(1), title.strip())
    if end == i:
        out[i] += " */ /** @{ */"
    else:
        out[end] = out[end].replace("*/", "*/ /** @{ */", 1)
    return end + 1


def filter_header(text):
    lines = text.split("\n")
    out = list(lines)
    depth = 0           # brace depth at the start of line i (file scope: 0)
    in_macro = False    # inside a #define continued with backslashes
    group_open = False  # a struct's member group, opened by a banner
    first = True
    i = 0
    while i < len(lines):
        line = lines[i]
        if in_macro or line.lstrip().startswith("#define"):
            in_macro = line.rstrip().endswith("\\")
            i += 1
            continue
        if line.strip() in ('extern "C" {', "}") and lines[i - 1].strip() == "#ifdef __cplusplus":
            i += 1  # the C++ linkage block, which Doxygen's preprocessor drops
            continue
        banner = BANNER.match(line)
        if banner and depth > 0:
            i = struct_banner(lines, out, i, banner, group_open)
            group_open = True
            continue
        if banner and comment_end(lines, i) > i:
            out[i] = lines[i] = "%s/* %s." % (banner.group(1), banner.group(2))
            banner = None
        if not COMMENT_START.match(lines[i]) or banner:
            code = strip_comments(line)
            closes = code.count("}")
            if group_open and closes and depth + code.count("{") - closes == 0:
                out[i] = "/** @} */ " + out[i]
                group_open = False
            if depth > 0 or code.count("{"):
                out[i] = TRAILING.sub(lambda a: a.group(1) + "/**<", out[i], count=1)
            depth += code.count("{") - closes
            i += 1
            continue
        end = comment_end(lines, i)
        for k in range(i, end + 1):
            out[k] = NOT_A_STOP.sub(lambda a: a.group(1) + ".\\ ", out[k])
        out[i] = COMMENT_START.sub(lambda a: a.group(1) + "/**", out[i], count=1)
        if first and depth == 0:
            out[end] = out[end].replace("*/", "\\file */", 1)
        elif depth == 0:
            share_comment(lines, out, end)
        first = False
        i = end + 1
    return "\n".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(filter_header(f.read()))


if __name__ == "__main__":
    main()
