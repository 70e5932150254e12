#!/bin/bash
# End-to-end tests of cgjit's JVMTI agent (libcgjit-jvmti.so, docs/jvmti.md) with
# samples/src/Inventory.java + Item.java (package com.acme):
#  - the stored sample samples/java-jvmti (always): cgjit augment with its jitdump names the
#    hot method exactly as the JVM's perf map of the same run does, its cost lines carry
#    com/acme/Inventory.java lines that exist and the loop holds its cost, the inlined
#    Item.value() has lines in com/acme/Item.java, the ELF file disassembles the method,
#    every Java method the map and the dump both list has one name;
#  - where javac is found: the same from a fresh run of java under valgrind with the agent
#    ($JVMTI_AGENT, built by make), and without valgrind the agent's options (dir=,
#    $JITDUMPDIR, the current directory, an unknown option), a directory it cannot write
#    and a write error (ulimit -f): the program runs on and one line says so; with a live
#    JVM held through FIFOs (Hold): jcmd JVMTI.agent_load into a JVM without the agent and
#    of a second copy (which writes nothing), and kill -9 after the hot method compiled
#    (the method is in the dump).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"

SAMPLE=$top/samples/java-jvmti
SRC=$top/samples/src
AGENT=$(realpath -m "${JVMTI_AGENT:-$top/build/libcgjit-jvmti.so}")
HOT='long com.acme.Inventory.total(java.util.List, int[])'

# lines.pl PROFILE: self cost (first event) per function, file and line of a callgrind
# profile with positions "instr line": "COST<TAB>FUNCTION<TAB>FILE<TAB>LINE".
cat >"$tmp/lines.pl" <<'EOF'
use strict;
use warnings;
my (%tab, %cost, @base, $fl, $fi, $fn, $call);
while (<>) {
	chomp;
	if (/^(c?ob|fl|fi|fe|c?fn|cfi|cfl)=(.*)$/) {
		my ($k, $v) = ($1, $2);
		my $space = $k =~ /ob/ ? 'o' : $k =~ /fn/ ? 'n' : 'f';
		if ($v =~ /^\((\d+)\)(?: (.*))?$/) {
			$v = defined $2 ? ($tab{$space}{$1} = $2) : $tab{$space}{$1};
		}
		if ($k eq 'fl') { $fl = $fi = $v }
		elsif ($k eq 'fi' || $k eq 'fe') { $fi = $v }
		elsif ($k eq 'fn') { $fn = $v; $fi = $fl }
		next;
	}
	if (/^calls=/) { $call = 1; next }
	next unless /^[0-9+*-]/;
	my @t = split / /;
	for my $i (0, 1) {
		my $x = $t[$i];
		$base[$i] = $x eq '*' ? $base[$i] : $x =~ /^[+-]/ ? $base[$i] + $x : $x =~ /^0x/ ? hex($x) : $x;
	}
	if ($call) { $call = 0; next }
	$cost{"$fn\t$fi\t$base[1]"} += $t[2] // 0;
}
print "$cost{$_}\t$_\n" for sort keys %cost;
EOF

# loads.pl DUMP: the CODE_LOADs of a jitdump, read here without cgjit:
# "ADDR SIZE NAME" (hex), in file order.
cat >"$tmp/loads.pl" <<'EOF'
use strict;
use warnings;
open(my $f, '<:raw', $ARGV[0]) or die;
local $/;
my $d = <$f>;
my $off = unpack('V', substr($d, 8, 4));
while ($off + 16 <= length $d) {
	my ($id, $size) = unpack('VV', substr($d, $off, 8));
	last if $size < 16;
	if ($id == 0) {
		my ($addr, $csize) = unpack('Q<Q<', substr($d, $off + 32, 16));
		my $nul = index($d, "\0", $off + 56);
		printf "%x %x %s\n", $addr, $csize, substr($d, $off + 56, $nul - $off - 56);
	}
	$off += $size;
}
EOF

# check_run DIR PROFILE DUMP MAP LABEL: augment PROFILE with DUMP and check the hot method.
check_run() {
	local d=$1 prof=$2 dump=$3 map=$4 label=$5
	local out=$d/aug.out
	"$CGJIT" augment -q "$prof" "$dump" -o "$out" --elf "$d" 2>"$d/aug.err"
	expect '[ -s "$out" ] && "$CGCHECK" "$out" >/dev/null' "$label: augment with the dump, the output passes cgcheck"
	perl "$tmp/lines.pl" "$out" >"$d/lines"
	# the hot method as the JVM's perf map names it
	expect 'grep -qF " $HOT" "$map" && grep -qF "$HOT" "$d/lines"' \
		"$label: the hot method is named exactly as in the JVM's perf map: $HOT"
	local inv_lines item_lines
	inv_lines=$(wc -l <"$SRC/Inventory.java")
	item_lines=$(wc -l <"$SRC/Item.java")
	# the lines of the loop and of Item.value(), found in the sources
	local loop_from loop_to val_from val_to
	loop_from=$(grep -n 'for (int i = 0; i < counts.length' "$SRC/Inventory.java" | cut -d: -f1)
	loop_to=$(grep -n 'sum += it.value' "$SRC/Inventory.java" | cut -d: -f1)
	val_from=$(grep -n 'long value(int count)' "$SRC/Item.java" | cut -d: -f1)
	val_to=$((val_from + 3))
	awk -F'\t' -v hot="$HOT" -v n="$inv_lines" -v lf="$loop_from" -v lt="$loop_to" '
		{ f = $2; sub(/'"'"'[0-9]+$/, "", f) }
		f == hot && $3 == "com/acme/Inventory.java" {
			all += $1; if ($4 < 1 || $4 > n) bad++; if ($4 >= lf && $4 <= lt) loop += $1 }
		f == hot { total += $1 }
		END { printf "%d %d %d %d\n", total, all, loop, bad }' "$d/lines" >"$d/inv"
	read -r total inv loop badlines <"$d/inv"
	expect '[ "$inv" -gt 0 ] && [ "$badlines" = 0 ]' \
		"$label: the hot method's cost lines carry com/acme/Inventory.java lines that exist (cost $inv of its $total; lines outside 1..$inv_lines: $badlines)"
	expect '[ "$loop" -gt 0 ] && [ $((loop * 100)) -ge $((inv * 90)) ]' \
		"$label: the loop (Inventory.java:$loop_from-$loop_to) holds at least 90% of them ($loop of $inv)"
	awk -F'\t' -v hot="$HOT" -v n="$item_lines" -v vf="$val_from" -v vt="$val_to" '
		{ f = $2; sub(/'"'"'[0-9]+$/, "", f) }
		f == hot && $3 == "com/acme/Item.java" { all += $1; if ($4 < vf || $4 > vt) bad++ }
		END { printf "%d %d\n", all, bad }' "$d/lines" >"$d/item"
	read -r item baditem <"$d/item"
	expect '[ "$item" -gt 0 ] && [ "$baditem" = 0 ]' \
		"$label: the inlined Item.value() has cost lines in com/acme/Item.java:$val_from-$val_to (cost $item)"
	# the ELF file disassembles the method
	local elf
	elf=$(ls "$d"/*.dump.elf 2>/dev/null | head -n 1)
	objdump -d "$elf" 2>/dev/null | awk -v hot="<$HOT>:" '
		index($0, hot) { on = 1; n = 0; next } on && /^$/ { on = 0; if (n > best) best = n }
		on && /^ *[0-9a-f]+:\t/ { n++ } END { if (n > best) best = n; print best + 0 }' >"$d/insns"
	expect '[ "$(cat "$d/insns")" -ge 10 ]' \
		"$label: objdump -d on $(basename "$elf") disassembles the method ($(cat "$d/insns") instructions in its largest copy)"
	# every Java method in both the map and the dump at the same range has one name there
	# (HotSpot's method handle intrinsics excepted: JVMTI names them all alike)
	perl "$tmp/loads.pl" "$dump" >"$d/loads"
	# (how many methods the JIT compiles varies from run to run: 19 in one CI run under valgrind,
	# 83 in the stored sample; so the count is only required to include the hot method)
	awk -v hot="$HOT" 'NR == FNR { a = $1; s = $2; $1 = $2 = ""; last[a " " s] = substr($0, 3); next }
		/\(/ { a = $1; sub(/^0x0*/, "", a); s = $2; sub(/^0x0*/, "", s); $1 = $2 = ""
			n = substr($0, 3); k = a " " s
			if (!(k in last) || n ~ /^[^ ]+ java\.lang\.invoke\.MethodHandle\.(invokeBasic|linkTo)/) next
			both++; if (n == hot) found = 1
			if (last[k] != n) { bad++; if (!ex) ex = n " / " last[k] } }
		END { printf "%d %d %d %s\n", both, found, bad, ex }' "$d/loads" "$map" >"$d/names"
	read -r both hotboth badnames ex <"$d/names"
	expect '[ "$hotboth" = 1 ] && [ "$badnames" = 0 ]' \
		"$label: $both Java methods in the map and the dump (the hot method among them), the same names${ex:+ (first difference: $ex)}"
	"$CGJIT" timeline -f json "$dump" -o "$d/t.json" 2>"$d/t.err"
	expect 'grep -q "\"closes\": *1" "$d/t.json"' "$label: cgjit timeline reads the dump, one CODE_CLOSE"
}

s=$tmp/sample
mkdir -p "$s"
pid=$(sed -n 's/^# the profile.s pid: line says //p' "$SAMPLE/COMMAND")
check_run "$s" "$SAMPLE/callgrind.out.$pid.zst" "$SAMPLE/jit-$pid.dump" "$SAMPLE/perf-$pid.map" "stored sample"

# a profile named from the JVM's perf map compares with one named from the agent's dump
"$CGJIT" augment -q --no-elf -o "$s/by-map.out" "$SAMPLE/callgrind.out.$pid.zst" "$SAMPLE/perf-$pid.map"
"$CGJIT" augment -q -o "$s/by-dump.out" "$SAMPLE/callgrind.out.$pid.zst" "$SAMPLE/jit-$pid.dump"
"$CGJIT" diff -n 0 -f json "$s/by-map.out" "$s/by-dump.out" >"$s/d.json"
# (the same run: matched functions do not change, so at most the stubs the two name
# differently are left; before names were matched, every Java method was, about 90 each)
expect 'perl -MJSON::XS -e '"'"'local $/; my $d = decode_json(<STDIN>);
	exit !($d->{added} <= 10 && $d->{removed} <= 10 && $d->{changed} == 0)'"'"' <"$s/d.json"' \
	"cgjit diff: the map-named and the dump-named profile of one run match by name ($(perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>); print "$d->{added} only in new, $d->{removed} only in base"' <"$s/d.json"))"

if ! command -v javac >/dev/null; then
	skip "no JDK (javac not found): the agent is not run"
	finish
	exit
fi

expect '[ -f "$AGENT" ]' "the agent is built: $AGENT"
cls=$tmp/cls
mkdir -p "$cls"
javac -d "$cls" "$SRC/Inventory.java" "$SRC/Item.java"
JAVA="java -Xmx64m -XX:+UseSerialGC -XX:ReservedCodeCacheSize=32m -cp $cls"

# Options and failures, without valgrind (a second each).
o=$tmp/opts
mkdir -p "$o/dir" "$o/env" "$o/cwd"
(cd "$o/cwd" && $JAVA -agentpath:"$AGENT"=dir="$o/dir" com.acme.Inventory 20 >"$o/out1" 2>"$o/err1")
expect '[ "$(ls "$o/dir")" != "" ] && [ -z "$(ls "$o/cwd")" ] && ! [ -s "$o/err1" ] && grep -q "^total" "$o/out1"' \
	"dir=DIR: the dump is written there, nothing said: $(ls "$o/dir")"
(cd "$o/cwd" && JITDUMPDIR=$o/env $JAVA -agentpath:"$AGENT" com.acme.Inventory 20 >/dev/null 2>&1)
expect '[ "$(ls "$o/env" | grep -c "^jit-[0-9]*\.dump$")" = 1 ] && [ -z "$(ls "$o/cwd")" ]' '$JITDUMPDIR: the dump is written there'
(cd "$o/cwd" && $JAVA -agentpath:"$AGENT"=verbose com.acme.Inventory 20 >/dev/null 2>"$o/err3")
expect '[ "$(ls "$o/cwd" | grep -c "^jit-[0-9]*\.dump$")" = 1 ] && grep -q "compiled methods" "$o/err3"' \
	"no option: the current directory; verbose says what it wrote ($(tail -n 1 "$o/err3"))"
"$CGJIT" timeline "$o"/cwd/jit-*.dump >"$o/tl" 2>&1
expect 'grep -q "CLOCK_MONOTONIC" "$o/tl"' "the dump's timestamps are CLOCK_MONOTONIC nanoseconds to cgjit timeline"
$JAVA -agentpath:"$AGENT"=dir="$o/none/such" com.acme.Inventory 20 >"$o/out4" 2>"$o/err4"
rc=$?
expect '[ $rc = 0 ] && grep -q "^total" "$o/out4" && [ "$(wc -l <"$o/err4")" = 1 ] && grep -q "cannot create" "$o/err4"' \
	"a directory it cannot write: the program runs (exit $rc), one line: $(head -c 120 "$o/err4")"
(cd "$o/cwd" && rm -f jit-*.dump && ulimit -f 64 && $JAVA -agentpath:"$AGENT" com.acme.Inventory 200 >"$o/out5" 2>"$o/err5")
rc=$?
expect '[ $rc = 0 ] && grep -q "^total" "$o/out5" && [ "$(grep -c cgjit-jvmti "$o/err5")" = 1 ] && grep -q "no more records" "$o/err5"' \
	"a write error (ulimit -f 64): the program runs (exit $rc), said once: $(head -c 120 "$o/err5")"
"$CGJIT" timeline "$o"/cwd/jit-*.dump >/dev/null 2>"$o/tl5"
rc=$?
expect '[ $rc = 0 ]' "... the dump written up to the error still reads ($(head -c 100 "$o/tl5"))"
$JAVA -agentpath:"$AGENT"=colour=red com.acme.Inventory 20 >"$o/out6" 2>"$o/err6"
rc=$?
expect '[ $rc != 0 ] && grep -q "unknown option .colour=red." "$o/err6"' \
	"an unknown option stops the JVM before it runs (exit $rc): $(head -n 1 "$o/err6")"

# A live JVM held at a point the test chooses: Hold compiles work() (-Xbatch: in the
# foreground), prints its result, and waits for a line on stdin, through FIFOs (no sleeps).
# The output path is used once before, and the result is printed without string
# concatenation (no invokedynamic linkage): little code is generated after work(), so that
# its records are the last ones, those an agent that buffers would lose.
cat >"$tmp/Hold.java" <<'EOF'
public class Hold {
    static int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i % 7; return s; }
    public static void main(String[] a) throws Exception {
        System.out.println("start");
        long t = 0;
        for (int k = 0; k < 2000; k++) t += work(1000);
        System.out.println(t);
        System.out.flush();
        System.in.read();
        System.out.println("done");
    }
}
EOF
javac -d "$cls" "$tmp/Hold.java"
# loads_ts.pl DUMP: "TIMESTAMP ADDR SIZE NAME" per CODE_LOAD (a record cut off at the end
# of the file ends the list)
cat >"$tmp/loads_ts.pl" <<'EOF'
use strict;
use warnings;
open(my $f, '<:raw', $ARGV[0]) or die;
local $/;
my $d = <$f>;
my $off = unpack('V', substr($d, 8, 4));
while ($off + 16 <= length $d) {
	my ($id, $size, $ts) = unpack('VVQ<', substr($d, $off, 16));
	last if $size < 16 || $off + $size > length $d;
	if ($id == 0) {
		my ($addr, $csize) = unpack('Q<Q<', substr($d, $off + 32, 16));
		my $nul = index($d, "\0", $off + 56);
		printf "%d %x %x %s\n", $ts, $addr, $csize, substr($d, $off + 56, $nul - $off - 56);
	}
	$off += $size;
}
EOF
# hold NAME [JVM-OPTION]: Hold in $tmp/NAME (with the agent, or only JVM-OPTION), its stdin
# on fd 3 and stdout on fd 4; waits for its result (in $ready: 5994000); its pid in $hpid
hold() {
	h=$tmp/$1
	mkdir -p "$h"
	mkfifo "$h/in" "$h/out"
	(cd "$h" && exec $JAVA -Xbatch "${2:--agentpath:$AGENT}" Hold <in >out 2>err) &
	hpid=$!
	exec 3>"$h/in" 4<"$h/out"
	ready=""
	read -t 300 -r ready <&4 && read -t 300 -r ready <&4
}
monotonic_ns() { perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e 'printf "%.0f\n", clock_gettime(CLOCK_MONOTONIC) * 1e9'; }

if command -v jcmd >/dev/null; then
	# A second copy loaded into the running JVM (jcmd JVMTI.agent_load): it says so and
	# writes nothing; the dump's timestamps (CLOCK_MONOTONIC, as the test's clock) show
	# whether code loaded before the attach was written again after it.
	hold attach
	t0=$(monotonic_ns)
	jcmd "$hpid" JVMTI.agent_load "$AGENT" >"$h/jcmd.out" 2>&1
	echo go >&3
	exec 3>&-
	cat <&4 >"$h/rest"
	exec 4<&-
	wait "$hpid"
	rc=$?
	perl "$tmp/loads_ts.pl" "$h"/jit-*.dump >"$h/loads" 2>/dev/null
	awk -v t0="$t0" '{ k = $2 " " $3 " " substr($0, index($0, $4)) }
		$1 < t0 { before[k] = 1; n++; if ($0 ~ / int Hold\.work\(int\)$/) hot = 1; next }
		{ after++; if (k in before) again++ }
		END { printf "%d %d %d %d\n", n, hot, after, again }' "$h/loads" >"$h/counts"
	read -r nbefore hotbefore nafter again <"$h/counts"
	expect '[ $rc = 0 ] && [ "$ready" = 5994000 ] && [ "$(cat "$h/rest")" = done ] && grep -q "return code: 0" "$h/jcmd.out" && [ "$(grep -c "already loaded; this copy writes nothing" "$h/err")" = 1 ]' \
		"jcmd JVMTI.agent_load of a second copy into a JVM running the agent: loaded (return code 0), says it writes nothing, the program goes on (exit $rc)"
	expect '[ "$hotbefore" = 1 ] && [ "$again" = 0 ]' \
		"... and writes nothing: none of the $nbefore code loads written before the attach (the hot method among them) is written again after it ($again of $nafter loads after it repeat one)"

	# the first copy loaded into a running JVM: the code compiled before is asked for
	hold attach1 -Xshare:auto   # (the default: the option stands in for -agentpath)
	jcmd "$hpid" JVMTI.agent_load "$AGENT" >"$h/jcmd.out" 2>&1
	echo go >&3
	exec 3>&-
	cat <&4 >"$h/rest"
	exec 4<&-
	wait "$hpid"
	rc=$?
	perl "$tmp/loads_ts.pl" "$h"/jit-*.dump >"$h/loads" 2>/dev/null
	expect '[ $rc = 0 ] && grep -q "return code: 0" "$h/jcmd.out" && ! [ -s "$h/err" ] && grep -q " int Hold\.work(int)$" "$h/loads" && "$CGJIT" timeline -n 0 "$h"/jit-*.dump >/dev/null' \
		"jcmd JVMTI.agent_load into a JVM without the agent: jit-PID.dump written, with the hot method compiled before the attach ($(wc -l <"$h/loads") code loads)"
else
	skip "no jcmd in this JDK: loading the agent into a running JVM"
fi

# kill -9 once the hot method is compiled: every record the agent wrote is in the file
hold kill9
kill -KILL "$hpid"
wait "$hpid" 2>/dev/null
rc=$?
exec 3>&- 4<&-
perl "$tmp/loads_ts.pl" "$h"/jit-*.dump >"$h/loads" 2>/dev/null
"$CGJIT" timeline -n 0 "$h"/jit-*.dump >"$h/tl" 2>&1
trc=$?
expect '[ $rc = 137 ] && [ "$ready" = 5994000 ] && grep -q " int Hold\.work(int)$" "$h/loads" && [ $trc = 0 ]' \
	"a JVM killed by SIGKILL after its hot method was compiled: the method is in the dump ($(grep -c " int Hold\.work(int)$" "$h/loads") loads of it, $(wc -l <"$h/loads") in all), cgjit timeline reads it"

# A fresh run under valgrind, with the JVM's own perf map of the same run.
if ! command -v valgrind >/dev/null; then
	notok "valgrind is needed for the run under valgrind (scripts/setup installs it)"
	finish
	exit
fi
v=$tmp/vg
mkdir -p "$v"
start=$(date +%s)
# -Xbatch: methods compile in the foreground, so the hot method and its inlined callee are
# compiled however slowly valgrind runs the JIT threads
(cd "$v" && valgrind --tool=callgrind --dump-instr=yes $JAVA -Xbatch -XX:+UnlockDiagnosticVMOptions \
	-XX:+DumpPerfMapAtExit -agentpath:"$AGENT" com.acme.Inventory 3000 >out 2>vg.log)
rc=$?
vpid=$(sed -n 's/^pid: *//p' "$v"/callgrind.out.* 2>/dev/null | head -n 1)
if [ -n "$vpid" ] && [ -f "/tmp/perf-$vpid.map" ]; then mv "/tmp/perf-$vpid.map" "$v/"; fi
expect '[ $rc = 0 ] && grep -q "^total" "$v/out" && ! grep -q "cgjit-jvmti:" "$v/vg.log" && [ -f "$v/jit-$vpid.dump" ] && [ -f "$v/perf-$vpid.map" ]' \
	"java under valgrind with the agent: exit $rc in $(($(date +%s) - start)) s, a dump and the JVM's map"
check_run "$v" "$v/callgrind.out.$vpid" "$v/jit-$vpid.dump" "$v/perf-$vpid.map" "under valgrind"

finish
