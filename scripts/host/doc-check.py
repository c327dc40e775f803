#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check that README and Documentation/*.rst say only what the tree backs.

  doc-check.py TREE [--update] [--sphinx]     TREE: the unpacked linux-source-6.1

1. Every ".. kernel-doc:: PATH" directive resolves: the tree's
   scripts/kernel-doc runs on PATH with the directive's options, as the
   kernel's Sphinx extension (Documentation/sphinx/kerneldoc.py) would run
   it, and any warning fails - a function, type or DOC: section that is not
   there ("'X' not found") included.  PATH is relative to a kernel tree in
   which mrkit sits at drivers/infiniband/ulp/mrkit/ (its drop-in), so
   that prefix is read from this checkout.
2. The API reference is whole and public: the functions the
   ":identifiers:" directives name are exactly mrkit's exports
   (EXPORT_SYMBOL_NS_GPL(..., MRKIT)) and the inline functions of
   include/rdma/mrkit.h, and the types they name are that header's;
   every tracepoint trace.c exports is named as ``EVENT``.
3. Every :doc:`NAME` reference names a file in Documentation/.
4. The code-line tables of the porting guide, one per ULP between the
   lines ".. patches-loc ULP begin" and ".. patches-loc ULP end" of
   Documentation/mrkit.rst, are what scripts/host/patches.py's loc_rows()
   gives for ulp/ULP/series (--update rewrites them).
5. Every report line documented as ``KEYWORD ...`` in
   Documentation/mrkit-testing.rst is printed by something in scripts/,
   kunit/, samples/ or bench/, and each of its key= fields is in a file
   that prints it or in a guest's script (whose fields the reports pass
   on).
6. What README, scripts/README and the documents name exists: each path
   under one of the checkout's directories (in the checkout or, for the
   kernel's own, in TREE; an upper-case component such as ULP stands for
   any name), each "make TARGET" in the Makefile, each mrkit_* and MRKIT_*
   name in the sources, each mrkit_*() as a function; README has at most
   200 lines.
With --sphinx, also build the documents with the kernel's Sphinx
extensions (needs python3-sphinx), warnings fatal.
Prints one line per problem and "doc-check: ... ok" or "... FAILED".
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJ = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import patches  # noqa: E402
import splice  # noqa: E402

DROPIN = "drivers/infiniband/ulp/mrkit/"
DIRECTIVE = re.compile(r"^(\s*)\.\. kernel-doc::\s*(\S+)\s*$")
OPTION = re.compile(r"^\s+:([a-z-]+):\s*(.*)$")
README_MAX = 200


def rel(path):
    return os.path.relpath(path, PROJ)


def tracked(*pathspecs):
    """The checkout's files (tracked, or new and not ignored) under pathspecs."""
    out = subprocess.run(["git", "-C", PROJ, "ls-files", "-co", "--exclude-standard", "--",
                          *pathspecs], capture_output=True, text=True, check=True).stdout
    return [os.path.join(PROJ, p) for p in out.split("\n")
            if p and os.path.isfile(os.path.join(PROJ, p))]


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


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


def kernel_doc(tree, rst, line, dpath, opts):
    """Problems of one directive, as kerneldoc.py would build its command."""
    where = f"{os.path.relpath(rst, PROJ)}:{line}: kernel-doc {dpath}"
    path = source(tree, dpath)
    if not os.path.isfile(path):
        shown = os.path.relpath(path, PROJ) if dpath.startswith(DROPIN) else path
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


def api(rsts):
    """The API reference: exactly the exports, mrkit.h's inlines and types
    (not the header's internal inlines, named __mrkit_*)."""
    header = read(os.path.join(PROJ, "include/rdma/mrkit.h"))
    exports = set()
    for p in tracked("*.c"):
        exports |= set(re.findall(r"EXPORT_SYMBOL_NS_GPL\((\w+),\s*MRKIT\)", read(p)))
    inlines = set(re.findall(r"^static inline [^(]*?\b(\w+)\(", header, re.M))
    inlines = {n for n in inlines if not n.startswith("__")}
    types = set(re.findall(r"^(?:struct|enum|union) (\w+) \{", header, re.M))
    types |= set(re.findall(r"^typedef [^;]*?\(\*(\w+)\)", header, re.M))
    want = exports | inlines
    probs, named = [], set()
    for rst in rsts:
        for line, path, opts in directives(rst):
            for n in (opts.get("identifiers") or opts.get("functions") or "").split():
                named.add(n)
                if n not in want and n not in types:
                    probs.append(f"{rel(rst)}:{line}: {n}: in the API reference but neither "
                                 f"exported to MRKIT, inline in mrkit.h, nor a type of mrkit.h")
    for n in sorted(want - named):
        probs.append(f"API reference: {n}() is {'exported' if n in exports else 'in mrkit.h'} "
                     f"but no kernel-doc directive names it")
    # The tracepoints, each exported for other modules' probes.
    text = "".join(read(r) for r in rsts)
    for n in re.findall(r"EXPORT_TRACEPOINT_SYMBOL_GPL\((\w+)\)", read(os.path.join(PROJ, "trace.c"))):
        if f"``{n}``" not in text:
            probs.append(f"tracepoint {n}: exported by trace.c, named in no document")
    return probs


def loc_block(tree, ulp):
    """The generated rst of one ULP: its patches and their code lines."""
    rows = patches.loc_rows(tree, os.path.join(PROJ, "ulp", ulp))
    out = [f".. list-table:: ``ulp/{ulp}/series``: code lines each patch removes from "
           f"upstream and puts in",
           "   :header-rows: 1", "   :widths: 70 15 15", "",
           "   * - Patch", "     - Upstream", "     - On mrkit"]
    for subject, up, ours in rows:
        out += [f"   * - {subject}", f"     - {up}", f"     - {ours}"]
    up, ours = sum(r[1] for r in rows), sum(r[2] for r in rows)
    out += ["   * - Total", f"     - {up}", f"     - {ours}", ""]
    out.append(f"Code lines saved: {up - ours}." if up >= ours else
               f"Code lines saved: none; the code on mrkit is {ours - up} lines longer.")
    return out


def loc_tables(tree, rst, update):
    """Problems of the generated tables in rst (rewritten with update)."""
    text = read(rst)
    new, probs = text, []
    ulps = sorted(os.path.basename(os.path.dirname(s))
                  for s in glob.glob(os.path.join(PROJ, "ulp", "*", "series")))
    for ulp in set(re.findall(r"^\.\. patches-loc (\S+) begin$", text, re.M)) - set(ulps):
        probs.append(f"{rel(rst)}: a patches-loc block for {ulp}, which has no ulp/{ulp}/series")
    for ulp in ulps:
        pat = re.compile(r"(^\.\. patches-loc %s begin\n)(.*?)(^\.\. patches-loc %s end$)"
                         % (ulp, ulp), re.S | re.M)
        if not pat.search(new):
            probs.append(f"{rel(rst)}: no '.. patches-loc {ulp} begin' ... end block")
            continue
        try:
            body = "\n" + "\n".join(loc_block(tree, ulp)) + "\n\n"
        except (patches.SeriesError, splice.SpliceError, OSError) as e:
            probs.append(f"{rel(rst)}: ulp/{ulp}: {e}")
            continue
        new = pat.sub(lambda mo: mo.group(1) + body + mo.group(3), new)
    if new != text:
        if update:
            with open(rst, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"doc-check: {rel(rst)}: the code-line tables rewritten")
        else:
            probs.append(f"{rel(rst)}: the code-line tables differ from ulp/*/series and the "
                         f"splice files; run scripts/host/doc-check.py TREE --update")
    return probs


def report_lines(rst):
    """``KEYWORD ...`` lines the testing guide documents that nothing prints."""
    files = [p for p in tracked("scripts", "kunit", "samples", "bench")
             if "/tests/" not in p and not p.endswith("doc-check.py")]
    texts = {p: read(p) for p in files}
    probs = []
    for no, line in enumerate(read(rst).split("\n"), 1):
        mo = re.match(r"^``([A-Z][A-Z0-9]+) ([^`]*)``\s*$", line)
        if not mo:
            continue
        word = mo.group(1)
        printers = [t for t in texts.values() if re.search(r"[\"']%s[ \\]" % word, t)]
        if not printers:
            probs.append(f"{rel(rst)}:{no}: report line {word}: nothing in scripts/, kunit/, "
                         f"samples/ or bench/ prints it")
            continue
        # A field is the printer's, or a guest's it passes on.
        guests = [t for p, t in texts.items() if "/scripts/guest/" in p]
        for key in re.findall(r"(?<![\w.])([a-z_]+)=", mo.group(2)):
            if not any(re.search(r"\b%s=|[\"']%s[\"']" % (key, key), t)
                       for t in printers + guests):
                probs.append(f"{rel(rst)}:{no}: report line {word}: no field {key}= in the "
                             f"files that print it or in the guests' scripts")
    return probs


def targets():
    text = read(os.path.join(PROJ, "Makefile"))
    return set(re.findall(r"^([a-z][\w-]*):", text, re.M))


def named_things(tree, docs):
    """Paths, make targets and mrkit names in docs that the tree lacks."""
    tops = sorted({p.split("/")[0] for p in (rel(x) for x in tracked(".")) if "/" in p} |
                  {"drivers", "net"})
    path_re = re.compile(r"(?<![\w/.$<-])((?:%s)/[\w./*<>+-]*)" % "|".join(map(re.escape, tops)))
    sources = {p: read(p) for p in tracked(".")
               if not p.endswith((".rst", "doc-check.py")) and os.path.basename(p) != "README"}
    words = set()
    calls = set()
    for p, t in sources.items():
        words |= set(re.findall(r"\b(?:mrkit|MRKIT)_\w+", t))
        if p.endswith((".c", ".h", ".splice")):
            calls |= set(re.findall(r"\b(mrkit_\w+)\s*\(", t))
    make = targets()
    probs = []
    for doc in docs:
        text = read(doc)
        if rel(doc) == "README" and text.count("\n") > README_MAX:
            probs.append(f"README: {text.count(chr(10))} lines, more than {README_MAX}")
        for no, line in enumerate(text.split("\n"), 1):
            where = f"{rel(doc)}:{no}"
            for mo in path_re.finditer(line):
                p = mo.group(1).rstrip(".")
                pat = re.sub(r"<[^>]*>", "*", p)
                pat = "/".join(re.sub(r"\b[A-Z][A-Z0-9_]*\b", "*", c)
                               if not c.startswith(("Documentation", "Kbuild", "Kconfig",
                                                    "Makefile", "README"))
                               else c for c in pat.split("/"))
                if pat == DROPIN.rstrip("/"):
                    found = [PROJ]
                elif pat.startswith(DROPIN):
                    found = glob.glob(os.path.join(PROJ, pat[len(DROPIN):]))
                else:
                    found = glob.glob(os.path.join(PROJ, pat)) or glob.glob(os.path.join(tree, pat))
                if not found:
                    probs.append(f"{where}: {p}: no such file in the checkout or in TREE")
            for mo in re.finditer(r"\bmake ([a-z][\w-]*)", line):
                if mo.group(1) not in make and mo.group(1) not in ("target", "targets"):
                    probs.append(f"{where}: make {mo.group(1)}: no such target in the Makefile")
            for mo in re.finditer(r"\b(?:mrkit|MRKIT)_\w+", line):
                name = mo.group(0).rstrip("_")
                if name.endswith("_") or name in words:
                    continue
                # A family written as a prefix, e.g. mrkit_io_*().
                if line[mo.end():mo.end() + 1] == "*" and any(w.startswith(name) for w in words):
                    continue
                probs.append(f"{where}: {name}: named nowhere in the sources")
            for mo in re.finditer(r"\b(mrkit_\w+)\(\)", line):
                if mo.group(1) not in calls:
                    probs.append(f"{where}: {mo.group(1)}(): no such function in the sources")
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
    guide = os.path.join(PROJ, "Documentation", "mrkit.rst")
    testing = os.path.join(PROJ, "Documentation", "mrkit-testing.rst")
    probs, n = [], 0
    if os.path.exists(guide):
        probs += loc_tables(tree, guide, "--update" in sys.argv)
    for rst in rsts:
        for line, path, opts in directives(rst):
            n += 1
            probs += kernel_doc(tree, rst, line, path, opts)
        probs += doc_refs(rst, names)
    probs += api(rsts)
    if os.path.exists(testing):
        probs += report_lines(testing)
    probs += named_things(tree, [os.path.join(PROJ, "README"),
                                 os.path.join(PROJ, "scripts", "README")] + rsts)
    if "--sphinx" in sys.argv:
        probs += sphinx(tree, rsts)
    for p in probs:
        print(f"doc-check: {p}")
    print(f"doc-check: README, scripts/README and {len(rsts)} documents, {n} kernel-doc "
          f"directives: "
          + ("ok" if not probs else f"FAILED ({len(probs)} problems)"))
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
