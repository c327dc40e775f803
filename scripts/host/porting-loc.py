#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Lines each converted ULP saves, piece by piece, for the porting guide.

For every ULP in ulp/, the upstream functions, prototypes and struct
members that its splice files replace or delete (found in the unpacked
linux-source-6.1 exactly as scripts/ulp/splice.py finds them) are counted
against the code of ours that takes their place, grouped by the
hand-rolled piece they belong to.  A whole-file replacement (NFS/RDMA's
frwr_ops.c) is split into its functions on both sides.  Counts are code
lines: neither blank nor comment-only (splice.py's code_lines()).

Every function a splice file names must have a piece below: a new
directive without one fails the run, so the table cannot fall behind.

Usage:
  porting-loc.py --tree TREE              print the tables (reStructuredText)
  porting-loc.py --tree TREE --check RST  fail if RST's generated blocks
                                          differ from what is printed
  porting-loc.py --tree TREE --update RST rewrite RST's generated blocks
A generated block in RST lies between the comment lines
".. porting-loc ULP begin" and ".. porting-loc ULP end".
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import splice  # noqa: E402

PIECES = [
    ("pool", "Pool setup, sizing, teardown"),
    ("map", "Mapping"),
    ("post", "Posting REG_MR with the SEND"),
    ("reminv", "Remote invalidation"),
    ("localinv", "Local invalidation, completion"),
    ("recovery", "Error and reconnect recovery"),
    ("pi", "T10-PI"),
    ("decl", "Struct members, includes"),
]

ULPS = {
    "nvme": {
        "title": "nvme-rdma",
        "splices": ["ulp/nvme/rdma-mrkit.c"],
        "pieces": {
            "nvme_rdma_create_queue_ib": "pool",
            "nvme_rdma_destroy_queue_ib": "pool",
            "nvme_rdma_get_max_fr_pages": "pool",
            "nvme_rdma_map_sg_fr": "map",
            "nvme_rdma_set_sg_mrkit": "map",
            "nvme_rdma_unmap_data": "map",
            "nvme_rdma_post_send": "post",
            "nvme_rdma_queue_rq": "post",
            "nvme_rdma_memreg_done": "post",
            "nvme_rdma_process_nvme_rsp": "reminv",
            "nvme_rdma_inv_rkey": "localinv",
            "nvme_rdma_inv_rkey_done": "localinv",
            "__nvme_rdma_stop_queue": "recovery",
            "nvme_rdma_complete_rq": "recovery",
            "nvme_rdma_map_sg_pi": "pi",
            "nvme_rdma_set_sig_domain": "pi",
            "nvme_rdma_set_sig_attrs": "pi",
            "nvme_rdma_set_prot_checks": "pi",
            "nvme_rdma_sig_done": "pi",
            "nvme_rdma_check_pi_status": "pi",
        },
    },
    "iser": {
        "title": "ib_iser",
        "splices": ["ulp/iser/iscsi_iser.h.splice", "ulp/iser/iser_verbs.c.splice",
                    "ulp/iser/iser_memory.c.splice",
                    "ulp/iser/iser_initiator.c.splice"],
        "pieces": {
            "iser_create_fastreg_desc": "pool",
            "iser_destroy_fastreg_desc": "pool",
            "iser_alloc_fastreg_pool": "pool",
            "iser_free_fastreg_pool": "pool",
            "iser_reg_desc_get_fr": "pool",
            "iser_reg_desc_put_fr": "pool",
            "iser_fast_reg_mr": "map",
            "iser_reg_mem_fastreg": "map",
            "iser_post_send": "post",
            "iser_inv_desc": "reminv",
            "iser_check_remote_inv": "reminv",
            "iser_inv_rkey": "localinv",
            "iser_task_rsp": "localinv",
            "iser_mrkit_check_pi": "pi",
            "iser_unreg_mem_fastreg": "recovery",
            "iser_set_dif_domain": "pi",
            "iser_set_sig_attrs": "pi",
            "iser_set_prot_checks": "pi",
            "iser_reg_sig_mr": "pi",
            "iser_check_task_pi_status": "pi",
        },
    },
    "nfs": {
        "title": "rpcrdma",
        "splices": ["ulp/nfs/xprt_rdma.splice", "ulp/nfs/frwr_mrkit.c"],
        "pieces": {
            # upstream frwr_ops.c
            "frwr_cid_init": "pool",
            "frwr_mr_init": "pool",
            "frwr_mr_release": "pool",
            "frwr_query_device": "pool",
            "frwr_mr_unmap": "map",
            "frwr_mr_put": "map",
            "frwr_map": "map",
            "frwr_wc_fastreg": "post",
            "frwr_send": "post",
            "frwr_wp_create": "post",
            "frwr_reminv": "reminv",
            "frwr_mr_done": "localinv",
            "frwr_wc_localinv": "localinv",
            "frwr_wc_localinv_wake": "localinv",
            "frwr_wc_localinv_done": "localinv",
            "frwr_unmap_sync": "localinv",
            "frwr_unmap_async": "localinv",
            "frwr_reset": "recovery",
            # ours, frwr_mrkit.c
            "frwr_mk_qp": "post",
            "frwr_mk_refilled": "pool",
            "frwr_mk_pool_setup": "pool",
            "frwr_mk_pool_teardown": "pool",
            "frwr_mk_count_runs": "map",
            "frwr_mk_chunk_map": "map",
            "frwr_mk_reply_ready": "localinv",
            "frwr_mk_chunk_done": "localinv",
            "frwr_mk_free_handles": "recovery",
            "frwr_mk_chunk_drop": "recovery",
        },
    },
}


def defined_functions(src):
    """[(name, start, end)] of the functions src defines, in order."""
    names = []
    for mo in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", src.m):
        if src.depth0[mo.start()] and mo.group(1) not in names:
            names.append(mo.group(1))
    out = []
    for name in names:
        for kind, s, e in src.functions(name):
            if kind == "def":
                out.append((name, s, e))
    return sorted(out, key=lambda x: x[1])


class Tally:
    """Per piece: upstream names and lines, our names and lines."""

    def __init__(self, ulp):
        self.ulp = ulp
        self.rows = {k: [[], 0, [], 0] for k, _ in PIECES}

    def piece(self, name):
        try:
            return ULPS[self.ulp]["pieces"][name]
        except KeyError:
            raise splice.SpliceError(f"{self.ulp}: {name}(): no piece in porting-loc.py's table")

    def add(self, piece, up_name, up_lines, our_names, our_lines):
        row = self.rows[piece]
        if up_name and up_name not in row[0]:
            row[0].append(up_name)
        row[1] += up_lines
        for n in our_names:
            if n not in row[2]:
                row[2].append(n)
        row[3] += our_lines


def count_block(tally, piece, where, new):
    """Our block: a function with a piece of its own counts there."""
    pieces = ULPS[tally.ulp]["pieces"]
    rest = new
    for name, s, e in defined_functions(splice.Source(where, new)):
        p = pieces.get(name, piece)
        tally.add(p, None, 0, [name + "()"], splice.code_lines(new[s:e]))
        rest = rest.replace(new[s:e], "", 1)
    n = splice.code_lines(rest)
    if n:
        tally.add(piece, None, 0, [], n)


def count_whole(tally, old, new):
    """A file replaced whole: its functions against ours; the rest is decl."""
    for text, side in ((old, 0), (new, 1)):
        src = splice.Source("whole", text)
        rest = text
        for name, s, e in defined_functions(src):
            n = splice.code_lines(text[s:e])
            piece = tally.piece(name)
            if side == 0:
                tally.add(piece, name + "()", n, [], 0)
            else:
                tally.add(piece, None, 0, [name + "()"], n)
            rest = rest.replace(text[s:e], "", 1)
        n = splice.code_lines(rest)
        if side == 0:
            tally.add("decl", "file scope", n, [], 0)
        else:
            tally.add("decl", None, 0, ["file scope"], n)


def count_ulp(tree, proj, ulp):
    tally = Tally(ulp)
    for sp in ULPS[ulp]["splices"]:
        cur = None
        for words, block, where in splice.parse_splice(os.path.join(proj, sp)):
            verb, args = words[0], words[1:]
            if verb == "file":
                with open(os.path.join(tree, args[0]), encoding="utf-8") as f:
                    cur = splice.Source(args[0], f.read())
                continue
            if verb == "whole-file":
                with open(os.path.join(tree, args[0]), encoding="utf-8") as f:
                    count_whole(tally, f.read(), block)
                continue
            edits = splice.plan(cur, [(words, block, where)])
            s, e, new, _ = edits[0]
            up = splice.code_lines(cur.text[s:e])
            ours = splice.code_lines(new)
            if verb in ("replace", "delete", "replace-decl", "delete-decl",
                        "insert-before", "insert-after"):
                piece = tally.piece(args[0])
                up_name = args[0] + "()" if verb in ("replace", "delete") else None
                tally.add(piece, up_name, up, [], 0)
                count_block(tally, piece, where, new)
            elif verb in ("member", "replace-member", "delete-member"):
                name = f"struct {args[0]}"
                tally.add("decl", name if up else None, up, [name] if ours else [], ours)
            else:
                tally.add("decl", None, up, ["#include"] if ours else [], ours)
    return tally


def table(tally):
    title = ULPS[tally.ulp]["title"]
    lines = [".. list-table:: %s: code lines, upstream against mrkit" % title,
             "   :header-rows: 1", "   :widths: 22 34 7 30 7",
             "",
             "   * - Piece", "     - Upstream (replaced or deleted)", "     - Lines",
             "     - On mrkit", "     - Lines"]
    tu = to = 0
    for key, label in PIECES:
        un, ul, on, ol = tally.rows[key]
        if not ul and not ol:
            continue
        tu += ul
        to += ol
        lines += ["   * - " + label,
                  "     - " + (", ".join("``%s``" % n for n in un) or "(none)"),
                  "     - %d" % ul,
                  "     - " + (", ".join("``%s``" % n for n in on) or "(none)"),
                  "     - %d" % ol]
    saved = tu - to
    lines += ["   * - Total", "     -", "     - %d" % tu, "     -", "     - %d" % to,
              "", ("Lines saved: %d." % saved) if saved >= 0 else
              ("Lines saved: none; the code on mrkit is %d lines longer." % -saved)]
    return lines


def blocks(tree, proj):
    return {ulp: table(count_ulp(tree, proj, ulp)) for ulp in ULPS}


def splice_blocks(text, got, path):
    """text with each generated block replaced; error if one is missing."""
    out = text
    for ulp, lines in got.items():
        pat = re.compile(r"(^\.\. porting-loc %s begin\n)(.*?)(^\.\. porting-loc %s end$)"
                         % (ulp, ulp), re.S | re.M)
        if not pat.search(out):
            raise splice.SpliceError(f"{path}: no '.. porting-loc {ulp} begin/end' block")
        body = "\n" + "\n".join(lines) + "\n\n"
        out = pat.sub(lambda mo: mo.group(1) + body + mo.group(3), out)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", required=True, help="the unpacked linux-source-6.1")
    ap.add_argument("--check", metavar="RST")
    ap.add_argument("--update", metavar="RST")
    a = ap.parse_args()
    proj = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        got = blocks(a.tree, proj)
        path = a.check or a.update
        if not path:
            for ulp, lines in got.items():
                print("\n".join(lines) + "\n")
            return 0
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = splice_blocks(text, got, path)
        if a.update:
            if new != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
            return 0
        if new != text:
            print(f"porting-loc: {path}: the lines-saved tables differ from the code; "
                  f"run scripts/ulp/porting-loc.py --tree TREE --update {path}")
            return 1
        print(f"porting-loc: {path}: the lines-saved tables match the code")
    except (splice.SpliceError, OSError) as e:
        print(f"porting-loc: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
