#!/usr/bin/env python3
"""Describe a callgrind profile against the perf map of the same run.

Usage: jitstats.py PROFILE[.zst] PERF-MAP

Used by scripts/make-samples to write the numbers in each samples/*/README.
Prints facts only; it does not modify anything.

A "JIT candidate" is a function name whose first component (before any "'")
is "0x" + 16 hex digits and whose object is "???" (fn= under ob=???, or cfn=
with cob=??? or, without cob=, the current ob=???). Only candidates whose
address lies inside a map entry [start, start+size) are JIT code; the others
are PLT/.init stubs, valgrind trampolines and the like.
"""
import bisect
import collections
import re
import subprocess
import sys

HEX16 = re.compile(r"^0x([0-9a-f]{16})$")
POSLINE = re.compile(r"^(ob|cob|fl|fi|fe|cfi|cfl|fn|cfn|jfi|jfn)=(?:\((\d+)\))?(?: ?(.*))?$")


def read_profile(path):
    if path.endswith(".zst"):
        out = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    else:
        with open(path, "rb") as f:
            out = f.read()
    return out.decode("utf-8", "replace").split("\n")


def read_map(path):
    ents, bad, short = [], 0, 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            p = line.split(" ", 2)
            if len(p) < 3:
                bad += 1
                continue
            try:
                s, n = int(p[0], 16), int(p[1], 16)
            except ValueError:
                bad += 1
                continue
            if len(p[2]) < 3:
                short += 1
            ents.append((s, n, p[2]))
    return ents, bad, short


class Map:
    def __init__(self, ents):
        self.ents = sorted(ents)
        self.starts = [e[0] for e in self.ents]
        self.maxsize = max((e[1] for e in self.ents), default=0)

    def find(self, a):
        """All entries containing address a."""
        hits = []
        i = bisect.bisect_right(self.starts, a) - 1
        while i >= 0 and a - self.ents[i][0] < self.maxsize:
            s, n, _ = self.ents[i]
            if s <= a < s + n:
                hits.append(self.ents[i])
            i -= 1
        return hits


def main():
    prof, mapf = sys.argv[1], sys.argv[2]
    lines = read_profile(prof)
    ents, badlines, shortnames = read_map(mapf)
    m = Map(ents)

    hdr = collections.OrderedDict()
    parts = 0
    for ln in lines:
        if ln.startswith("part:"):
            parts += 1
        mm = re.match(r"^(pid|cmd|positions|events|creator):\s*(.*)$", ln)
        if mm and mm.group(1) not in hdr:
            hdr[mm.group(1)] = mm.group(2).strip()
    positions = hdr.get("positions", "line").split()
    has_instr = positions and positions[0] == "instr"
    if parts == 0:
        parts = 1

    # ---- pass over the body ----
    obj_ids, fn_ids = {}, {}
    cur_ob = None
    pend_cob = None
    cur_fn = None           # name of current fn= block
    cur_fn_jit = None       # map entry of current block's base address (or None)
    names = {}              # fn name -> set of objects it was seen with
    fn_defs = 0             # number of fn= lines (blocks)
    jit_blocks = 0          # fn= blocks of JIT functions in range
    jit_self = 0            # first-event self cost in those blocks
    total_self = 0
    foreign_instr = 0       # self cost lines in a JIT block at an address outside that block's map entry
    foreign_blocks = set()
    foreign_unmapped = 0    # ... of which outside every map entry
    foreign_fi = 0          # ... of which after fi=/fe= switched to a file other than fl=
    fl_id = cur_file = None
    cur_part = 1
    part_names = collections.defaultdict(set)   # part -> ??? names used in it
    nonjit_at_map = collections.defaultdict(lambda: [0, 0, set()])  # entry -> [lines, cost, fns]
    foreign_pairs = collections.Counter()  # (block's entry name, entry holding the line)
    last_pos = 0
    after_calls = False
    for ln in lines:
        if not ln or ln[0] == "#":
            continue
        c = ln[0]
        if c.isalpha():
            if ln.startswith("part:"):
                cur_part = int(ln[5:])
                continue
            pm = POSLINE.match(ln)
            if pm:
                tag, idn, nm = pm.groups()
                if tag in ("fl", "fi", "fe") and idn is not None:
                    if tag == "fl":
                        fl_id = idn
                    cur_file = idn
                    continue
                if tag in ("ob", "cob"):
                    if idn is not None and nm:
                        obj_ids[idn] = nm
                    o = obj_ids.get(idn) if idn is not None else nm
                    if tag == "ob":
                        cur_ob, pend_cob = o, None
                    else:
                        pend_cob = o
                elif tag in ("fn", "cfn", "jfn"):
                    if idn is not None and nm:
                        fn_ids[idn] = nm
                    f = fn_ids.get(idn) if idn is not None else nm
                    if tag == "fn":
                        o = cur_ob
                        fn_defs += 1
                        cur_fn = f
                        cur_fn_jit = None
                        last_pos = 0
                        if o == "???":
                            base = f.split("'", 1)[0]
                            hm = HEX16.match(base)
                            if hm:
                                hits = m.find(int(hm.group(1), 16))
                                if hits:
                                    cur_fn_jit = hits[0]
                                    jit_blocks += 1
                    else:
                        o = pend_cob if pend_cob is not None else cur_ob
                        pend_cob = None
                    names.setdefault(f, set()).add(o)
                    if o == "???":
                        part_names[cur_part].add(f)
                continue
            if ln.startswith("calls="):
                after_calls = True
                continue
            if ln.startswith(("jump=", "jcnd=")):
                after_calls = True  # following line is the source position only
                continue
            continue  # header lines, summary:, totals:
        # cost line
        fields = ln.split()
        if not fields:
            continue
        if after_calls:
            after_calls = False
            continue  # inclusive cost of a call; position is not a new base
        p0 = fields[0]
        if has_instr:
            if p0 == "*":
                pos = last_pos
            elif p0[0] in "+-":
                pos = last_pos + int(p0)
            else:
                pos = int(p0, 0)
            last_pos = pos
        npos = len(positions)
        cost = int(fields[npos]) if len(fields) > npos else 0
        total_self += cost
        if cur_fn_jit is not None:
            jit_self += cost
            if has_instr:
                s, n, _ = cur_fn_jit
                if not (s <= pos < s + n):
                    foreign_instr += 1
                    foreign_blocks.add(cur_fn)
                    if cur_file != fl_id:
                        foreign_fi += 1
                    h = m.find(pos)
                    if h:
                        foreign_pairs[(cur_fn_jit[2], h[0][2])] += 1
                    else:
                        foreign_unmapped += 1
        elif has_instr and m.ents:
            h = m.find(pos)
            if h:
                nonjit_at_map[h[0]][0] += 1
                nonjit_at_map[h[0]][1] += cost
                if len(nonjit_at_map[h[0]][2]) < 3:
                    nonjit_at_map[h[0]][2].add(cur_fn)

    # ---- classify names ----
    cand = {}
    for f, obs in names.items():
        if "???" not in obs:
            continue
        base = f.split("'", 1)[0]
        hm = HEX16.match(base)
        if hm:
            cand[f] = int(hm.group(1), 16)
    bases = collections.defaultdict(set)
    for f, a in cand.items():
        bases[a].add(f)
    inr = {a: m.find(a) for a in bases}
    in_range = {a for a, h in inr.items() if h}
    out_range = set(bases) - in_range
    names_in = sum(len(bases[a]) for a in in_range)
    names_out = sum(len(bases[a]) for a in out_range)
    at_start = sum(1 for a in in_range if any(e[0] == a for e in inr[a]))
    interior = len(in_range) - at_start
    ambiguous = sum(1 for a in in_range if len(inr[a]) > 1)
    per_entry = collections.Counter()
    for a in in_range:
        for e in inr[a]:
            per_entry[e] += 1
    frag = [e for e, c in per_entry.items() if c > 1]
    recs = sum(1 for f in cand if re.match(r"^0x[0-9a-f]{16}'\d+($|')", f) and cand[f] in in_range)
    decorated = sum(1 for f in cand if "'" in f)
    # caller-chain components that are JIT addresses (any name, object unknown)
    chain_comp = 0
    chain_names = 0
    for f in names:
        comps = f.split("'")[1:]
        k = 0
        for cpt in comps:
            hm = HEX16.match(cpt)
            if hm and m.find(int(hm.group(1), 16)):
                k += 1
        if k:
            chain_names += 1
            chain_comp += k
    other_hex = sum(1 for f, obs in names.items()
                    if "???" not in obs and HEX16.match(f.split("'", 1)[0]))

    # ---- map properties ----
    starts = collections.Counter(e[0] for e in ents)
    ranges = collections.Counter((e[0], e[1]) for e in ents)
    nm_count = collections.Counter(e[2] for e in ents)
    srt = sorted(ents)
    overlaps = 0
    max_end = -1
    for s, n, _ in srt:
        if s < max_end:
            overlaps += 1
        max_end = max(max_end, s + n)
    zero = sum(1 for e in ents if e[1] == 0)

    pr = print
    pr("profile:  %s" % prof.rsplit("/", 1)[-1])
    pr("map:      %s" % mapf.rsplit("/", 1)[-1])
    pr("pid: %s   positions: %s   events: %s   parts: %d" % (
        hdr.get("pid"), hdr.get("positions", "line"), hdr.get("events"), parts))
    pr("profile lines: %d   fn= blocks: %d   distinct function names: %d" % (
        sum(1 for x in lines if x), fn_defs, len(names)))
    pr("self cost (first event): total %d, in JIT blocks %d (%.1f%%)" % (
        total_self, jit_self, 100.0 * jit_self / total_self if total_self else 0))
    pr("")
    pr("perf map: %d entries, %d distinct names, %d names containing spaces," % (
        len(ents), len(nm_count), sum(1 for e in ents if " " in e[2])))
    pr("  %d names repeated (extra lines), %d duplicate start addresses, %d identical ranges," % (
        sum(c - 1 for c in nm_count.values() if c > 1),
        sum(c - 1 for c in starts.values() if c > 1),
        sum(c - 1 for c in ranges.values() if c > 1)))
    pr("  %d entries overlapping an earlier one, %d zero-size, %d names < 3 chars, %d unparsable lines" % (
        overlaps, zero, shortnames, badlines))
    pr("")
    pr("`0x`+16-hex names in object ???: %d distinct name strings (%d with ' decorations)," % (
        len(cand), decorated))
    pr("  %d distinct addresses: %d inside a map range (%d names), %d outside (%d names)" % (
        len(bases), len(in_range), names_in, len(out_range), names_out))
    pr("  in range: %d at an entry's start, %d interior (entered past the start)" % (at_start, interior))
    pr("  map entries hit: %d; entries hit at >1 address (fragmented): %d; addresses in >1 entry: %d" % (
        len(per_entry), len(frag), ambiguous))
    pr("  in-range names with a recursion suffix 'N: %d" % recs)
    pr("`0x`+16-hex names in named objects (ELF offsets, not JIT): %d" % other_hex)
    if chain_names:
        pr("caller-chain components (after ') that are in-range JIT addresses: %d in %d names" % (
            chain_comp, chain_names))
    if has_instr:
        pr("self cost lines inside a JIT block but outside that block's map entry: %d" % foreign_instr)
        pr("  in %d blocks; %d of those lines lie outside every map entry;" % (
            len(foreign_blocks), foreign_unmapped))
        pr("  %d of those lines follow a fi=/fe= naming a file other than the block's fl=" % foreign_fi)
    if parts > 1:
        seen = set()
        for p in sorted(part_names):
            here = {a for a in (cand.get(f) for f in part_names[p]) if a in in_range}
            pr("part %d: %d in-range JIT addresses used, %d not used in an earlier part" % (
                p, len(here), len(here - seen)))
            seen |= here
    if has_instr:
        nj = {e: v for e, v in nonjit_at_map.items() if e in per_entry}
        pr("self cost lines at addresses of JIT-hit map entries inside non-JIT blocks: %d (cost %d)" % (
            sum(v[0] for v in nj.values()), sum(v[1] for v in nj.values())))
        for e, v in sorted(nj.items(), key=lambda kv: -kv[1][0])[:4]:
            pr("  %s: %d lines in %s" % (e[2], v[0], ", ".join(sorted(v[2]))))
    if foreign_pairs:
        pr("")
        pr("JIT blocks holding code of another map entry (block entry -> entry of the code: cost lines), up to 6:")
        for (a, b), k in foreign_pairs.most_common(6):
            pr("  %s -> %s: %d" % (a, b, k))
    if frag:
        pr("")
        pr("fragmented map entries (entered at several addresses), up to 8:")
        for e in sorted(frag, key=lambda e: -per_entry[e])[:8]:
            offs = sorted(a - e[0] for a in in_range if e in inr[a])
            pr("  %x %x %s: offsets %s" % (e[0], e[1], e[2], " ".join("+0x%x" % o for o in offs[:10])))


if __name__ == "__main__":
    main()
