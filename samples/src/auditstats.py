#!/usr/bin/env python3
"""Describe a RaptorJIT auditlog (raptorjit -a audit.log), optionally against a callgrind
profile of the same run.

Usage: auditstats.py [--records] AUDITLOG[.zst] [PROFILE[.zst]]

  --records   also list every record (one line each)

Used by scripts/make-samples for the numbers in samples/raptorjit-traces/README. Prints
facts only; it modifies nothing. The log is a sequence of msgpack maps (docs/formats.md,
"RaptorJIT's auditlog"); this reader knows the four msgpack forms RaptorJIT's
src/lj_auditlog.c writes (fixmap, str 16, uint 64, bin 32) and stops on any other byte.
Struct member offsets (GCtrace, GCproto, GCstr) are read from the log's own DWARF blob
lj_dwarf.dwo with binutils' readelf, not hard-coded. A trace's name is TRACE_N::CHUNK:LINE
with LINE = the start prototype's lineinfo[startpc's bytecode index], as LuaJIT names
traces. With a profile: the pseudo-functions (0x+16 hex, object ???, as
samples/src/jitdumpstats.py finds them) inside each trace's MCode[] range and their
self cost.
"""
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jitdumpstats import read_bytes, profile_names, HEX16  # noqa: E402


def decode(data, p):
    b = data[p]
    if 0x80 <= b <= 0x8F:
        m, p = {}, p + 1
        for _ in range(b & 0x0F):
            k, p = decode(data, p)
            v, p = decode(data, p)
            m[k] = v
        return m, p
    if b == 0xDA:
        n = struct.unpack_from(">H", data, p + 1)[0]
        return data[p + 3:p + 3 + n].decode("utf-8", "backslashreplace"), p + 3 + n
    if b == 0xCF:
        return struct.unpack_from(">Q", data, p + 1)[0], p + 9
    if b == 0xC6:
        n = struct.unpack_from(">I", data, p + 1)[0]
        if p + 5 + n > len(data):
            raise SystemExit("auditstats: byte %d: bin 32 of %d bytes runs past the end" % (p, n))
        return data[p + 5:p + 5 + n], p + 5 + n
    raise SystemExit("auditstats: byte %d: msgpack type byte 0x%02x is not one RaptorJIT writes" % (p, b))


def records(data):
    p, out = 0, []
    while p < len(data):
        r, q = decode(data, p)
        if not isinstance(r, dict):
            raise SystemExit("auditstats: byte %d: a record is not a map" % p)
        out.append((p, r))
        p = q
    return out


def dwarf_layouts(blob, names):
    """{struct: (byte_size, {member: (offset, byte size of its type)})} from readelf."""
    with tempfile.NamedTemporaryFile(suffix=".dwo") as f:
        f.write(blob)
        f.flush()
        txt = subprocess.run(["readelf", "--debug-dump=info", f.name], capture_output=True,
                             text=True, check=True).stdout
    dies, order = {}, []
    cur = None
    for ln in txt.split("\n"):
        m = re.match(r"\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)", ln)
        if m:
            cur = {"depth": int(m.group(1)), "tag": m.group(3), "off": int(m.group(2), 16)}
            dies[cur["off"]] = cur
            order.append(cur)
            continue
        m = re.match(r"\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$", ln)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2).split("): ")[-1].strip()

    def type_size(off):
        for _ in range(20):
            d = dies.get(off)
            if d is None:
                return None
            if "DW_AT_byte_size" in d:
                return int(d["DW_AT_byte_size"], 0)
            if "DW_AT_type" not in d:
                return None
            off = int(d["DW_AT_type"].strip("<>"), 16)
        return None

    out = {}
    for i, d in enumerate(order):
        if d["tag"] != "DW_TAG_structure_type" or d.get("DW_AT_name") not in names:
            continue
        if d["DW_AT_name"] in out or "DW_AT_byte_size" not in d:
            continue
        members = {}
        for c in order[i + 1:]:
            if c["depth"] <= d["depth"]:
                break
            if c["depth"] == d["depth"] + 1 and c["tag"] == "DW_TAG_member":
                members[c["DW_AT_name"]] = (int(c["DW_AT_data_member_location"], 0),
                                            type_size(int(c["DW_AT_type"].strip("<>"), 16)))
        out[d["DW_AT_name"]] = (int(d["DW_AT_byte_size"], 0), members)
    return out


def field(lay, struct_name, data, member):
    off, size = lay[struct_name][1][member]
    return int.from_bytes(data[off:off + size], "little")


def main():
    args = sys.argv[1:]
    show_records = "--records" in args
    args = [a for a in args if a != "--records"]
    if not 1 <= len(args) <= 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    data = read_bytes(args[0])
    recs = records(data)
    pr = print
    pr("auditlog: %s (%d bytes)" % (os.path.basename(args[0]), len(data)))
    kinds = collections.Counter()
    for _, r in recs:
        t = r.get("type")
        kinds["%s %s" % (t, r.get({"memory": "hint", "event": "event", "blob": "name"}.get(t, "type")))] += 1
    pr("records:  %d: %s" % (len(recs), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
    blobs = [r for _, r in recs if r.get("type") == "blob" and r.get("name") == "lj_dwarf.dwo"]
    if not blobs:
        raise SystemExit("auditstats: no lj_dwarf.dwo blob")
    lay = dwarf_layouts(blobs[0]["data"], {"GCtrace", "GCproto", "GCstr"})
    pr("DWARF:    lj_dwarf.dwo (%d bytes): sizeof GCtrace %d, GCproto %d, GCstr %d" % (
        len(blobs[0]["data"]), lay["GCtrace"][0], lay["GCproto"][0], lay["GCstr"][0]))
    pr("          GCtrace offsets: " + ", ".join("%s %d" % (m, lay["GCtrace"][1][m][0]) for m in (
        "traceno", "parent", "exitno", "link", "linktype", "startpt", "startpc", "mcode", "szmcode",
        "mcloop")))
    pr("          GCproto offsets: " + ", ".join("%s %d" % (m, lay["GCproto"][1][m][0]) for m in (
        "chunkname", "firstline", "sizebc", "lineinfo")) + "; GCstr len %d" % lay["GCstr"][1]["len"][0])

    # the latest memory record at each address, as the log is read in order
    mem = {}
    t0 = None
    traces, aborts = [], []
    for pos, r in recs:
        if show_records:
            pr("  @%-8d %s" % (pos, " ".join("%s=%s" % (k, ("<%d bytes>" % len(v)) if isinstance(v, bytes)
                                                       else ("0x%x" % v if k == "address" else v))
                                             for k, v in r.items())))
        if r.get("type") == "memory":
            mem[(r["hint"], r["address"])] = r["data"]
        if r.get("type") != "event":
            continue
        if t0 is None:
            t0 = r["nanotime"]
        if r["event"] == "trace_abort":
            aborts.append((r["nanotime"] - t0, r["TraceError"]))
        if r["event"] != "trace_stop":
            continue
        T = mem[("GCtrace", r["GCtrace"])]
        g = lambda m: field(lay, "GCtrace", T, m)  # noqa: E731
        mcaddr, sz = g("mcode"), g("szmcode")
        mc = mem.get(("MCode[]", mcaddr))
        pt_addr, pc = g("startpt"), g("startpc")
        P = mem[("GCproto", pt_addr)]
        q = lambda m: field(lay, "GCproto", P, m)  # noqa: E731
        s_addr = q("chunkname")
        S = mem[("GCstr", s_addr)]
        slen = field(lay, "GCstr", S, "len")
        chunk = S[lay["GCstr"][0]:lay["GCstr"][0] + slen].decode("utf-8", "backslashreplace")
        bcpos = (pc - pt_addr - lay["GCproto"][0]) // 4
        li = q("lineinfo") - pt_addr + 4 * bcpos
        line = int.from_bytes(P[li:li + 4], "little")
        traces.append(dict(n=g("traceno"), parent=g("parent"), exitno=g("exitno"), link=g("link"),
                           linktype=g("linktype"), addr=mcaddr, size=sz, mclen=len(mc) if mc else None,
                           mcloop=g("mcloop"), chunk=chunk, line=line, t=r["nanotime"] - t0,
                           firstline=q("firstline")))
    pr("traces:   %d trace_stop, %d trace_abort%s" % (
        len(traces), len(aborts), (" (TraceError %s)" % ", ".join(
            "%d x%d" % kv for kv in sorted(collections.Counter(e for _, e in aborts).items())))
        if aborts else ""))
    for t in traces:
        kind = "(%d/%d)" % (t["parent"], t["exitno"]) if t["parent"] else "root"
        link = "loop" if t["link"] == t["n"] else ("-> %d" % t["link"] if t["link"] else "no link")
        pr("  TRACE_%d::%s:%d  %s, %s, linktype %d, +%.3f ms, MCode[] 0x%x size %d%s, mcloop +0x%x" % (
            t["n"], t["chunk"], t["line"], kind, link, t["linktype"], t["t"] / 1e6, t["addr"], t["size"],
            "" if t["mclen"] == t["size"] else " (MCode[] record %s bytes)" % t["mclen"], t["mcloop"]))
    if len(args) < 2:
        return
    names, self_cost, total = profile_names(args[1])
    pr("profile:  %s: %d pseudo-function names in object ???, total self cost %d" % (
        os.path.basename(args[1]).replace(".zst", ""), len(names), total))
    inside_total = 0
    for t in traces:
        inn = sorted(n for n in names
                     if t["addr"] <= int(HEX16.match(n.split("'", 1)[0]).group(1), 16) < t["addr"] + t["size"])
        c = sum(self_cost[n] for n in inn)
        inside_total += c
        pr("  TRACE_%d: %d names in [0x%x, 0x%x), self cost %d%s" % (
            t["n"], len(inn), t["addr"], t["addr"] + t["size"], c,
            (": " + " ".join("%s %d" % (n, self_cost[n]) for n in inn[:4]) + (" ..." if len(inn) > 4 else ""))
            if inn else ""))
    pr("  inside a trace's MCode[]: self cost %d of %d (%.2f%%)" % (
        inside_total, total, 100.0 * inside_total / total if total else 0))


if __name__ == "__main__":
    main()
