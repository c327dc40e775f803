#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check that Documentation/*.rst says only what the tree can back.

  doc-check.py TREE              TREE: the unpacked linux-source-6.1

1. Every ".. kernel-doc:: PATH" directive resolves: the tree's
   scripts/kernel-doc runs on PATH with the directive's options, as the
   kernel's Sphinx extension (Documentation/sphinx/kerneldoc.py) would run
   it, and any warning fails - a function, type or DOC: section that is not
   there ("'X' not found") included.  PATH is relative to a kernel tree in
   which mrkit sits at drivers/infiniband/ulp/mrkit/ (its drop-in), so
   that prefix is read from this checkout.
2. Every :doc:`NAME` reference names a file in Documentation/.
3. The lines-saved tables of the porting guide are what
   scripts/ulp/porting-loc.py computes from the code.
4. Every report line documented as ``KEYWORD ...`` in
   Documentation/mrkit-testing.rst is printed by something in scripts/,
   kunit/ or samples/.
With --sphinx, also build the documents with the kernel's Sphinx
extensions (needs python3-sphinx), warnings fatal.
Prints one line per problem and "doc-check: ok" or "doc-check: FAILED".
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROJ = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DROPIN = "drivers/infiniband/ulp/mrkit/"
DIRECTIVE = re.compile(r"^(\s*)\.\. kernel-doc::\s*(\S+)\s*$")
OPTION = re.compile(r"^\s+:([a-z-]+):\s*(.*)$")


def directives(path):
    """[(line, file, {option: value})] of one rst file."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        mo = DIRECTIVE.match(lines[i])
        i += 1
        if not mo:
            continue
        start, indent, opts, last = i, len(mo.group(1)), {}, None
        while i < len(lines) and lines[i].strip():
            om = OPTION.match(lines[i])
            if om and len(lines[i]) - len(lines[i].lstrip()) > indent:
                last = om.group(1)
                opts[last] = om.group(2)
            elif last:
                opts[last] += " " + lines[i].strip()
            i += 1
        out.append((start, mo.group(2), opts))
    return out


def source(tree, rel):
    if rel.startswith(DROPIN):
        return os.path.join(PROJ, rel[len(DROPIN):])
    return os.path.join(tree, rel)


def where_documented(name):
    """Files of this checkout with a kernel-doc comment or DOC: for name."""
    pat = re.compile(r"^\s*\*\s*(DOC:\s*%s\s*$|(struct |enum |union |typedef )?%s\b\s*(\(\))?\s*-)"
                     % (re.escape(name), re.escape(name)), re.M)
    hits = []
    for p in sorted(glob.glob(os.path.join(PROJ, "**", "*.[ch]"), recursive=True)):
        with open(p, encoding="utf-8", errors="replace") as f:
            if pat.search(f.read()):
                hits.append(os.path.relpath(p, PROJ))
    return hits


def kernel_doc(tree, rst, line, rel, opts):
    """Problems of one directive, as kerneldoc.py would build its command."""
    where = f"{os.path.relpath(rst, PROJ)}:{line}: kernel-doc {rel}"
    path = source(tree, rel)
    if not os.path.isfile(path):
        shown = os.path.relpath(path, PROJ) if rel.startswith(DROPIN) else path
        return [f"{where}: no such file {shown} (the code that adds it has not landed, "
                f"or the path is wrong)"]
    cmd = ["perl", os.path.join(tree, "scripts/kernel-doc"), "-rst", "-enable-lineno",
           "-sphinx-version", "5.3.0"]
    names = []
    for n in (opts.get("no-identifiers") or "").split():
        cmd += ["-nosymbol", n]
    if "export" in opts or "internal" in opts:
        cmd += ["-export" if "export" in opts else "-internal"]
        for pat in (opts.get("export") or opts.get("internal") or "").split():
            for f in glob.glob(source(tree, pat)):
                cmd += ["-export-file", f]
        runs = [cmd + [path]]
    elif "doc" in opts:
        runs = [cmd + ["-function", opts["doc"], path]]
    elif "identifiers" in opts or "functions" in opts:
        names = (opts.get("identifiers") or opts.get("functions") or "").split()
        runs = [cmd + [a for n in names for a in ("-function", n)] + [path]]
        if not names:
            runs = [cmd + ["-no-doc-sections", path]]
    else:
        runs = [cmd + [path]]
    res = subprocess.run(runs[0], capture_output=True, text=True, check=False)
    errs = res.stderr.splitlines()
    # kernel-doc 6.1 says "'X' not found" only when nothing of a list was
    # found: look for each name's declaration in the output.
    for n in names if len(names) > 1 else []:
        if not re.search(r"^\.\. c:\w+:: .*\b%s\b" % re.escape(n), res.stdout, re.M):
            errs.append(f"{os.path.relpath(path, PROJ)}:1: warning: '{n}' not found")
    probs = []
    for w in errs:
        if not w.strip():
            continue
        hint = ""
        mo = re.search(r"'(.+)' not found", w)
        if mo:
            found = [f for f in where_documented(mo.group(1))
                     if f != os.path.relpath(path, PROJ)]
            hint = (f" (documented in {', '.join(found)}: point the directive there)" if found
                    else " (not documented in this checkout: the code that documents it "
                         "has not landed, or the name is wrong)")
        probs.append(f"{where}: {w.strip().replace(PROJ + '/', '')}{hint}")
    if res.returncode:
        probs.append(f"{where}: scripts/kernel-doc exited {res.returncode}")
    elif not res.stdout.strip() and not probs:
        probs.append(f"{where}: renders nothing")
    return probs


def doc_refs(rst, names):
    probs = []
    with open(rst, encoding="utf-8") as f:
        for no, text in enumerate(f, 1):
            for mo in re.finditer(r":doc:`(?:[^`<]*<)?([^`>]+)>?`", text):
                if mo.group(1) not in names:
                    probs.append(f"{os.path.relpath(rst, PROJ)}:{no}: :doc:`{mo.group(1)}`: "
                                 f"no such document in Documentation/")
    return probs


def report_lines(rst):
    """``KEYWORD ...`` report lines the testing guide documents, printed nowhere."""
    probs = []
    sources = []
    for d in ("scripts", "kunit", "samples"):
        for p in glob.glob(os.path.join(PROJ, d, "**", "*"), recursive=True):
            if os.path.isfile(p) and not p.endswith("doc-check.py"):
                with open(p, encoding="utf-8", errors="replace") as f:
                    sources.append(f.read())
    text = "\n".join(sources)
    with open(rst, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            mo = re.match(r"^``([A-Z][A-Z0-9]+) [^`]*``\s*$", line)
            if mo and not re.search(r"[\"']%s[ \\]" % mo.group(1), text):
                probs.append(f"{os.path.relpath(rst, PROJ)}:{no}: report line {mo.group(1)}: "
                             f"nothing in scripts/, kunit/ or samples/ prints it")
    return probs


def sphinx(tree, rsts):
    """Build the documents with the kernel's extensions; warnings fatal."""
    if not shutil.which("sphinx-build"):
        return ["--sphinx: sphinx-build not found (apt-get install python3-sphinx)"]
    with tempfile.TemporaryDirectory(prefix="mrkit-doc-") as tmp:
        src, srctree = os.path.join(tmp, "src"), os.path.join(tmp, "tree")
        os.makedirs(src)
        os.makedirs(os.path.join(srctree, os.path.dirname(DROPIN.rstrip("/"))))
        os.symlink(PROJ, os.path.join(srctree, DROPIN.rstrip("/")))
        for r in rsts:
            shutil.copy(r, src)
        names = [os.path.splitext(os.path.basename(r))[0] for r in rsts]
        with open(os.path.join(src, "index.rst"), "w", encoding="utf-8") as f:
            f.write("mrkit\n=====\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in names))
        with open(os.path.join(src, "conf.py"), "w", encoding="utf-8") as f:
            f.write(f"""import sys
sys.path.insert(0, {os.path.join(tree, 'Documentation/sphinx')!r})
extensions = ['kerneldoc', 'rstFlatTable', 'kernel_include', 'kfigure']
kerneldoc_bin = {os.path.join(tree, 'scripts/kernel-doc')!r}
kerneldoc_srctree = {srctree!r}
project = 'mrkit'
master_doc = 'index'
highlight_language = 'none'
""")
        res = subprocess.run(["sphinx-build", "-W", "--keep-going", "-q", "-b", "html",
                              src, os.path.join(tmp, "html")],
                             capture_output=True, text=True, check=False)
        out = [ln for ln in (res.stdout + res.stderr).splitlines() if ln.strip()]
        if res.returncode:
            return [f"sphinx: {ln}" for ln in out] or ["sphinx: sphinx-build failed"]
        print(f"doc-check: sphinx-build -W (the kernel's extensions): {len(rsts)} documents built")
    return []


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__)
        return 2
    tree = args[0]
    rsts = sorted(glob.glob(os.path.join(PROJ, "Documentation", "*.rst")))
    names = {os.path.splitext(os.path.basename(r))[0] for r in rsts}
    probs, n = [], 0
    for rst in rsts:
        for line, rel, opts in directives(rst):
            n += 1
            probs += kernel_doc(tree, rst, line, rel, opts)
        probs += doc_refs(rst, names)
    testing = os.path.join(PROJ, "Documentation", "mrkit-testing.rst")
    if os.path.exists(testing):
        probs += report_lines(testing)
    guide = os.path.join(PROJ, "Documentation", "mrkit.rst")
    if os.path.exists(guide):
        res = subprocess.run([sys.executable, os.path.join(PROJ, "scripts/ulp/porting-loc.py"),
                              "--tree", tree, "--check", guide],
                             capture_output=True, text=True, check=False)
        if res.returncode:
            probs += [ln for ln in (res.stdout + res.stderr).splitlines() if ln.strip()]
    if "--sphinx" in sys.argv:
        probs += sphinx(tree, rsts)
    for p in probs:
        print(f"doc-check: {p}")
    print(f"doc-check: {n} kernel-doc directives in {len(rsts)} documents: "
          + ("ok" if not probs else f"FAILED ({len(probs)} problems)"))
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
