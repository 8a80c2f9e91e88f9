#!/usr/bin/python3
"""check_api_docs.py — the API reference documents every public function.

Runs Doxygen with the build's configuration (docs/Doxyfile, made from
docs/Doxyfile.in) into a temporary folder, then fails when Doxygen warned,
or when a function a public header declares with HET_API is missing from
the XML output or has neither a brief nor a detailed description there,
or from the HTML page of its header.

Usage: check_api_docs.py DOXYGEN DOXYFILE HEADER...
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DECL = re.compile(r"\bHET_API\b[^;(]*?\b(het_\w+)\s*\(", re.S)


def public_functions(header):
    with open(header, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    return DECL.findall(text)


def run_doxygen(doxygen, doxyfile, out):
    with open(doxyfile, encoding="utf-8") as f:
        config = f.read()
    config += "\nOUTPUT_DIRECTORY = %s\nWARN_LOGFILE = %s/warnings.log\n" % (out, out)
    r = subprocess.run([doxygen, "-"], input=config, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit("doxygen failed (%d):\n%s" % (r.returncode, r.stdout))
    with open(os.path.join(out, "warnings.log"), encoding="utf-8") as f:
        warnings = f.read().strip()
    return (r.stdout.strip() + "\n" + warnings).strip()


def documented(xml_dir, header):
    """{function name: description text} of the header's XML page."""
    base = os.path.basename(header).replace("_", "__").replace(".", "_8")
    tree = ET.parse(os.path.join(xml_dir, base + ".xml"))
    docs = {}
    for m in tree.iter("memberdef"):
        if m.get("kind") != "function":
            continue
        text = " ".join("".join(m.find(tag).itertext()).strip()
                        for tag in ("briefdescription", "detaileddescription"))
        docs[m.find("name").text] = text.strip()
    return docs, base + ".html"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    doxygen, doxyfile, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not os.path.isfile(doxyfile):
        sys.exit("%s does not exist: docs/CMakeLists.txt configures it "
                 "(add_subdirectory(docs) in the top-level CMakeLists.txt)" % doxyfile)
    problems = []
    with tempfile.TemporaryDirectory() as out:
        warnings = run_doxygen(doxygen, doxyfile, out)
        if warnings:
            problems.append("doxygen warned:\n  " + warnings.replace("\n", "\n  "))
        total = 0
        for header in headers:
            names = public_functions(header)
            if not names:
                problems.append("%s: no HET_API functions found" % header)
            docs, page = documented(os.path.join(out, "xml"), header)
            with open(os.path.join(out, "html", page), encoding="utf-8") as f:
                html = f.read()
            for name in names:
                total += 1
                if name not in docs:
                    problems.append("%s: %s is not in the reference" % (header, name))
                elif not docs[name]:
                    problems.append("%s: %s has no documentation" % (header, name))
                elif name not in html:
                    problems.append("%s: %s is not on %s" % (header, name, page))
    if problems:
        print("\n".join(problems))
        print("api_docs: %d problem(s)" % len(problems))
        return 1
    print("api_docs: %d public functions of %d headers documented, no warnings"
          % (total, len(headers)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
