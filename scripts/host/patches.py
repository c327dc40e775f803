#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write a converted ULP or a provider as a git format-patch series against linux-source-6.1.

  patches.py --tree TREE --out DIR ulp/ULP|provider/P

The series is made at build time, never kept in git: the upstream files
the ULP's splice files name are committed, as they are in TREE, to a
temporary git repository as the base; then, patch by patch in the order
of ulp/ULP/series, the splice directives of that patch and all before it
are applied to the upstream files (splice.py's plan and render, the same
code that builds the modules) and committed with the patch's message;
git format-patch writes the commits after the base into DIR (where
scripts/host/patches.sh builds the module after each of them).  Every
directive of the ULP's splice files belongs to exactly one patch, and the
files after the last patch are compared byte for byte with what splice.py
makes of all of them at once (the sources the modules are built from);
then the series is applied with git am to a fresh copy of the base and the
result compared again.  Any difference fails.

New files: every other file of the directory (not a splice file, not
series, not a directory: provider/rxe/rxe_pi.c and rxe_pi.h) is added by
the series to the directory of the splice files' upstream files (there
must be one).  A new C file's object is built into the module: the
upstream Makefile of that directory gains it at the end of its one
composite object list (MODULE-y := a.o b.o, backslash-continued lines
included), a change made here, in the same patch that adds the file.
A piece "Kconfig: select SYMBOL" adds "select SYMBOL" to the one config
entry of that directory's Kconfig, after its last select line (for a
new file that calls into a library the driver did not need before).

ulp/ULP/series (our text, no kernel text): patches separated by a line
"%%"; each is a "Subject: " line, a blank line, the body, and a line
"Pieces:" followed by the directives the patch applies, one a line, as
"FILE: DIRECTIVE" (FILE the upstream file's basename, DIRECTIVE the words
of the splice directive, e.g. "rdma.c: replace nvme_rdma_unmap_data").
A new file's piece is "FILE: new-file".
Lines starting with # are comments.  The author and Signed-off-by are
"mrkit developers <mrkit@localhost>"; the dates are fixed, so the same
inputs give the same series.

  patches.py --tree TREE --loc ulp/ULP

prints instead, per patch of the series, the code lines (neither blank nor
comment-only: splice.py's code_lines()) of the upstream regions its
directives replace or delete and the code lines they put in, then the
totals (the ULP's SPLICE-LOC figures):

  loc: ULP N/M SUBJECT: upstream=U mrkit=K
  loc: ULP total: upstream=U mrkit=K

Documentation/mrkit.rst's porting guide is generated from loc_rows()
(scripts/host/doc-check.py checks it).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import splice

IDENT = "mrkit developers <mrkit@localhost>"
DATE = "2024-01-01T00:00:00+00:00"


class SeriesError(Exception):
    """A refusal: printed and the run fails."""


def read_series(path):
    """[(subject, body, [(file, directive)])] of ulp/ULP/series."""
    with open(path, encoding="utf-8") as f:
        text = "".join(line for line in f if not line.startswith("#"))
    out = []
    for n, block in enumerate(text.split("\n%%\n"), 1):
        lines = block.strip("\n").split("\n")
        if not lines[0].startswith("Subject: ") or len(lines) < 3 or lines[1]:
            raise SeriesError(f"{path}: patch {n}: a Subject line, then a blank line")
        if "Pieces:" not in lines:
            raise SeriesError(f"{path}: patch {n}: no Pieces: line")
        k = lines.index("Pieces:")
        body = "\n".join(lines[2:k]).strip("\n")
        pieces = []
        for p in lines[k + 1:]:
            if not p.strip():
                continue
            f, sep, d = p.strip().partition(": ")
            if not sep:
                raise SeriesError(f"{path}: patch {n}: piece {p.strip()!r} is not FILE: DIRECTIVE")
            pieces.append((f, " ".join(d.split())))
        out.append((lines[0][len("Subject: "):], body, pieces))
    return out


def git(repo, *args, **kw):
    env = dict(os.environ, GIT_AUTHOR_NAME="mrkit developers", GIT_AUTHOR_EMAIL="mrkit@localhost",
               GIT_COMMITTER_NAME="mrkit developers", GIT_COMMITTER_EMAIL="mrkit@localhost",
               GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE, GIT_CONFIG_NOSYSTEM="1",
               HOME=repo)
    return subprocess.run(["git", "-C", repo] + list(args), check=True, env=env,
                          capture_output=True, text=True, **kw).stdout


class NewFiles:
    """The files a series adds: {basename: (path in the tree, text)}, and
    the upstream Makefile of their directory (path in the tree)."""

    def __init__(self, tree, ulpdir, targets, whole):
        self.files = {}
        self.makefile = None
        self.kconfig = None
        names = sorted(n for n in os.listdir(ulpdir)
                       if os.path.isfile(os.path.join(ulpdir, n))
                       and not n.endswith(".splice") and n != "series")
        if not names:
            return
        dirs = {os.path.dirname(os.path.relpath(up, tree)) for up in list(targets) + list(whole)}
        if len(dirs) != 1:
            raise SeriesError(f"new files {', '.join(names)}: the splice files' upstream files "
                              f"are in {len(dirs)} directories, not one")
        d = dirs.pop()
        for n in names:
            if os.path.exists(os.path.join(tree, d, n)):
                raise SeriesError(f"new file {n}: {d}/{n} is upstream already")
            with open(os.path.join(ulpdir, n), encoding="utf-8") as f:
                self.files[n] = (os.path.join(d, n), f.read())
        self.makefile = os.path.join(d, "Makefile")
        self.kconfig = os.path.join(d, "Kconfig")

    def objects(self, chosen):
        """The objects of the new C files in chosen."""
        return [n[:-2] + ".o" for n in self.files
                if n.endswith(".c") and ("new-file", n) in chosen]


def add_objects(text, objs, where):
    """The Makefile text with objs at the end of its composite object list."""
    lines = text.split("\n")
    heads = [i for i, line in enumerate(lines)
             if re.match(r"^[A-Za-z0-9_]+-(y|objs)\s*:?=", line)]
    if len(heads) != 1:
        raise SeriesError(f"{where}: {len(heads)} composite object lists, not one")
    i = heads[0]
    while lines[i].endswith("\\"):
        i += 1
    if i > heads[0]:
        indent = re.match(r"^\s*", lines[i]).group(0) or "\t"
        lines[i:i + 1] = [lines[i] + " \\"] + [f"{indent}{o} \\" for o in objs[:-1]] + \
            [f"{indent}{objs[-1]}"]
    else:
        lines[i] += "".join(" " + o for o in objs)
    return "\n".join(lines)


def add_selects(text, syms, where):
    """The Kconfig text with "select SYM" for each of syms in its one config
    entry, after the entry's last select line."""
    lines = text.split("\n")
    heads = [i for i, line in enumerate(lines) if re.match(r"^(menu)?config\s", line)]
    if len(heads) != 1:
        raise SeriesError(f"{where}: {len(heads)} config entries, not one")
    sel = [i for i, line in enumerate(lines)
           if i > heads[0] and re.match(r"^\s+select\s", line)]
    if not sel:
        raise SeriesError(f"{where}: no select line in its config entry")
    for sym in syms:
        if any(re.match(rf"^\s+select\s+{sym}\b", line) for line in lines):
            raise SeriesError(f"{where}: selects {sym} already")
    i = sel[-1]
    indent = re.match(r"^\s*", lines[i]).group(0)
    lines[i + 1:i + 1] = [f"{indent}select {sym}" for sym in syms]
    return "\n".join(lines)


def state(tree, targets, whole, chosen, new=None):
    """{path in tree: text} with the directives in chosen applied."""
    files = {}
    for up, items in targets.items():
        with open(up, encoding="utf-8") as f:
            src = splice.Source(up, f.read())
        mine = [it for it in items if it[2] in chosen]
        files[os.path.relpath(up, tree)] = \
            splice.render(src, splice.plan(src, mine))[0] if mine else src.text
    for up, (body, where) in whole.items():
        with open(up, encoding="utf-8") as f:
            files[os.path.relpath(up, tree)] = body if where in chosen else f.read()
    if new and new.files:
        for n, (rel, text) in new.files.items():
            if ("new-file", n) in chosen:
                files[rel] = text
        with open(os.path.join(tree, new.makefile), encoding="utf-8") as f:
            text = f.read()
        objs = new.objects(chosen)
        files[new.makefile] = add_objects(text, objs, new.makefile) if objs else text
        with open(os.path.join(tree, new.kconfig), encoding="utf-8") as f:
            text = f.read()
        syms = sorted(c[1] for c in chosen if c[0] == "kconfig-select")
        files[new.kconfig] = add_selects(text, syms, new.kconfig) if syms else text
    return files


def write(repo, files):
    for rel, text in files.items():
        p = os.path.join(repo, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)


def compare(repo, files, what):
    for rel, text in files.items():
        with open(os.path.join(repo, rel), encoding="utf-8") as f:
            if f.read() != text:
                raise SeriesError(f"{rel}: {what} differs from splice.py's output")


def load(tree, ulpdir):
    """(targets, whole, series, key, new) of a ULP, every directive in one patch.

    targets and whole are splice.collect()'s; series read_series()'s; key
    maps each directive's ("FILE", "DIRECTIVE") to its place in a splice
    file (splice.py's "where"), or a new file's ("FILE", "new-file") to
    ("new-file", FILE); new the NewFiles.
    """
    targets, whole = splice.collect(sorted(glob.glob(os.path.join(ulpdir, "*.splice"))), tree)
    series = read_series(os.path.join(ulpdir, "series"))
    key = {}
    for up, items in targets.items():
        for words, _, where in items:
            key[(os.path.basename(up), " ".join(words))] = where
    for up, (_, where) in whole.items():
        key[(os.path.basename(up), "whole-file " + os.path.relpath(up, tree))] = where
    new = NewFiles(tree, ulpdir, targets, whole)
    for n in new.files:
        key[(n, "new-file")] = ("new-file", n)
    seen = {}
    for n, (subject, _, pieces) in enumerate(series, 1):
        for p in pieces:
            sel = re.fullmatch(r"select ([A-Z0-9_]+)", p[1])
            if p[0] == "Kconfig" and sel and new.files:
                key[p] = ("kconfig-select", sel.group(1))
            if p not in key:
                raise SeriesError(f"patch {n} ({subject}): no directive {p[0]}: {p[1]}")
            if p in seen:
                raise SeriesError(f"{p[0]}: {p[1]}: in patches {seen[p]} and {n}")
            seen[p] = n
    left = sorted(set(key) - set(seen))
    if left:
        raise SeriesError("directives in no patch: " +
                          "; ".join(f"{f}: {d}" for f, d in left))
    return targets, whole, series, key, new


def loc_rows(tree, ulpdir):
    """[(subject, upstream, mrkit)] per patch of a ULP's series: the code
    lines of the upstream regions its directives replace or delete, and
    those of the code they put in (splice.code_lines()); a new file's
    code lines are put in."""
    targets, whole, series, key, added = load(tree, ulpdir)
    count = {}
    for up, items in targets.items():
        with open(up, encoding="utf-8") as f:
            src = splice.Source(up, f.read())
        for item in items:
            (s, e, new, _), = splice.plan(src, [item])
            count[item[2]] = (splice.code_lines(src.text[s:e]), splice.code_lines(new))
    for up, (body, where) in whole.items():
        with open(up, encoding="utf-8") as f:
            count[where] = (splice.code_lines(f.read()), splice.code_lines(body))
    for n, (_, text) in added.files.items():
        count[("new-file", n)] = (0, splice.code_lines(text))
    # A Kconfig select is no code line of the driver.
    return [(subject, sum(count.get(key[p], (0, 0))[0] for p in pieces),
             sum(count.get(key[p], (0, 0))[1] for p in pieces)) for subject, _, pieces in series]


def print_loc(tree, ulpdir, name):
    rows = loc_rows(tree, ulpdir)
    for n, (subject, up, ours) in enumerate(rows, 1):
        print(f"loc: {name} {n}/{len(rows)} {subject}: upstream={up} mrkit={ours}")
    print(f"loc: {name} total: upstream={sum(r[1] for r in rows)} "
          f"mrkit={sum(r[2] for r in rows)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", required=True)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out")
    mode.add_argument("--loc", action="store_true",
                      help="print the code lines each patch removes and adds")
    ap.add_argument("ulpdir")
    a = ap.parse_args()
    name = os.path.basename(os.path.normpath(a.ulpdir))
    if a.loc:
        try:
            print_loc(a.tree, a.ulpdir, name)
        except (SeriesError, splice.SpliceError, OSError) as e:
            print(f"patches: {name}: FAILED: {e}", file=sys.stderr)
            return 1
        return 0
    tmp = tempfile.mkdtemp(prefix=f"mrkit-patches-{name}.")
    try:
        targets, whole, series, key, new = load(a.tree, a.ulpdir)

        repo = os.path.join(tmp, "work")
        os.makedirs(repo)
        git(repo, "init", "-q")
        write(repo, state(a.tree, targets, whole, set(), new))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"{name}: upstream files of linux-source-6.1")
        base = git(repo, "rev-parse", "HEAD").strip()
        chosen = set()
        for subject, body, pieces in series:
            chosen |= {key[p] for p in pieces}
            write(repo, state(a.tree, targets, whole, chosen, new))
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-F", "-",
                input=f"{subject}\n\n{body}\n\nSigned-off-by: {IDENT}\n")
        final = state(a.tree, targets, whole, chosen, new)
        compare(repo, final, "the last patch's file")

        shutil.rmtree(a.out, ignore_errors=True)
        os.makedirs(a.out)
        out = git(repo, "format-patch", "-q", "--no-signature", "--zero-commit",
                  "-o", os.path.abspath(a.out), f"{base}..HEAD")
        del out
        # The series applies to the upstream files and gives the same sources.
        check = os.path.join(tmp, "am")
        git(repo, "worktree", "add", "-q", "--detach", check, base)
        patches = sorted(glob.glob(os.path.join(os.path.abspath(a.out), "*.patch")))
        git(check, "am", "-q", *patches)
        compare(check, final, "the series applied with git am")
        for p in patches:
            print(f"patches: {p}")
        print(f"patches: {name}: {len(patches)} patch{'es' if len(patches) > 1 else ''}; "
              f"applied to linux-source-6.1's files "
              f"they give splice.py's output{' and the new files' if new.files else ''} "
              f"byte for byte ({len(final)} file{'s' if len(final) > 1 else ''})")
    except (SeriesError, splice.SpliceError, OSError) as e:
        print(f"patches: {name}: FAILED: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"patches: {name}: FAILED: {' '.join(e.cmd)}: {e.stderr}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
