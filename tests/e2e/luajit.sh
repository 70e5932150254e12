#!/bin/bash
# End-to-end tests of cgjit's LuaJIT agent (agent/cgjit_luajit.lua, docs/luajit.md) with
# samples/src/traces.lua:
#  - the stored sample samples/luajit-traces (always): its dump read here (records.pl, no
#    cgjit code) and by cgjit augment and timeline: every trace named TRACE_N KIND::@FILE:LINE,
#    the hot trace is the histogram loop's, at the line of its `for`, with exactly the input's
#    cost on its addresses (cgcheck), the phase-2 traces and only those are late, and
#    timeline --max-late holds them to a budget;
#  - where luajit is found: record refusing without the agent and with --symbols map; the
#    agent without valgrind against LuaJIT's own -jv lines (the
#    same traces, parents, exits, lines and links; also stitched builtins, recursion, a string
#    chunk), in either order with -jv (LuaJIT keeps one trace handler), loaded twice (one dump), jit.flush() (a CODE_CLOSE, trace numbers
#    reused), the options (map, plain, dir=, an unknown one) and a directory it cannot write
#    (the program runs on, one line says so);
#  - where valgrind is found too: cgjit record -- luajit twice: the hot trace named with its
#    file and line, check-augment.pl's checks, the timeline's late traces, and the same
#    traces and hot-trace cost both times (LuaJIT's random seed moves the rest a little).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"

SAMPLE=$top/samples/luajit-traces
SRC=$top/samples/src/traces.lua
AGENT_DIR=$(dirname "$CGJIT")   # make copies the agent beside cgjit
# the line of the histogram's loop, the hot trace's (from the source, not from cgjit)
HOT_LINE=$(grep -n 'for _ = 1, n do' "$SRC" | cut -d: -f1)
# the first line of phase 2 (prefix() and median()): traces at or after it start late
LATE_LINE=$(grep -n '^local function prefix' "$SRC" | cut -d: -f1)

# records.pl DUMP: the jitdump's header and records, read here: "header PID MACH VERSION",
# then per record "ID TIMESTAMP" and for a CODE_LOAD " INDEX ADDR SIZE NAME" (hex ADDR, SIZE).
cat >"$tmp/records.pl" <<'EOF'
use strict;
use warnings;
local $/;
open(my $f, '<:raw', $ARGV[0]) or die "$ARGV[0]: $!\n";
my $d = <$f>;
die "short\n" if length($d) < 40 || unpack('V', $d) != 0x4A695444;
my ($ver, $hsize, $mach, $pid) = unpack('V V V x4 V', substr($d, 4, 20));
print "header $pid $mach $ver\n";
my $off = $hsize;
while ($off + 16 <= length($d)) {
	my ($id, $size, $ts) = unpack('V V Q<', substr($d, $off, 16));
	die "bad size at $off\n" if $size < 16 || $off + $size > length($d);
	my $line = "$id $ts";
	if ($id == 0) {
		my ($addr, $csize, $index) = unpack('Q< Q< Q<', substr($d, $off + 32, 24));
		my $nul = index($d, "\0", $off + 56);
		my $name = substr($d, $off + 56, $nul - $off - 56);
		die "code does not end the record at $off\n" if $nul + 1 + $csize != $off + $size;
		$line .= sprintf(" %d %x %x %s", $index, $addr, $csize, $name);
	}
	print "$line\n";
	$off += $size;
}
die "trailing bytes\n" if $off != length($d);
EOF
records() { perl "$tmp/records.pl" "$1"; }
# the CODE_LOADs of a records() listing whose name is a trace's: "N KIND LINE" per trace
traces() { sed -n 's/^0 [0-9]* [0-9]* [0-9a-f]* [0-9a-f]* TRACE_\([0-9]*\) \(.*\)::@[^:]*:\([0-9]*\)$/\1 \2 \3/p' "$1"; }

# check_dump NAME DUMP PROFILE(plain) AUGMENTED WARMUPS: the checks on a dump of traces.lua
# and the profile of the same run, augmented; the timeline's with each of WARMUPS.
check_dump() {
	local name=$1 dump=$2 in=$3 out=$4 warmups=$5
	records "$dump" >"$tmp/$name.rec" 2>"$tmp/err" || { notok "$name: records.pl: $(cat "$tmp/err")"; return; }
	local pid
	pid=$(basename "$dump" | tr -dc 0-9)
	expect 'grep -qx "header $pid 62 1" "$tmp/$name.rec"' "$name: header: version 1, elf_mach 62, the pid of its name"
	expect '! grep -qv "^0 \|^header " "$tmp/$name.rec"' "$name: only CODE_LOADs (no flush in this program)"
	expect 'awk "NR > 1 { if (\$2 < t) exit 1; t = \$2; if (\$3 != ++n) exit 1 }" "$tmp/$name.rec"' \
		"$name: timestamps never decrease, code_index counts 1, 2, 3, ..."
	traces "$tmp/$name.rec" >"$tmp/$name.tr"
	local n
	n=$(grep -c . "$tmp/$name.tr")
	expect '[ "$n" -ge 4 ] && [ "$n" = "$(grep -c " TRACE_" "$tmp/$name.rec")" ]' \
		"$name: $n traces, every TRACE_ name in the form TRACE_N KIND::@traces.lua:LINE"
	expect 'grep -q "^[0-9]* ([0-9]*/[0-9]*) .* [0-9]*$" "$tmp/$name.tr"' "$name: a side trace, (PARENT/EXIT) in its name"
	expect 'grep -q "LuaJIT exit stubs 0-31$" "$tmp/$name.rec"' "$name: the exit stub group 0-31 is a load"

	"$CGCHECK" "$out" >/dev/null 2>"$tmp/err"
	expect '[ ! -s "$tmp/err" ]' "$name: cgcheck accepts the augmented profile $(head -c 200 "$tmp/err")"
	# the hot function: the largest self cost of the output, a name's 'N parts (callgrind's
	# recursion levels, formats.md 2.6) added up
	"$CGCHECK" --list "$out" | perl -F'\t' -lane '
		(my $n = $F[1]) =~ s/\x27\d+$//; $c{$n} += $F[4]; $f{$n} = $F[2];
		END { my ($h) = sort { $c{$b} <=> $c{$a} } keys %c; print join("\t", $h, $f{$h}, $c{$h}) }' >"$tmp/$name.hot"
	local hot file self
	IFS=$'\t' read -r hot file self <"$tmp/$name.hot"
	expect '[[ $hot == "TRACE_"*" loop::@traces.lua:$HOT_LINE" ]] && [ "$file" = traces.lua ]' \
		"$name: the hot function is the histogram loop's trace at traces.lua:$HOT_LINE, in file traces.lua: '$hot' '$file'"
	# its cost is the input's on its addresses (cgcheck --addrs of the input, the dump's range)
	local start size want
	read -r start size < <(HOT="${hot%%::*}" perl -ne 'my @f = split / /, $_, 6; chomp $f[5];
		print "$f[3] $f[4]\n" if $f[0] eq "0" && (split /::/, $f[5])[0] eq $ENV{HOT}' "$tmp/$name.rec")
	want=$("$CGCHECK" --addrs "$in" | HOT_START=$start HOT_SIZE=$size perl -F'\t' -lane '
		next if $F[3] eq "call"; my $a = hex($F[1]); my $s = hex($ENV{HOT_START});
		$t += (split / /, $F[3])[0] if $a >= $s && $a < $s + hex($ENV{HOT_SIZE}); END { print $t + 0 }')
	expect '[ -n "$start" ] && [ "$self" = "$want" ] && [ "$want" -gt 0 ]' \
		"$name: its self cost $self Ir is the input's on its bytes at 0x$start (0x$size): $want"
	# the timeline: with the default warm-up (10% of the span) every phase-2 trace is late and
	# the hot loop's trace is not; with 25% or 50% exactly the phase-2 traces are late. Under
	# valgrind compiling the first traces takes about a tenth of the run (the side trace of
	# phase 1 comes just after 10%), so the live runs, whose times vary with the machine's
	# load, are checked with 50% only (phase 2 starts at about 85% of the span)
	awk -v l="$LATE_LINE" '$NF >= l { print $1, $NF }' "$tmp/$name.tr" | sort -n >"$tmp/$name.late.want"
	local w
	for w in $warmups; do
		"$CGJIT" timeline --format json --top 0 --warmup $w "$dump" >"$tmp/$name.json" 2>"$tmp/err"
		perl -MJSON::XS -e '
			local $/; my $d = decode_json(<STDIN>);
			print join("\n", map { $_->{name} } @{$d->{late}{list}}), "\n";' <"$tmp/$name.json" |
			sed -n 's/^TRACE_\([0-9]*\) .*:\([0-9]*\)$/\1 \2/p' | sort -n >"$tmp/$name.late"
		if [ $w = 10% ]; then
			local hotnum=${hot%% *}
			hotnum=${hotnum#TRACE_}
			expect '[ -s "$tmp/$name.late.want" ] && [ -z "$(comm -23 <(sort "$tmp/$name.late.want") <(sort "$tmp/$name.late"))" ] && ! grep -q "^$hotnum " "$tmp/$name.late"' \
				"$name: timeline (default warm-up): the traces of lines >= $LATE_LINE are late, the hot loop's (TRACE_$hotnum) is not: $(tr '\n' ' ' <"$tmp/$name.late")"
		else
			expect 'cmp -s "$tmp/$name.late" "$tmp/$name.late.want"' \
				"$name: timeline --warmup $w: the traces of lines >= $LATE_LINE ($(wc -l <"$tmp/$name.late.want")), and only those, are late: $(tr '\n' ' ' <"$tmp/$name.late")"
		fi
	done
}

echo "# the stored sample"
sdump=$(ls "$SAMPLE"/jit-*.dump)
zstd -q -dcf "$(ls "$SAMPLE"/callgrind.out.*)" >"$tmp/sample.in"
"$CGJIT" augment -q -o "$tmp/sample.out" --elf "$tmp" "$tmp/sample.in" "$sdump"
check_dump sample "$sdump" "$tmp/sample.in" "$tmp/sample.out" "10% 25%"

# --max-late: a budget on the late traces (6 with --warmup 25%)
nlate=$(wc -l <"$tmp/sample.late.want")
"$CGJIT" timeline --warmup 25% --max-late "$nlate" "$sdump" >/dev/null 2>"$tmp/err"
expect '[ $? = 0 ] && [ ! -s "$tmp/err" ]' "timeline --max-late $nlate: the $nlate late traces are within it, exit 0"
"$CGJIT" timeline --warmup 25% --max-late $((nlate - 1)) -o "$tmp/tl.txt" "$sdump" 2>"$tmp/err"
rc=$?
expect '[ $rc = 3 ] && grep -qx "cgjit: .*jit-[0-9]*.dump: $nlate loads after the warm-up (--warmup 25%), more than --max-late $((nlate - 1))" "$tmp/err" && grep -q "^Late loads" "$tmp/tl.txt"' \
	"timeline --max-late $((nlate - 1)): exit 3 ($rc), one line says why, the output is written: $(cat "$tmp/err")"
"$CGJIT" timeline --max-late -1 "$sdump" >/dev/null 2>&1
expect '[ $? = 2 ]' "timeline --max-late -1: usage error"

if ! command -v luajit >/dev/null; then
	skip "luajit not installed (apt-get install luajit): the live agent and record checks"
	finish
	exit
fi

echo "# cgjit record -- luajit, refused before anything runs"
(cd "$tmp" && CGJIT_LUAJIT_AGENT= "$CGJIT" record -d "$tmp/none" -- luajit "$SRC" >/dev/null 2>"$tmp/err"; echo $? >"$tmp/rc")
expect '[ "$(cat "$tmp/rc")" = 1 ] && grep -q "^cgjit: luajit: LuaJIT writes no perf map or jitdump by itself, and cgjit.s LuaJIT agent, cgjit_luajit.lua, was not found" "$tmp/err" && [ ! -e "$tmp/none" ]' \
	"no agent (CGJIT_LUAJIT_AGENT empty): exit 1, says how to get it, runs nothing: $(cat "$tmp/err")"
(cd "$tmp" && "$CGJIT" record --symbols map -d "$tmp/none" -- luajit "$SRC" >/dev/null 2>"$tmp/err"; echo $? >"$tmp/rc")
expect '[ "$(cat "$tmp/rc")" = 1 ] && grep -q "^cgjit: --symbols: luajit writes no perf map here" "$tmp/err" && [ ! -e "$tmp/none" ]' \
	"--symbols map: exit 1, refused: $(cat "$tmp/err")"

echo "# the agent without valgrind"
mkdir -p "$tmp/run" && cp "$SRC" "$tmp/run/"
export LUA_PATH="$AGENT_DIR/?.lua;;"
# run_agent TAG ENV... -- LUAJIT-ARGS: runs luajit in $tmp/run/TAG, the dump there
run_agent() {
	local tag=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -rf "$tmp/run/$tag" && mkdir "$tmp/run/$tag" && cp "$SRC" "$tmp/run/$tag/"
	(cd "$tmp/run/$tag" && env "${envs[@]}" luajit "$@" >stdout 2>stderr; echo $? >rc)
}
# jv_traces STDERR: LuaJIT's -jv lines as "N KIND LINE", as traces() gives the dump's:
# "[TRACE   3 (2/5) traces.lua:15 -> 2]" is "3 (2/5) -> 2 15"; a string chunk's (LuaJIT
# names it by an address) is left out, "-- fallback to interpreter" is "interpreter"
jv_traces() {
	grep -v '^\[TRACE *[0-9]* \(([0-9]*/[a-z0-9]*) \)\{0,1\}0x' "$1" |
		sed -n 's/ -- fallback to interpreter\]$/ interpreter]/; s/^\[TRACE *\([0-9][0-9]*\) \(([0-9]*\/[a-z0-9]*) \)\{0,1\}[^ :]*:\([0-9]*\) \(.*\)\]$/\1 \2\4 \3/p'
}
for order in jv-first jv-last; do
	if [ $order = jv-first ]; then run_agent $order -- -jv -l cgjit_luajit traces.lua
	else run_agent $order -- -l cgjit_luajit -jv traces.lua; fi
	d=$tmp/run/$order
	dumps=$(ls "$d"/jit-*.dump 2>/dev/null | wc -l)
	expect '[ "$dumps" = 1 ] && [ "$(cat "$d/rc")" = 0 ] && grep -q "^big " "$d/stdout"' \
		"$order: luajit ran (exit 0, its output) and one jit-PID.dump is in the current directory"
	records "$d"/jit-*.dump >"$d/rec" 2>/dev/null
	jv_traces "$d/stderr" >"$d/jv"
	traces "$d/rec" >"$d/tr"
	expect '[ -s "$d/jv" ] && cmp -s "$d/jv" "$d/tr"' \
		"$order: the dump's traces are -jv's, with the same parent/exit, link and line ($(wc -l <"$d/jv") traces)"
done

# other kinds of traces: stitched builtins, recursion, a string chunk, a coroutine
cat >"$tmp/run/kinds.lua" <<'EOF'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 20000 do t[#t + 1] = string.format("%d:%s", i, tostring(i * 3)) end
local words = 0
for _ in table.concat(t, " "):gmatch("%d+") do words = words + 1 end
local f = loadstring("local s = 0 for i = 1, 100000 do s = s + i % 3 end return s")
local co = coroutine.wrap(function() for i = 1, 50000 do coroutine.yield(i) end end)
local s = 0
for _ = 1, 50000 do s = s + co() end
print(fib(25), words, f(), s)
EOF
rm -rf "$tmp/run/kinds" && mkdir "$tmp/run/kinds"
(cd "$tmp/run/kinds" && luajit -jv -l cgjit_luajit ../kinds.lua >stdout 2>stderr)
d=$tmp/run/kinds
records "$d"/jit-*.dump >"$d/rec" 2>/dev/null
jv_traces "$d/stderr" >"$d/jv"
traces "$d/rec" >"$d/tr"
expect '[ "$(grep -c "stitch\|recursion" "$d/jv")" -ge 2 ] && cmp -s "$d/jv" "$d/tr"' \
	"stitched builtins, recursion, a coroutine: the dump's traces are -jv's ($(wc -l <"$d/jv") traces: $(cut -d" " -f2- "$d/jv" | sort -u | tr '\n' ';'))"
expect 'grep -q "^0 .* TRACE_[0-9]* loop::\[string \"local s = 0 for i = 1, 100000 do s = s +...\"\]:1$" "$d/rec"' \
	"a string chunk's trace is named [string \"its first 40 bytes...\"]:LINE, the same every run"

run_agent twice LUA_INIT="@$AGENT_DIR/cgjit_luajit.lua" -- -l cgjit_luajit traces.lua
d=$tmp/run/twice
expect '[ "$(ls "$d"/jit-*.dump | wc -l)" = 1 ] && grep -q "already loaded; this copy writes nothing" "$d/stderr"' \
	"LUA_INIT and -l both: one dump, the second copy says so"
records "$d"/jit-*.dump >"$d/rec"
expect '[ "$(traces "$d/rec" | wc -l)" = "$(traces "$tmp/run/jv-first/rec" | wc -l)" ]' "... and each trace is in it once"

cat >"$tmp/run/flush.lua" <<'EOF'
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local a = work(1000)
jit.flush()
print(a + work(1000))
EOF
rm -rf "$tmp/run/flush" && mkdir "$tmp/run/flush"
(cd "$tmp/run/flush" && luajit -l cgjit_luajit ../flush.lua >stdout 2>stderr)
records "$tmp/run/flush"/jit-*.dump >"$tmp/run/flush/rec"
expect 'awk "{print \$1}" "$tmp/run/flush/rec" | tr "\n" " " | grep -q "^header 0 0 3 0 0 $"' \
	"jit.flush(): stubs and the trace, a CODE_CLOSE, then stubs and a trace again: $(awk '{print $1}' "$tmp/run/flush/rec" | tr '\n' ' ')"
expect '[ "$(traces "$tmp/run/flush/rec" | cut -d" " -f1 | tr "\n" " ")" = "1 1 " ]' \
	"... LuaJIT numbers the trace after the flush 1 again"
"$CGJIT" timeline "$tmp/run/flush"/jit-*.dump >"$tmp/run/flush/tl" 2>&1
expect 'grep -q "^Recompiled.*: 2 functions" "$tmp/run/flush/tl"' "cgjit timeline lists the trace and the stubs as recompiled"

run_agent opts CGJIT_LUAJIT=map,plain,bogus,verbose -- -l cgjit_luajit traces.lua
d=$tmp/run/opts
dump=$(ls "$d"/jit-*.dump)
pid=$(basename "$dump" | tr -dc 0-9)
records "$dump" >"$d/rec"
awk '$1 == 0 { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; print $4, $5, n }' "$d/rec" >"$d/want.map"
expect 'cmp -s "$d/want.map" "/tmp/perf-$pid.map"' "map: /tmp/perf-$pid.map lists the dump's loads (address, size, name)"
rm -f "/tmp/perf-$pid.map"
expect '[ -s "$d/want.map" ] && ! grep -q "TRACE_[0-9]* " "$d/want.map" && grep -q "^[0-9a-f]* [0-9a-f]* TRACE_[0-9]*::@traces.lua:[0-9]*$" "$d/want.map"' \
	"plain: names are LuaJIT's own TRACE_N::@file:line"
expect 'grep -q "^cgjit-luajit: unknown option .bogus. in CGJIT_LUAJIT" "$d/stderr" && [ "$(cat "$d/rc")" = 0 ]' \
	"an unknown option is said and ignored"
expect 'grep -q "^cgjit-luajit: ./jit-$pid.dump: [0-9]* traces, 1 exit stub groups, " "$d/stderr"' "verbose: the summary at the end"

mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
run_agent nodir CGJIT_LUAJIT="dir=$tmp/ro" -- -l cgjit_luajit traces.lua
d=$tmp/run/nodir
if [ -w "$tmp/ro" ]; then
	skip "a directory the agent cannot write (running as root)"
	rm -f "$tmp"/ro/jit-*.dump
else
	expect 'grep -q "^cgjit-luajit: cannot create $tmp/ro/jit-[0-9]*.dump: .*writing no dump$" "$d/stderr" && [ "$(cat "$d/rc")" = 0 ] && grep -q "^big " "$d/stdout"' \
		"dir= a directory it cannot write: one line, the program runs on"
fi
# the dump of an earlier process of the same pid is not replaced: the program makes the file
# under its own pid before the agent starts
run_agent exists -- -e 'local ffi = require("ffi") ffi.cdef("int getpid(void);")
	local f = io.open("jit-" .. ffi.C.getpid() .. ".dump", "w") f:write("mine") f:close()' -l cgjit_luajit traces.lua
d=$tmp/run/exists
expect '[ "$(cat "$d"/jit-*.dump)" = mine ] && grep -q "cannot create ./jit-[0-9]*.dump: .*File exists" "$d/stderr"' \
	"an existing jit-PID.dump is left as it was (and the program's own getpid declaration does not clash)"
unset LUA_PATH

if ! command -v valgrind >/dev/null; then
	skip "valgrind not installed: cgjit record -- luajit"
	finish
	exit
fi

echo "# cgjit record -- luajit traces.lua, twice"
for i in 1 2; do
	rm -rf "$tmp/rec$i" && mkdir -p "$tmp/rec$i/src" && cp "$SRC" "$tmp/rec$i/src/"
	(cd "$tmp/rec$i/src" && "$CGJIT" record -d ../out -- luajit traces.lua >stdout 2>stderr; echo $? >rc)
	d=$tmp/rec$i
	expect '[ "$(cat "$d/src/rc")" = 0 ] && grep -q "^cgjit: running CGJIT_LUAJIT=dir=. luajit -e dofile\[==\[.*cgjit_luajit.lua\]==\] traces.lua under callgrind (deterministic: nothing to add for luajit)$" "$d/src/stderr"' \
		"record $i: exit 0, the agent loaded with -e: $(head -n 1 "$d/src/stderr" | head -c 300)"
	expect 'ls "$d"/out/callgrind.out.jit.* "$d"/out/jit-*.dump >/dev/null 2>&1' "record $i: the augmented profile and the dump are in -d DIR"
	in=$(ls "$d"/out/callgrind.out.[0-9]*)
	check_dump "record$i" "$(ls "$d"/out/jit-*.dump)" "$in" "$(ls "$d"/out/callgrind.out.jit.*)" 50%
	"$CGCHECK" --list "$(ls "$d"/out/callgrind.out.jit.*)" | awk -F'\t' '$2 ~ /^TRACE_/ { print $2, $5 }' | sort >"$d/costs"
	sed "s/'[0-9]* [0-9]*$//; s/ [0-9]*$//" "$d/costs" | sort -u >"$d/names"
done
# record augments with --root . : the names say traces.lua, as in the sample
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	*) notok "${line#not ok - }" ;;
	esac
done < <(perl "$top/tests/e2e/check-augment.pl" --root "$tmp/rec1/src" "$CGCHECK" "$(ls "$tmp"/rec1/out/callgrind.out.[0-9]*)" \
	"$(ls "$tmp"/rec1/out/callgrind.out.jit.*)" "$(ls "$tmp"/rec1/out/jit-*.dump)" 2>/dev/null)
# LuaJIT seeds its placement of machine code and its string hashes from getrandom(), so small
# traces' code and the interpreter's counts differ a little from run to run (docs/luajit.md):
# the traces and the hot loop's cost repeat
expect '[ -s "$tmp/rec1/names" ] && cmp -s "$tmp/rec1/names" "$tmp/rec2/names"' \
	"two runs: the same traces, by name ($(wc -l <"$tmp/rec1/names"))"
hot1=$(grep "^TRACE_[0-9]* loop::@traces.lua:$HOT_LINE'2 " "$tmp/rec1/costs")
hot2=$(grep "^TRACE_[0-9]* loop::@traces.lua:$HOT_LINE'2 " "$tmp/rec2/costs")
expect '[ -n "$hot1" ] && [ "$hot1" = "$hot2" ]' "two runs: the hot trace's cost is the same: '$hot1' '$hot2'"
finish
