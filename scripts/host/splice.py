#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Apply our replacement code to an upstream kernel source file at build time.

The repository carries no kernel source text: an upstream file (copied out
of the unpacked linux-source-6.1 tree, or another kernel's: see "Other
kernels" below) and one or more "splice" files of ours go in; the
converted file comes out.  A splice file is C whose directives are
comments on a line of their own; each directive owns the
lines after it, up to the next directive:

  /* mrkit-splice: file drivers/nvme/host/rdma.c */   target, for --tree
  /* mrkit-splice: whole-file drivers/x/y.c */        the block IS the file
  /* mrkit-splice: replace FUNC */                    new definition of FUNC
  /* mrkit-splice: delete FUNC */                     (empty block)
  /* mrkit-splice: replace-decl FUNC */               a prototype of FUNC
  /* mrkit-splice: delete-decl FUNC */
  /* mrkit-splice: insert-before FUNC */              new code before FUNC
  /* mrkit-splice: insert-after FUNC */               new code after FUNC
  /* mrkit-splice: rename FUNC NEW */                 the definition of FUNC
                                                     is named NEW (a wrapper
                                                     of ours takes FUNC's name;
                                                     parameter lines aligned
                                                     with its parenthesis stay
                                                     aligned)
  /* mrkit-splice: add-after-includes */              after the last #include
  /* mrkit-splice: member STRUCT after MEMBER */      new member lines
  /* mrkit-splice: replace-member STRUCT MEMBER */
  /* mrkit-splice: delete-member STRUCT MEMBER */
  /* mrkit-splice: delete-struct STRUCT */            a struct definition
  /* mrkit-splice: replace-define MACRO */            a #define (all its lines)
  /* mrkit-splice: replace-comment WORDS... */         a top-level comment whose
  /* mrkit-splice: delete-comment WORDS... */          text starts with WORDS
  /* mrkit-splice: keep DIRECTIVE... */               override files only
                                                     (see "Other kernels")

Functions, prototypes and structs are found by a C-aware scan (comments,
strings and preprocessor lines masked, braces and parentheses matched),
never by line numbers; a name that is missing or found twice is refused.
A comment attached to a replaced or deleted definition (no blank line
between) goes with it.  One line per change is printed, then the proof:
the upstream text with the touched regions cut out and the output (read
back from disk) with the inserted regions cut out must be byte-identical;
both sha256 are printed, and any difference fails the run.

Naming: the splice file of an upstream file F is ulp/ULP/F.splice, F's
basename and ".splice" (ulp/nvme/rdma.c.splice for drivers/nvme/host/rdma.c,
ulp/nfs/frwr_ops.c.splice for net/sunrpc/xprtrdma/frwr_ops.c): one upstream
file per splice file, named by its first directive (file or whole-file);
the tool refuses any other.  ulp/ULP/series groups a ULP's directives into
the patches of make patches (scripts/host/patches.py).

Other kernels: the splice files are written against linux-source-6.1,
the reference.  For another kernel series K (6.12), --kernel K with
--reference TREE61 builds from K's tree with the same directives, except
where an override file of ours, ulp/ULP/K/F.splice (the splice file's
directory, then K, then its basename), says otherwise.  Its first
directive is the same `file`; each other directive either
  - has the words of one directive of the base file: its block is K's
    replacement for that block (e.g. a small function whose body reads a
    field K's kernel moved), or
  - is new (not in the base file): it applies on K only, or
  - is /* mrkit-splice: keep WORDS... */ with WORDS those of a base
    directive, and a comment (no code) as its block: the upstream region
    differs on K, and the base block stands - the comment says why.
Every directive's upstream region (what it replaces or deletes, or the
function or member it anchors on; the last #include line for
add-after-includes) is compared between the reference tree and K's: one
that differs must be overridden or kept, else the run is refused, and a
`keep` whose region is the same is refused too.  A line per file names
the regions that differ, and each change line says which case it is:
[K: upstream differs, K's block], [K: upstream differs, kept], [K's
block] or [K only].  So that an override stays small, a base file puts
what a kernel changed under it into small functions of their own
directive, and K's file replaces only those.  Without --kernel nothing
changes.

Usage:
  splice.py --tree TREE --outdir DIR SPLICE...   targets named by `file`
  splice.py --upstream FILE --out FILE SPLICE... one target, no `file`
  splice.py --tree TREE --kernel K --reference TREE61 --outdir DIR SPLICE...
  add --loc to print "SPLICE-LOC <file> upstream=N ours=M" (code lines:
  neither blank nor comment-only) for the touched and inserted regions.
"""
import argparse
import hashlib
import os
import re
import sys

DIRECTIVE = re.compile(r"^\s*/\*\s*mrkit-splice:\s*(.*?)\s*\*/\s*$")
IDENT = re.compile(r"[A-Za-z_]\w*")


class SpliceError(Exception):
    """A refusal: printed and the run fails."""


def mask(text):
    """Blank out comments, string/char literals and preprocessor lines.

    Returns a string of the same length in which only code remains, with
    newlines kept, so that positions map 1:1 onto the original text.  The
    second result lists (start, end) of comments, the third the
    preprocessor lines (start, end).
    """
    out = list(text)
    comments, pplines = [], []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                    continue
                j += 1
            pplines.append((text.rfind("\n", 0, i) + 1, j))
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        line_start = False
        if c == "\n":
            line_start = True
            i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            comments.append((i, j))
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((i, j))
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out), comments, pplines


def match_close(m, pos, open_c, close_c):
    """Position of the bracket closing the one at pos in masked text m."""
    depth = 0
    for k in range(pos, len(m)):
        if m[k] == open_c:
            depth += 1
        elif m[k] == close_c:
            depth -= 1
            if depth == 0:
                return k
    raise SpliceError(f"unbalanced {open_c}{close_c} from offset {pos}")


class Source:
    """An upstream file and the top-level structure of its code."""

    def __init__(self, path, text):
        self.path = path
        self.text = text
        self.m, self.comments, self.pplines = mask(text)
        self.depth0 = self._depth0()

    def _depth0(self):
        """Flags: position i lies outside every brace and parenthesis."""
        flags = bytearray(len(self.m))
        d = 0
        for i, c in enumerate(self.m):
            if c in "{(":
                flags[i] = d == 0
                d += 1
            elif c in "})":
                d -= 1
                flags[i] = d == 0
            else:
                flags[i] = d == 0
        return flags

    def line_of(self, pos):
        return self.text.count("\n", 0, pos) + 1

    def line_start(self, pos):
        return self.text.rfind("\n", 0, pos) + 1

    def line_end(self, pos):
        """Just past the newline of the line holding pos."""
        k = self.text.find("\n", pos)
        return len(self.text) if k < 0 else k + 1

    def item_start(self, pos):
        """Start of the top-level item whose name is at pos."""
        k = pos - 1
        while k >= 0:
            if self.depth0[k] and self.m[k] in ";}":
                break
            k -= 1
        k += 1
        while k < pos and self.m[k].isspace():
            k += 1
        return self.line_start(k)

    def with_comment(self, start):
        """Extend start over a comment attached to the item (no blank line)."""
        for cs, ce in self.comments:
            gap = self.text[ce:start]
            if ce <= start and gap.strip() == "" and gap.count("\n") <= 1:
                ls = self.line_start(cs)
                if self.text[ls:cs].strip() == "":
                    return ls
        return start

    def functions(self, name):
        """[(kind, start, end)] of top-level definitions/declarations."""
        found = []
        for mo in re.finditer(r"\b%s\b" % re.escape(name), self.m):
            p = mo.start()
            if not self.depth0[p]:
                continue
            q = mo.end()
            while q < len(self.m) and self.m[q].isspace():
                q += 1
            if q >= len(self.m) or self.m[q] != "(":
                continue
            # Skip a use inside an initializer or a call: the name must
            # follow a type, '*' or a storage word.
            before = self.m[:p].rstrip()
            if before and before[-1] in "=,(":
                continue
            r = match_close(self.m, q, "(", ")") + 1
            while True:
                while r < len(self.m) and self.m[r].isspace():
                    r += 1
                im = IDENT.match(self.m, r)
                if not im:
                    break
                r = im.end()
                while r < len(self.m) and self.m[r].isspace():
                    r += 1
                if r < len(self.m) and self.m[r] == "(":
                    r = match_close(self.m, r, "(", ")") + 1
            if r >= len(self.m):
                continue
            start = self.item_start(p)
            if self.m[r] == "{":
                end = match_close(self.m, r, "{", "}") + 1
                found.append(("def", start, self.line_end(end - 1)))
            elif self.m[r] == ";":
                found.append(("decl", start, self.line_end(r)))
        return found

    def one(self, name, kind):
        hits = [(s, e) for k, s, e in self.functions(name) if k == kind]
        what = "definition" if kind == "def" else "prototype"
        if not hits:
            raise SpliceError(f"{self.path}: no {what} of {name}()")
        if len(hits) > 1:
            lines = ", ".join(str(self.line_of(s)) for s, _ in hits)
            raise SpliceError(f"{self.path}: {name}(): {len(hits)} {what}s (lines {lines}): ambiguous")
        return hits[0]

    def name_at(self, name, start, end):
        """Position of the name in the head of the definition start..end."""
        for mo in re.finditer(r"\b%s\b" % re.escape(name), self.m[start:end]):
            p = start + mo.start()
            if self.depth0[p]:
                return p
        raise SpliceError(f"{self.path}: {name}(): no name in its definition")

    def struct_body(self, name):
        hits = [mo for mo in re.finditer(r"\bstruct\s+%s\s*\{" % re.escape(name), self.m)
                if self.depth0[mo.start()]]
        if len(hits) != 1:
            raise SpliceError(f"{self.path}: struct {name}: {len(hits)} definitions")
        ob = hits[0].end() - 1
        return ob + 1, match_close(self.m, ob, "{", "}")

    def struct_def(self, name):
        """(start, end) of the lines of the definition of struct name."""
        ob, cb = self.struct_body(name)
        semi = cb + 1
        while semi < len(self.m) and self.m[semi].isspace():
            semi += 1
        if semi >= len(self.m) or self.m[semi] != ";":
            raise SpliceError(f"{self.path}: struct {name}: not a plain definition")
        return self.item_start(ob - 1), self.line_end(semi)

    def member(self, sname, member):
        """(start, end) of the line(s) declaring member in struct sname."""
        lo, hi = self.struct_body(sname)
        hits, k, stmt = [], lo, lo
        depth = 0
        while k < hi:
            c = self.m[k]
            if c in "{(":
                depth += 1
            elif c in "})":
                depth -= 1
            elif c == ";" and depth == 0:
                decl = self.m[stmt:k]
                fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
                if fp:
                    got = fp.group(1)
                else:
                    bare = re.sub(r"\[[^\]]*\]", "", decl)
                    bare = re.sub(r":\s*\w+\s*$", "", bare)
                    ids = IDENT.findall(bare)
                    got = ids[-1] if ids else None
                if got == member:
                    first = stmt
                    while self.m[first].isspace():
                        first += 1
                    hits.append((self.line_start(first), self.line_end(k)))
                stmt = k + 1
            k += 1
        if len(hits) != 1:
            raise SpliceError(f"{self.path}: struct {sname} member {member}: {len(hits)} found")
        return hits[0]

    def define(self, macro):
        hits = [(s, e) for s, e in self.pplines
                if re.match(r"\s*#\s*define\s+%s\b" % re.escape(macro), self.text[s:e])]
        if len(hits) != 1:
            raise SpliceError(f"{self.path}: #define {macro}: {len(hits)} found")
        s, e = hits[0]
        return s, self.line_end(e - 1) if e > s else e

    def comment(self, words):
        """(start, end) of the one top-level comment starting with words."""
        want = " ".join(words)
        hits = []
        for cs, ce in self.comments:
            if not self.depth0[cs]:
                continue
            body = " ".join(self.text[cs:ce].lstrip("/*").replace("*", " ").split())
            if body.startswith(want):
                s = self.line_start(cs)
                if self.text[s:cs].strip() == "":
                    hits.append((s, self.line_end(ce - 1)))
        if len(hits) != 1:
            raise SpliceError(f"{self.path}: comment '{want}...': {len(hits)} found")
        return hits[0]

    def after_includes(self):
        incs = [e for s, e in self.pplines
                if re.match(r"#\s*include\b", self.text[s:e]) and self.depth0[s]]
        if not incs:
            raise SpliceError(f"{self.path}: no #include")
        return self.line_end(incs[-1] - 1)


def parse_splice(path):
    """[(directive words, block text, line)] of one splice file."""
    items, cur = [], None
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            mo = DIRECTIVE.match(line)
            if mo:
                cur = [mo.group(1).split(), [], f"{path}:{no}"]
                items.append(cur)
            elif cur is not None:
                cur[1].append(line)
    out = []
    for words, lines, where in items:
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        out.append((words, "".join(lines), where))
    return out


def code_lines(text):
    """Lines that are neither blank nor comment-only."""
    m, _, _ = mask(text)
    n = 0
    for masked, orig in zip(m.split("\n"), text.split("\n")):
        if masked.strip() or orig.lstrip().startswith("#"):
            n += 1
    return n


def plan(src, items, notes=None):
    """Turn directives into edits: (start, end, new text, description).

    notes: {where: text} appended to a directive's description."""
    edits = []
    for words, block, where in items:
        verb, args = words[0], words[1:]
        body = block

        def need(k):
            if len(args) != k:
                raise SpliceError(f"{where}: {verb} takes {k} argument(s)")

        def empty():
            if block:
                raise SpliceError(f"{where}: {verb} takes no code")

        if verb in ("replace", "delete"):
            need(1)
            s, e = src.one(args[0], "def")
            s = src.with_comment(s)
            if verb == "delete":
                empty()
                if src.text[s - 2:s] == "\n\n" and src.text[e:e + 1] == "\n":
                    e += 1
            else:
                got = Source(where, body).functions(args[0])
                if [k for k, _, _ in got] != ["def"]:
                    raise SpliceError(f"{where}: the block does not define {args[0]}() once")
            edits.append((s, e, body, f"{verb} {args[0]}()"))
        elif verb in ("replace-decl", "delete-decl"):
            need(1)
            s, e = src.one(args[0], "decl")
            if verb == "delete-decl":
                empty()
            edits.append((s, e, body, f"{verb} {args[0]}()"))
        elif verb == "rename":
            need(2)
            empty()
            if not IDENT.fullmatch(args[1]):
                raise SpliceError(f"{where}: rename FUNC NEW: {args[1]} is no C name")
            s, e = src.one(args[0], "def")
            p = src.name_at(args[0], s, e)
            q, new = renamed(src, p, args[0], args[1])
            edits.append((p, q, new, f"rename {args[0]}() to {args[1]}()"))
        elif verb in ("insert-before", "insert-after"):
            need(1)
            s, e = src.one(args[0], "def")
            if verb == "insert-before":
                s = src.with_comment(s)
                edits.append((s, s, body + "\n", f"{verb} {args[0]}()"))
            else:
                edits.append((e, e, "\n" + body, f"{verb} {args[0]}()"))
        elif verb == "add-after-includes":
            need(0)
            p = src.after_includes()
            edits.append((p, p, body, "add after the last #include"))
        elif verb == "member":
            if len(args) != 3 or args[1] != "after":
                raise SpliceError(f"{where}: member STRUCT after MEMBER")
            _, e = src.member(args[0], args[2])
            edits.append((e, e, body, f"member(s) of struct {args[0]} after {args[2]}"))
        elif verb in ("replace-member", "delete-member"):
            need(2)
            s, e = src.member(args[0], args[1])
            if verb == "delete-member":
                empty()
            edits.append((s, e, body, f"{verb} struct {args[0]}.{args[1]}"))
        elif verb == "delete-struct":
            need(1)
            empty()
            s, e = src.struct_def(args[0])
            s = src.with_comment(s)
            if src.text[s - 2:s] == "\n\n" and src.text[e:e + 1] == "\n":
                e += 1
            edits.append((s, e, body, f"delete struct {args[0]}"))
        elif verb in ("replace-comment", "delete-comment"):
            if not args:
                raise SpliceError(f"{where}: {verb} WORDS...")
            s, e = src.comment(args)
            if verb == "delete-comment":
                empty()
                if src.text[s - 2:s] == "\n\n" and src.text[e:e + 1] == "\n":
                    e += 1
            edits.append((s, e, body, f"{verb} '{' '.join(args)}...'"))
        elif verb == "replace-define":
            need(1)
            s, e = src.define(args[0])
            edits.append((s, e, body, f"replace #define {args[0]}"))
        else:
            raise SpliceError(f"{where}: unknown directive {verb}")
        if notes and where in notes:
            s_, e_, n_, d_ = edits[-1]
            edits[-1] = (s_, e_, n_, f"{d_} [{notes[where]}]")
    edits.sort(key=lambda x: (x[0], x[1]))
    for a, b in zip(edits, edits[1:]):
        if b[0] < a[1]:
            raise SpliceError(f"{src.path}: '{a[3]}' and '{b[3]}' overlap")
    return edits


def column(line):
    """The display column after line (tabs to multiples of 8)."""
    c = 0
    for ch in line:
        c = (c // 8 + 1) * 8 if ch == "\t" else c + 1
    return c


def renamed(src, p, old, new):
    """(end, text): the definition's name at p renamed, and the lines of
    its parameter list that were aligned with the open parenthesis
    aligned with it again (tabs, then spaces)."""
    op = src.m.index("(", p + len(old))
    cp = match_close(src.m, op, "(", ")")
    head = src.text[p:cp]
    ls = src.line_start(p)
    was = column(src.text[ls:op]) + 1
    now = was + len(new) - len(old)
    lines = (new + head[len(old):]).split("\n")
    for i in range(1, len(lines)):
        ind = re.match(r"^[ \t]*", lines[i]).group(0)
        if lines[i] != ind and column(ind) == was:
            lines[i] = "\t" * (now // 8) + " " * (now % 8) + lines[i][len(ind):]
    return cp, "\n".join(lines)


def render(src, edits):
    """(output text, [(start, end)] of the inserted regions in it)."""
    text = src.text
    pieces, inserted, pos, opos = [], [], 0, 0
    for s, e, new, _ in edits:
        pieces.append(text[pos:s])
        opos += s - pos
        pieces.append(new)
        inserted.append((opos, opos + len(new)))
        opos += len(new)
        pos = e
    pieces.append(text[pos:])
    return "".join(pieces), inserted


def apply(src, edits, out_path, loc):
    text = src.text
    for s, e, new, desc in edits:
        ul = text[s:e].count("\n")
        rng = f"upstream lines {src.line_of(s)}-{src.line_of(s) + ul - 1} ({ul} lines)" if ul \
            else f"at upstream line {src.line_of(s)}"
        code = f" [code lines {code_lines(text[s:e])} -> {code_lines(new)}]" if loc else ""
        to = "" if "\n" not in text[s:e] + new and new else f" -> {new.count(chr(10))} lines"
        print(f"splice: {os.path.basename(out_path)}: {desc}: {rng}{to}{code}")
    out, inserted = render(src, edits)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(out)
    with open(out_path, encoding="utf-8") as f:
        back = f.read()
    kept_up, last = [], 0
    for s, e, _, _ in edits:
        kept_up.append(text[last:s])
        last = e
    kept_up.append(text[last:])
    kept_out, last = [], 0
    for s, e in inserted:
        kept_out.append(back[last:s])
        last = e
    kept_out.append(back[last:])
    a = "".join(kept_up).encode()
    b = "".join(kept_out).encode()
    ha, hb = hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest()
    name = os.path.basename(out_path)
    print(f"splice: {name}: upstream minus touched regions sha256 {ha}")
    print(f"splice: {name}: output minus inserted regions  sha256 {hb}")
    if a != b:
        raise SpliceError(f"{name}: the untouched text differs")
    kept = a.count(b"\n")
    print(f"splice: {name}: identical outside the {len(edits)} changes "
          f"({kept} of {text.count(chr(10))} upstream lines untouched)")
    if loc:
        up = sum(code_lines(text[s:e]) for s, e, _, _ in edits)
        ours = sum(code_lines(n) for _, _, n, _ in edits)
        print(f"SPLICE-LOC {name} upstream={up} ours={ours}")


def collect(paths, tree=None, upstream=None):
    """Read splice files: ({upstream path: [(words, block, where)]},
    {upstream path: (body, where)} of whole-file replacements).

    With a tree, each splice file NAME.splice names one upstream file whose
    basename is NAME (the naming rule) in its first directive."""
    targets, whole = {}, {}
    for sp in paths:
        cur = upstream
        items = parse_splice(sp)
        if tree and (not items or items[0][0][0] not in ("file", "whole-file")):
            raise SpliceError(f"{sp}: the first directive must be file or whole-file")
        for words, block, where in items:
            if words[0] in ("file", "whole-file"):
                if upstream or len(words) != 2:
                    raise SpliceError(f"{where}: {words[0]} PATH (only with --tree)")
                if os.path.basename(sp) != os.path.basename(words[1]) + ".splice":
                    raise SpliceError(f"{where}: {words[1]} belongs in "
                                      f"{os.path.basename(words[1])}.splice (one upstream "
                                      f"file per splice file, named after it)")
                cur = os.path.join(tree, words[1])
                if words[0] == "whole-file":
                    whole[cur] = (block, where)
                    cur = None
                continue
            if cur is None:
                raise SpliceError(f"{where}: no target file yet")
            targets.setdefault(cur, []).append((words, block, where))
    for up, (_, where) in whole.items():
        if up in targets:
            raise SpliceError(f"{where}: {up} is replaced whole and spliced too")
    return targets, whole


def region(src, words):
    """The upstream text a directive replaces, deletes or anchors on."""
    verb, args = words[0], words[1:]
    if verb in ("replace", "delete", "rename", "insert-before", "insert-after"):
        s, e = src.one(args[0], "def")
        s = src.with_comment(s)
    elif verb in ("replace-decl", "delete-decl"):
        s, e = src.one(args[0], "decl")
    elif verb == "member":
        s, e = src.member(args[0], args[-1])
    elif verb in ("replace-member", "delete-member"):
        s, e = src.member(args[0], args[1])
    elif verb == "delete-struct":
        s, e = src.struct_def(args[0])
        s = src.with_comment(s)
    elif verb in ("replace-comment", "delete-comment"):
        s, e = src.comment(args)
    elif verb == "replace-define":
        s, e = src.define(args[0])
    elif verb == "add-after-includes":
        e = src.after_includes()
        s = src.line_start(e - 1)
    else:
        raise SpliceError(f"{src.path}: {verb}: no upstream region")
    return src.text[s:e]


def overlay(items, over, kernel):
    """Apply an override file's directives (the kernel's) to a target's
    items: (items, {where: note}, set of the wheres that came from the
    override)."""
    index = {}
    for i, (words, _, where) in enumerate(items):
        index.setdefault(" ".join(words), []).append(i)
    out, kept, mine, notes = list(items), [], set(), {}

    def base(words, where):
        hits = index.get(" ".join(words), [])
        if len(hits) > 1:
            raise SpliceError(f"{where}: {' '.join(words)}: {len(hits)} base directives")
        return hits[0] if hits else None

    for words, block, where in over:
        if words[0] == "keep":
            i = base(words[1:], where)
            if i is None:
                raise SpliceError(f"{where}: keep {' '.join(words[1:])}: no such base directive")
            if code_lines(block) or not block.strip():
                raise SpliceError(f"{where}: keep takes a comment (why the base block "
                                  f"stands), no code")
            kept.append((words[1:], items[i][2]))
            continue
        i = base(words, where)
        mine.add(where)
        if i is None:
            out.append((words, block, where))
            notes[where] = f"{kernel} only"
        else:
            out[i] = (words, block, where)
            notes[where] = f"{kernel}'s block"
    for words, bwhere in kept:
        if any(w == bwhere for _, _, w in out if w in mine):
            raise SpliceError(f"{bwhere}: both kept and overridden for {kernel}")
        notes[bwhere] = f"{kernel}: upstream differs, kept"
    return out, notes, mine


def against_reference(src, ref, items, notes, mine, kernel):
    """Compare each directive's upstream region with the reference tree's;
    refuse a differing one that is neither overridden nor kept, and a keep
    of one that does not differ.  Prints one line naming the differences."""
    differ, total = [], 0
    for words, _, where in items:
        if notes.get(where) == f"{kernel} only":
            continue
        total += 1
        mine_now = region(src, words)
        try:
            theirs = region(ref, words)
        except SpliceError:
            theirs = None
        kept = notes.get(where, "").endswith("kept")
        if mine_now == theirs:
            if kept:
                raise SpliceError(f"{where}: keep {' '.join(words)}: the upstream "
                                  f"region is the same on {kernel}; drop the keep")
            continue
        differ.append(" ".join(words))
        if where in mine:
            notes[where] = f"{kernel}: upstream differs, {kernel}'s block"
        elif not kept:
            raise SpliceError(f"{where}: {' '.join(words)}: the upstream region differs "
                              f"on {kernel} from the reference; give the override file "
                              f"({kernel}/{os.path.basename(where.rsplit(':', 1)[0])}) "
                              f"a block for it, or a keep saying why the base block "
                              f"stands")
    name = os.path.basename(src.path)
    print(f"splice: {name}: {kernel} against the reference: {len(differ)} of {total} "
          f"upstream regions differ" + (": " + "; ".join(differ) if differ else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", help="the unpacked kernel tree (with `file` directives)")
    ap.add_argument("--outdir", help="where converted files go (basename kept)")
    ap.add_argument("--upstream", help="a single upstream file")
    ap.add_argument("--out", help="output for --upstream")
    ap.add_argument("--loc", action="store_true", help="print SPLICE-LOC lines")
    ap.add_argument("--kernel", help="the kernel series of TREE, when not the reference")
    ap.add_argument("--reference", help="the reference tree (linux-source-6.1), with --kernel")
    ap.add_argument("splices", nargs="+")
    a = ap.parse_args()
    try:
        if a.upstream and not a.out:
            raise SpliceError("--upstream needs --out")
        if not a.upstream and not (a.tree and a.outdir):
            raise SpliceError("give --tree and --outdir, or --upstream and --out")
        if bool(a.kernel) != bool(a.reference) or (a.kernel and not a.tree):
            raise SpliceError("--kernel and --reference go together, with --tree")
        targets, whole = collect(a.splices, a.tree, a.upstream)
        extra = {}
        if a.kernel:
            for sp in a.splices:
                ov = os.path.join(os.path.dirname(sp), a.kernel, os.path.basename(sp))
                if not os.path.exists(ov):
                    continue
                over, over_whole = collect([ov], a.tree)
                if not over or over_whole:
                    raise SpliceError(f"{ov}: an override file splices (no whole-file)")
                for up, items in over.items():
                    if up not in targets:
                        raise SpliceError(f"{ov}: {up} is not a target of {sp}")
                    targets[up], notes, mine = overlay(targets[up], items, a.kernel)
                    extra[up] = (notes, mine)
        for up, (body, where) in whole.items():
            with open(up, encoding="utf-8") as f:
                old = f.read()
            if a.kernel:
                with open(os.path.join(a.reference, os.path.relpath(up, a.tree)),
                          encoding="utf-8") as f:
                    if f.read() != old:
                        raise SpliceError(f"{where}: the upstream file differs on {a.kernel} "
                                          f"from the reference; a whole-file replacement "
                                          f"has no override")
            outp = os.path.join(a.outdir, os.path.basename(up))
            with open(outp, "w", encoding="utf-8") as f:
                f.write(body)
            print(f"splice: {os.path.basename(up)}: whole file replaced: upstream "
                  f"{old.count(chr(10))} lines (sha256 {hashlib.sha256(old.encode()).hexdigest()[:16]}) "
                  f"-> {body.count(chr(10))} lines of ours")
            if a.loc:
                print(f"SPLICE-LOC {os.path.basename(up)} upstream={code_lines(old)} ours={code_lines(body)}")
        # Every target planned (and checked against the reference) before
        # any is written: a refusal leaves no converted file behind.
        work = []
        for up, items in targets.items():
            with open(up, encoding="utf-8") as f:
                src = Source(up, f.read())
            outp = a.out or os.path.join(a.outdir, os.path.basename(up))
            if os.path.abspath(outp) == os.path.abspath(up):
                raise SpliceError(f"{up}: refusing to write over the upstream file")
            notes = None
            if a.kernel:
                notes, mine = extra.get(up, ({}, set()))
                rel = os.path.relpath(up, a.tree)
                with open(os.path.join(a.reference, rel), encoding="utf-8") as f:
                    ref = Source(rel, f.read())
                against_reference(src, ref, items, notes, mine, a.kernel)
            work.append((src, plan(src, items, notes), outp))
        for src, edits, outp in work:
            apply(src, edits, outp, a.loc)
    except (SpliceError, OSError) as e:
        print(f"splice: REFUSED: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
