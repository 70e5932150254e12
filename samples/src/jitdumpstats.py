#!/usr/bin/env python3
"""Describe a jitdump file (jit-PID.dump), optionally against a callgrind profile.

Usage: jitdumpstats.py [--records] DUMP[.zst] [PROFILE[.zst]]

  --records   also list every record (one line each; DEBUG_INFO entries indented)

Used by scripts/make-samples for the numbers in samples/*-jitdump/README and to
check tests/jitprog's dumps. Prints facts only; it modifies nothing. Layout per
linux tools/perf/Documentation/jitdump-specification.txt (record ids 0 CODE_LOAD,
1 CODE_MOVE, 2 DEBUG_INFO, 3 CLOSE, 4 UNWINDING_INFO). DEBUG_INFO entries are
parsed by nr_entry (as perf does) and checked against the record's total_size.
A DEBUG_INFO belongs to the next CODE_LOAD in the file (perf's rule).

With a profile: every function name (fn=/cfn=) in object ??? that is "0x" + 16
hex digits (before any "'" suffix) is a pseudo-function; the script counts how
many fall into a CODE_LOAD range [code_addr, code_addr + code_size) or into the
range a CODE_MOVE moved such code to.
"""
import bisect
import collections
import re
import signal
import struct
import subprocess
import sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head

IDS = {0: "CODE_LOAD", 1: "CODE_MOVE", 2: "DEBUG_INFO", 3: "CLOSE", 4: "UNWINDING_INFO"}
HEX16 = re.compile(r"^0x([0-9a-f]{16})$")
POSLINE = re.compile(r"^(ob|cob|fn|cfn)=(?:\((\d+)\))?(?: ?(.*))?$")


def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        data = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    return data


def printable(b):
    """True if b is a plausible file name: not empty, valid UTF-8, no control bytes."""
    if not b:
        return False
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(ord(ch) >= 0x20 and ord(ch) != 0x7F for ch in s)


def show(b):
    return b.decode("utf-8", "backslashreplace")


def parse(data):
    if len(data) < 40:
        raise SystemExit("jitdumpstats: file shorter than the 40-byte header")
    if data[:4] == b"DTiJ":
        e = "<"
    elif data[:4] == b"JiTD":
        e = ">"
    else:
        raise SystemExit("jitdumpstats: bad magic %r" % data[:4])
    magic, version, hsize, mach, pad1, pid, ts, flags = struct.unpack(e + "IIIIIIQQ", data[:40])
    hdr = dict(order="little-endian" if e == "<" else "big-endian", magic=magic, version=version,
               total_size=hsize, elf_mach=mach, pad1=pad1, pid=pid, timestamp=ts, flags=flags)
    recs = []
    off = hsize
    trailing = 0
    while off < len(data):
        if len(data) - off < 16:
            trailing = len(data) - off
            break
        rid, size, rts = struct.unpack(e + "IIQ", data[off:off + 16])
        if size < 16 or off + size > len(data):
            trailing = len(data) - off
            break
        body = data[off:off + size]
        r = dict(id=rid, off=off, size=size, ts=rts)
        if rid == 0 and size >= 56:
            r["pid"], r["tid"], r["vma"], r["addr"], r["csize"], r["index"] = \
                struct.unpack(e + "IIQQQQ", body[16:56])
            end = body.find(b"\0", 56)
            r["name"] = body[56:end] if end >= 0 else body[56:]
            r["code_ok"] = end >= 0 and size - r["csize"] == end + 1
        elif rid == 1 and size >= 64:
            r["pid"], r["tid"], r["vma"], r["old"], r["new"], r["csize"], r["index"] = \
                struct.unpack(e + "IIQQQQQ", body[16:64])
        elif rid == 2 and size >= 32:
            r["addr"], r["nr"] = struct.unpack(e + "QQ", body[16:32])
            ents, p, overrun = [], 32, False
            for _ in range(r["nr"]):
                if p + 16 > size:
                    overrun = True
                    break
                a, line, disc = struct.unpack(e + "QII", body[p:p + 16])
                end = body.find(b"\0", p + 16)
                if end < 0:
                    overrun = True
                    break
                ents.append((a, line, disc, body[p + 16:end]))
                p = end + 1
            r["entries"], r["used"], r["overrun"] = ents, p, overrun
            r["raw"], r["fmt"] = body, e
        elif rid == 4 and size >= 40:
            r["unwind_size"], r["eh_hdr_size"], r["mapped_size"] = struct.unpack(e + "QQQ", body[16:40])
        recs.append(r)
        off += size
    return hdr, recs, trailing


def kind(name):
    """Name prefix for the summaries: "JS:~" (V8 tier marks kept), "Builtin:", "py::",
    "TRACE_" (LuaJIT), "LuaJIT exit stubs"..."""
    s = show(name)
    m = re.match(r"^(JS:[~^*+]?|[A-Za-z]+::?|TRACE_|LuaJIT exit stubs)", s)
    return m.group(1) if m else "(other)"


def fixed_stride(d, ld):
    """For a DEBUG_INFO that does not parse: if its entries have one fixed size
    (total_size - 32 = nr_entry * stride + padding < 8), re-read it with that
    stride. Returns (stride, entries in [code_addr, code_addr + size + 0x40])."""
    nr = d["nr"]
    if not nr or not ld:
        return None
    stride = (d["size"] - 32) // nr
    if stride < 17 or d["size"] - 32 - stride * nr >= 8:
        return None
    data = d["raw"]
    fmt = d["fmt"]
    inr = 0
    fields = set()
    for i in range(nr):
        a = struct.unpack(fmt + "Q", data[32 + i * stride:40 + i * stride])[0]
        inr += ld["addr"] <= a <= ld["addr"] + ld["csize"] + 0x40
        fields.add(data[32 + i * stride + 16:32 + (i + 1) * stride])
    return stride, inr, fields


def profile_names(path):
    """Distinct pseudo-function names (0x+16 hex, object ???) of a profile, the
    self cost (first event) of each (summed over parts), and the total self cost."""
    data = read_bytes(path).decode("utf-8", "replace")
    obj_ids, fn_ids = {}, {}
    cur_ob, pend_cob = None, None
    out = set()
    npos = 1
    self_cost = collections.Counter()
    total = 0
    cur = None
    after_calls = False
    for ln in data.split("\n"):
        if not ln:
            continue
        c = ln[0]
        if c.isdigit() or c in "+-*":
            if after_calls:
                after_calls = False
                continue
            f = ln.split()
            if len(f) > npos:
                v = int(f[npos], 0)
                total += v
                if cur is not None:
                    self_cost[cur] += v
            continue
        if ln.startswith("positions:"):
            npos = len(ln.split()) - 1
            continue
        if ln.startswith(("calls=", "jump=", "jcnd=")):
            after_calls = True
            continue
        if not c.isalpha():
            continue
        m = POSLINE.match(ln)
        if not m:
            continue
        tag, idn, nm = m.groups()
        if tag in ("ob", "cob"):
            if idn is not None and nm:
                obj_ids[idn] = nm
            o = obj_ids.get(idn) if idn is not None else nm
            if tag == "ob":
                cur_ob, pend_cob = o, None
            else:
                pend_cob = o
            continue
        if idn is not None and nm:
            fn_ids[idn] = nm
        f = fn_ids.get(idn) if idn is not None else nm
        if tag == "fn":
            o = cur_ob
        else:
            o = pend_cob if pend_cob is not None else cur_ob
            pend_cob = None
        jit = o == "???" and f and HEX16.match(f.split("'", 1)[0])
        if jit:
            out.add(f)
        if tag == "fn":
            cur = f if jit else None
    return out, self_cost, total


def main():
    args = sys.argv[1:]
    records = False
    if args and args[0] == "--records":
        records = True
        args = args[1:]
    if not 1 <= len(args) <= 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    data = read_bytes(args[0])
    hdr, recs, trailing = parse(data)
    pr = print

    pr("jitdump:  %s (%d bytes)" % (args[0].rsplit("/", 1)[-1], len(data)))
    pr("header:   %s, magic 0x%08x, version %d, total_size %d, elf_mach %d, pad1 0x%x, pid %d,"
       % (hdr["order"], hdr["magic"], hdr["version"], hdr["total_size"], hdr["elf_mach"],
          hdr["pad1"], hdr["pid"]))
    pr("          timestamp %d, flags 0x%x" % (hdr["timestamp"], hdr["flags"]))
    cnt = collections.Counter(r["id"] for r in recs)
    pr("records:  %d: %s" % (len(recs), ", ".join("%s %d" % (IDS.get(i, "id%d" % i), cnt[i])
                                                  for i in sorted(cnt))))
    if trailing:
        pr("          %d trailing bytes not forming a complete record" % trailing)
    unaligned = collections.Counter(IDS.get(r["id"], r["id"]) for r in recs if r["size"] % 8)
    pr("          record sizes not a multiple of 8: %s" %
       (", ".join("%s %d" % kv for kv in sorted(unaligned.items())) or "none"))
    ts = [r["ts"] for r in recs]
    pr("          record timestamps %s" %
       ("non-decreasing" if all(a <= b for a, b in zip(ts, ts[1:])) else "NOT in order"))

    loads = [r for r in recs if r["id"] == 0]
    moves = [r for r in recs if r["id"] == 1]
    dbgs = [r for r in recs if r["id"] == 2]
    unws = [r for r in recs if r["id"] == 4]

    # ---- CODE_LOAD ----
    if loads:
        idx = [r["index"] for r in loads]
        pr("CODE_LOAD: %d, code_index %d..%d (%s), code_size 0: %d, vma == code_addr: %d, "
           "name/code layout ok: %d"
           % (len(loads), min(idx), max(idx),
              "increasing by 1" if idx == list(range(idx[0], idx[0] + len(idx))) else "not consecutive",
              sum(1 for r in loads if r["csize"] == 0), sum(1 for r in loads if r["vma"] == r["addr"]),
              sum(1 for r in loads if r["code_ok"])))
        pr("          tids: %d distinct; pids other than the header's: %d"
           % (len(set(r["tid"] for r in loads)), sum(1 for r in loads if r["pid"] != hdr["pid"])))
        names = collections.Counter(r["name"] for r in loads)
        kinds = collections.Counter()
        span = {}
        for r in loads:
            k = kind(r["name"])
            kinds[k] += 1
            lo, hi = span.get(k, (r["addr"], r["addr"]))
            span[k] = (min(lo, r["addr"]), max(hi, r["addr"] + r["csize"]))
        pr("          distinct names %d; by prefix: %s"
           % (len(names), ", ".join("%s %d" % kv for kv in kinds.most_common())))
        for k, _ in kinds.most_common():
            pr("            %-18s code_addr %x .. %x" % (k, span[k][0], span[k][1]))
        by_addr = collections.defaultdict(list)
        for r in loads:
            by_addr[r["addr"]].append(r)
        reused = {a: v for a, v in by_addr.items() if len(v) > 1}
        pr("          code_addr loaded more than once: %d addresses (%d loads)"
           % (len(reused), sum(len(v) for v in reused.values())))
        for a, v in sorted(reused.items())[:8]:
            pr("            %x: %s" % (a, " | ".join("#%d %s size %d" % (r["index"], show(r["name"]), r["csize"])
                                                  for r in v)))
        rng = sorted((r["addr"], r["addr"] + r["csize"], r["index"]) for r in loads if r["csize"])
        overl = sum(1 for x, y in zip(rng, rng[1:]) if y[0] < x[1] and y[0] != x[0])
        pr("          ranges overlapping another load's range (different start): %d" % overl)

    # ---- CODE_MOVE ----
    if moves:
        by_index = {r["index"]: r for r in loads}
        pr("CODE_MOVE: %d" % len(moves))
        for r in moves[:8]:
            ld = by_index.get(r["index"])
            pr("            #%d %x -> %x size %d%s" %
               (r["index"], r["old"], r["new"], r["csize"],
                " (%s)" % show(ld["name"]) if ld else " (no CODE_LOAD with this code_index)"))

    # ---- DEBUG_INFO: association with the next CODE_LOAD ----
    if dbgs:
        nxt = {}
        pending = []
        for r in recs:
            if r["id"] == 2:
                pending.append(r)
            elif r["id"] == 0:
                for d in pending:
                    nxt[d["off"]] = r
                pending = []
        nents = sum(len(d["entries"]) for d in dbgs)
        same_addr = sum(1 for d in dbgs if d["off"] in nxt and nxt[d["off"]]["addr"] == d["addr"])
        pr("DEBUG_INFO: %d with %d entries; followed by a CODE_LOAD: %d; code_addr equal to that "
           "load's: %d" % (len(dbgs), nents, len(nxt), same_addr))
        first = collections.Counter()
        bad = []
        files = collections.Counter()
        repeat = 0
        for d in dbgs:
            ld = nxt.get(d["off"])
            base = ld["addr"] if ld else d["addr"]
            size = ld["csize"] if ld else 0
            if d["entries"]:
                first["+0x%x" % (d["entries"][0][0] - base) if d["entries"][0][0] >= base
                      else "-0x%x" % (base - d["entries"][0][0])] += 1
            garbage = [e for e in d["entries"] if not printable(e[3])]
            outside = [e for e in d["entries"] if not base <= e[0] <= base + size + 0x40]
            slack = d["size"] - d["used"]
            for e in d["entries"]:
                if e[3] == b"\xff":
                    repeat += 1
                elif printable(e[3]):
                    files[e[3]] += 1
            if garbage or outside or d["overrun"] or not 0 <= slack < 8:
                bad.append((d, ld, garbage, outside, slack))
        pr("          first entry's address - code_addr: %s" %
           ", ".join("%s in %d" % kv for kv in first.most_common()))
        good = [(d, nxt[d["off"]]) for d in dbgs
                if d["off"] in nxt and d not in [b[0] for b in bad]]
        ge = [(e[0] - ld["addr"], ld["csize"]) for d, ld in good for e in d["entries"]]
        pr("          in the %d well-formed records: %d entries, offsets from code_addr %s; "
           "below +0x40: %d; at or past code_size + 0x40: %d"
           % (len(good), len(ge), "+0x%x..+0x%x" % (min(o for o, _ in ge), max(o for o, _ in ge))
              if ge else "-", sum(1 for o, _ in ge if o < 0x40), sum(1 for o, n in ge if o >= n + 0x40)))
        pr("          distinct file names %d; \"\\xff\" repeat markers %d" % (len(files), repeat))
        pr("          parse by nr_entry: bytes left in the record (padding) %s" %
           ", ".join("%d in %d" % kv for kv in
                     sorted(collections.Counter(d["size"] - d["used"] for d in dbgs).items())))
        pr("          records with a garbage file name, an entry outside [code_addr, "
           "code_addr+size+0x40], an overrun or > 7 bytes left: %d" % len(bad))
        strides = collections.Counter()
        for d, ld, garbage, outside, slack in bad:
            fs = fixed_stride(d, ld)
            m = re.search(r" (\S+):\d+:\d+$", show(ld["name"])) if ld else None
            want = 16 + len(m.group(1).encode()) + 1 if m else None
            # the name field's bytes past the first 16, against the script path's
            tail = ""
            if fs and m:
                path = m.group(1).encode() + b"\0"
                tails = set(f[16:] for f in fs[2])
                tail = (", every name field = 16 other bytes + the script path's bytes 16.."
                        if len(path) > 16 and tails == {path[16:]} else
                        ", all name fields alike" if len(fs[2]) == 1 else ", name fields differ")
            strides[("stride %d" % fs[0] if fs else "no fixed stride") +
                    (", all entries in range" if fs and fs[1] == d["nr"] else
                     ", %d/%d entries in range" % (fs[1], d["nr"]) if fs else "") +
                    (", = 16 + strlen(script path in the load's name) + 1" if fs and fs[0] == want else
                     ", != 16 + strlen(script path) + 1" if fs and want else "") + tail] += 1
        if bad:
            pr("          those re-read with entries of one fixed size (total_size - 32 = nr_entry * stride + pad):")
            for k, v in strides.most_common():
                pr("            %d: %s" % (v, k))
        for d, ld, garbage, outside, slack in bad[:6]:
            pr("            before %s: %d entries, %d garbage names, %d outside, %s, %d bytes left"
               % (show(ld["name"]) if ld else "(no load)", len(d["entries"]), len(garbage),
                  len(outside), "overrun" if d["overrun"] else "no overrun", slack))
            if garbage:
                g = garbage[0]
                pr("              first garbage name (%d bytes): %r at %x line %d discrim %d"
                   % (len(g[3]), g[3], g[0], g[1], g[2]))

    # ---- UNWINDING_INFO ----
    if unws:
        follows = 0
        for i, r in enumerate(recs):
            if r["id"] == 4:
                j = i + 1
                while j < len(recs) and recs[j]["id"] in (2, 4):
                    j += 1
                follows += j < len(recs) and recs[j]["id"] == 0
        pr("UNWINDING_INFO: %d, followed by a CODE_LOAD: %d, mapped_size 0: %d" %
           (len(unws), follows, sum(1 for r in unws if r.get("mapped_size", 1) == 0)))

    # ---- the profile ----
    if len(args) == 2:
        ranges = [(r["addr"], r["addr"] + r["csize"]) for r in loads if r["csize"]]
        ranges += [(r["new"], r["new"] + r["csize"]) for r in moves if r["csize"]]
        ranges.sort()
        starts = [a for a, _ in ranges]
        maxlen = max((b - a for a, b in ranges), default=0)
        load_starts = set(a for a, _ in ranges)

        def inside(a):
            i = bisect.bisect_right(starts, a) - 1
            while i >= 0 and a - ranges[i][0] < maxlen:
                if ranges[i][0] <= a < ranges[i][1]:
                    return True
                i -= 1
            return False

        names, self_cost, total = profile_names(args[1])
        addrs = collections.defaultdict(set)
        for n in names:
            addrs[int(n.split("'", 1)[0], 16)].add(n)
        ins = [a for a in addrs if inside(a)]
        owner = {}
        for r in loads:
            if r["csize"]:
                owner[(r["addr"], r["addr"] + r["csize"])] = kind(r["name"])
        for r in moves:
            if r["csize"]:
                owner[(r["new"], r["new"] + r["csize"])] = "(moved)"
        by_kind = collections.Counter()
        for a in ins:
            for (lo, hi), k in owner.items():
                if lo <= a < hi:
                    by_kind[k] += len(addrs[a])
                    break
        pr("profile:  %s" % args[1].rsplit("/", 1)[-1])
        pr("          0x pseudo-function names in object ???: %d (%d addresses); inside a CODE_LOAD/"
           "CODE_MOVE range: %d names (%d addresses: %d at a range start, %d interior); outside: %d names"
           % (len(names), len(addrs), sum(len(addrs[a]) for a in ins), len(ins),
              sum(1 for a in ins if a in load_starts), sum(1 for a in ins if a not in load_starts),
              sum(len(v) for a, v in addrs.items() if a not in ins)))
        pr("          inside names by the owning CODE_LOAD's name prefix: %s"
           % ", ".join("%s %d" % kv for kv in by_kind.most_common()))
        jit_self = sum(self_cost[n] for a in ins for n in addrs[a])
        pr("          self cost (first event) of the inside names: %d of %d (%.2f%%)"
           % (jit_self, total, 100.0 * jit_self / total if total else 0))

    if records:
        pr("records in file order:")
        for r in recs:
            k = IDS.get(r["id"], "id%d" % r["id"])
            if r["id"] == 0:
                pr("  @%d %s size %d: pid %d tid %d vma %x code_addr %x code_size %d code_index %d name %s"
                   % (r["off"], k, r["size"], r["pid"], r["tid"], r["vma"], r["addr"], r["csize"],
                      r["index"], show(r["name"])))
            elif r["id"] == 1:
                pr("  @%d %s size %d: pid %d tid %d vma %x old %x new %x code_size %d code_index %d"
                   % (r["off"], k, r["size"], r["pid"], r["tid"], r["vma"], r["old"], r["new"],
                      r["csize"], r["index"]))
            elif r["id"] == 2:
                pr("  @%d %s size %d: code_addr %x nr_entry %d" % (r["off"], k, r["size"], r["addr"], r["nr"]))
                for a, line, disc, f in r["entries"]:
                    pr("      %x line %d discrim %d file %s" % (a, line, disc, show(f)))
            elif r["id"] == 4:
                pr("  @%d %s size %d: unwind_data_size %d eh_frame_hdr_size %d mapped_size %d"
                   % (r["off"], k, r["size"], r.get("unwind_size", 0), r.get("eh_hdr_size", 0),
                      r.get("mapped_size", 0)))
            else:
                pr("  @%d %s size %d" % (r["off"], k, r["size"]))


if __name__ == "__main__":
    main()
