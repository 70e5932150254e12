#!/bin/bash
# End-to-end tests of `cgjit record` with real runtimes under real valgrind: node (jitdump
# in the current directory, perf map in /tmp, a child process, exit status 3, SIGTERM; a
# background child that outlives the shell that started it, SIGTERM and a terminal's
# Ctrl-C while such a process runs, sequenced through FIFOs),
# java (perf map at exit, exit status 3) and CPython 3.13 (jitdump in /tmp, moved across
# file systems to /dev/shm; python3 through the version probe). Each run must leave an
# augmented profile with named JIT functions and the maps and dumps beside it, none in
# /tmp or the current directory. With root: a shared (sticky) -d DIR where another user
# planted links under the names augment writes (a program that waits on a FIFO until they
# are there). A process of the run killed by SIGKILL (its profile stays empty: said, not
# collected) and --separate-threads=yes (its empty base file dropped). #22: the
# determinism flags on the command line shown; a second node run within the measured
# bound, and the README's example budget holding against the first; the output: one line
# per step, no ==PID== line without -v, -q only the final line, the progress line only on
# a terminal (script(1)); a pyenv shim and a #! script named node refused and named. Then
# the errors:
# valgrind missing, runtime missing,
# unknown command, unknown runtime, no map written, usage. Runs are small (about two
# minutes in all). Maps and dumps of this test's processes left in /tmp are a failure,
# and removed (by the pids of the profiles, so that other runs' files are left alone).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"
# valgrind's gdb server makes three FIFOs in /tmp per run and removes them at its exit,
# which a run this script kills never reaches: three were left in /tmp by each of six runs
# on 2026-11-27
export VALGRIND_OPTS="${VALGRIND_OPTS:+$VALGRIND_OPTS }--vgdb=no"

# #22.1: how far apart the totals of two runs of one node program may be (docs/record.md
# 1.1, measured). What varies is how often node's threads wait for each other: at start
# and exit up to about 2,200 instructions measured (bounded: each worker thread signals
# once), and at exit libuv's uv__async_close(), which spins 997 times (about 6,000
# instructions) per round while another thread is inside uv_async_send(); how many rounds
# depends on which thread valgrind runs first after a system call. So: without that
# function the totals may differ by DET_REST, with it by DET_BOUND (16 rounds). Neither
# depends on the machine's speed.
DET_REST=10000
DET_BOUND=100000

if ! command -v valgrind >/dev/null; then
	notok "valgrind is needed for cgjit record (scripts/setup installs it)"
	finish
	exit
fi

shm=""
# The maps and dumps in /tmp of this test's processes: the pids of the profiles it made.
# Not a before/after listing of /tmp: other test runs may write maps there meanwhile. Only
# the pids of JIT runtimes (the profile's cmd: line): a shell of this test may have the
# pid that a node of another suite running at the same time gets later, and that node's
# map is not this test's to judge or remove.
our_syms_in_tmp() {
	local pid
	for pid in $(find "$tmp" ${shm:+"$shm"} -name 'callgrind.out.[0-9]*' 2>/dev/null |
		xargs -r grep -l '^cmd: *[^ ]*\(node\|java\|python[0-9.]*\)\( \|$\)' 2>/dev/null |
		sed -n 's,.*/callgrind\.out\.\([0-9]*\).*,\1,p' | sort -u); do
		ls -d "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump" 2>/dev/null
	done
}
cleanup() {
	our_syms_in_tmp | while read -r f; do rm -f "$f"; done
	rm -rf "$tmp"
	[ -n "$shm" ] && rm -rf "$shm"
}
trap cleanup EXIT

# jit_functions PROFILE: cgjit report's count of named JIT functions (0 on any error)
jit_functions() {
	"$CGJIT" report -f json "$1" 2>/dev/null |
		perl -MJSON::XS -e 'local $/; my $d = eval { decode_json(<STDIN>) }; print $d ? $d->{kinds}{jit}{functions} : 0'
}
# the one profile valgrind wrote in DIR for the program's own process (the lowest pid)
main_profile() {
	ls "$1" | grep -E '^callgrind\.out\.[0-9]+$' | sort -t. -k3 -n | head -n 1
}
# run NAME DIR ARGS...: cgjit record in DIR, stderr kept in $tmp/NAME.err, status in $rc
run() {
	local name=$1 dir=$2
	shift 2
	local t0=$SECONDS
	(cd "$dir" && "$CGJIT" record "$@" >"$tmp/$name.out" 2>"$tmp/$name.err")
	rc=$?
	echo "# $name: exit $rc in $((SECONDS - t0))s"
}

cat >"$tmp/exit3.js" <<'EOF'
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
let t = 0;
for (let k = 0; k < 200; k++) t += work(2000);
console.log(t);
process.exit(3);
EOF
cat >"$tmp/wait.js" <<'EOF'
require('fs').writeFileSync('started', '');
setInterval(() => {}, 1000);
EOF

if command -v node >/dev/null; then
	echo "# node"
	d=$tmp/node
	mkdir -p "$d"
	cp "$top/samples/src/diff.js" "$d/"
	run node "$d" -- node diff.js
	p=$(main_profile "$d")
	pid=${p#callgrind.out.}
	expect '[ $rc = 0 ] && [ -n "$p" ] && [ -s "$d/callgrind.out.jit.$pid" ]' \
		"node: exit 0, callgrind.out.jit.$pid written beside callgrind.out.$pid in the current directory"
	n=$(jit_functions "$d/callgrind.out.jit.$pid")
	expect '[ "$n" -gt 0 ] && "$CGJIT" report -n 100 "$d/callgrind.out.jit.$pid" | grep -q "JIT JS:.checksum"' \
		"node: $n JIT functions named, checksum among them"
	expect '[ -s "$d/jit-$pid.dump" ] && [ -s "$d/jit-$pid.dump.elf" ] && ! [ -e "/tmp/perf-$pid.map" ]' \
		"node: jit-$pid.dump (from --perf-prof) and its ELF file beside the profile, no perf map"
	det="--single-threaded --predictable --hash-seed=1 --random-seed=1"
	expect 'grep -qx -- "cgjit: running node --perf-prof --interpreted-frames-native-stack $det diff.js under callgrind (deterministic: $det)" "$tmp/node.err"' \
		"node: the program's command line is shown, with the determinism flags added and named"
	expect '[ "$(cat "$tmp/node.out")" = 49213181600 ]' "node: the program's output is untouched"
	# #22.6: one line per step; valgrind's messages (==PID==) only with -v; no progress line
	# when stderr is no terminal
	expect '! grep -q "^==[0-9]*==" "$tmp/node.err" && ! grep -q "under callgrind:" "$tmp/node.err" && ! grep -q "$(printf "\r")" "$tmp/node.err"' \
		"node: no ==PID== line of valgrind's, no progress line (stderr is a file)"
	expect 'grep -qx "cgjit: .node. exited with status 0 after [0-9]* s (under valgrind)" "$tmp/node.err" && grep -qx "cgjit: collected 1 profile and 1 jitdump into \." "$tmp/node.err" && grep -qx "cgjit: wrote \./callgrind\.out\.jit\.$pid: Ir [0-9.]*% JIT, [0-9.]*% unknown ([0-9]* of [0-9]* pseudo-functions named, machine code in jit-$pid\.dump\.elf)" "$tmp/node.err" && [ "$(wc -l <"$tmp/node.err")" = 4 ]' \
		"node: four lines: running, exited, collected, wrote ($(tr '\n' '|' <"$tmp/node.err" | head -c 400))"

	# -v: valgrind's banner, its whole command line, each move, augment's whole summary;
	# --no-deterministic: no determinism flag
	run node-exit3 "$d" -v --no-deterministic -d out3 --symbols=map --dump-line=no -- node "$tmp/exit3.js"
	p=$(main_profile "$d/out3")
	pid=${p#callgrind.out.}
	n=$(jit_functions "$d/out3/callgrind.out.jit.$pid")
	expect '[ $rc = 3 ] && [ "$n" -gt 0 ] && [ -s "$d/out3/perf-$pid.map" ] && ! [ -e "/tmp/perf-$pid.map" ] && ! [ -e "$d/out3/jit-$pid.dump" ]' \
		"node --symbols=map -d out3, program exits 3: exit 3, $n JIT functions, perf-$pid.map moved out of /tmp into out3"
	expect 'grep -q "^cgjit: moved /tmp/perf-$pid.map -> out3/perf-$pid.map$" "$tmp/node-exit3.err" && grep -q "exited with status 3" "$tmp/node-exit3.err"' \
		"node exit 3, -v: each move and the status are reported"
	expect 'grep -q -- " --dump-line=no node --perf-basic-prof $tmp/exit3.js (--no-deterministic: counts may differ from run to run)$" "$tmp/node-exit3.err" && grep -q "^positions: instr$" "$d/out3/callgrind.out.$pid"' \
		"node exit 3: the valgrind option is passed on, after record's (--dump-line=no: positions: instr); --no-deterministic adds no flag"
	expect 'grep -q "^==$pid== Callgrind, a call-graph generating cache profiler" "$tmp/node-exit3.err" && grep -q "^cgjit: running valgrind --tool=callgrind " "$tmp/node-exit3.err" && grep -q "^  pseudo-functions " "$tmp/node-exit3.err"' \
		"node exit 3, -v: valgrind's banner (==PID== lines), its whole command line, augment's whole summary"
	expect '! ls "$d"/isolate-*-"$pid"-v8.log >/dev/null 2>&1 && ls "$d"/out3/isolate-*-"$pid"-v8.log >/dev/null 2>&1' \
		"node: V8's isolate-*-PID-v8.log moved out of the current directory too"

	echo "# #22.1: a second run of diff.js gives the same counts, within $DET_REST instructions"
	echo "# but for uv__async_close's spins ($DET_BOUND in all), and the README's example budget"
	echo "# (samples/src/diff-budget.yaml) holds against the first"
	run detB "$d" -q -d detB -- node diff.js
	pA=$(main_profile "$d")
	pB=$(main_profile "$d/detB")
	tA=$(sed -n 's/^totals: //p' "$d/$pA")
	tB=$(sed -n 's/^totals: //p' "$d/detB/$pB")
	# uv__async_close's self cost (cgcheck --list: part, name, file, object, self, ...)
	spin() { "$CGCHECK" --list "$1" | awk -F'\t' '$2 == "uv__async_close" { s += $5 } END { print s + 0 }'; }
	sA=$(spin "$d/$pA")
	sB=$(spin "$d/detB/$pB")
	delta=$(( ${tA:-0} - ${tB:-0} ))
	rest=$(( delta - sA + sB ))
	expect '[ $rc = 0 ] && [ -n "$tA" ] && [ -n "$tB" ] && [ ${rest#-} -le $DET_REST ] && [ ${delta#-} -le $DET_BOUND ]' \
		"node diff.js, two runs: totals $tA and $tB Ir, |difference| ${delta#-} <= $DET_BOUND; uv__async_close $sA and $sB Ir, without it ${rest#-} <= $DET_REST"
	"$CGJIT" check "$d/detB/callgrind.out.jit.${pB#callgrind.out.}" --budget "$top/samples/src/diff-budget.yaml" \
		--baseline "$d/callgrind.out.jit.${pA#callgrind.out.}" >"$tmp/budget.out" 2>&1
	rcc=$?
	expect '[ $rcc = 0 ] && grep -q "result    passed: 3 held, 0 exceeded" "$tmp/budget.out"' \
		"the example budget holds for the second run against the first (exit $rcc: $(grep -m1 result "$tmp/budget.out"))"
	# -q: only the final line that names the output
	expect '[ "$(wc -l <"$tmp/detB.err")" = 1 ] && grep -qx "cgjit: wrote detB/callgrind\.out\.jit\.${pB#callgrind.out.}: Ir [0-9.]*% JIT, [0-9.]*% unknown (.*)" "$tmp/detB.err" && [ "$(cat "$tmp/detB.out")" = 49213181600 ]' \
		"-q: stderr is exactly the final line ($(head -c 200 "$tmp/detB.err"))"

	echo "# a child process: sh runs node"
	cp "$tmp/exit3.js" "$d/"
	run child "$d" -d kids --runtime none -- sh -c 'node --perf-basic-prof exit3.js; exit 0'
	nprof=$(ls "$d/kids" | grep -cE '^callgrind\.out\.[0-9]+$')
	naug=$(ls "$d/kids" | grep -cE '^callgrind\.out\.jit\.[0-9]+$')
	kid=$(ls "$d/kids" | sed -n 's/^perf-\([0-9]*\)\.map$/\1/p')
	expect '[ $rc = 0 ] && [ "$nprof" = 2 ] && [ "$naug" = 1 ] && [ -n "$kid" ] && [ "$(jit_functions "$d/kids/callgrind.out.jit.$kid")" -gt 0 ]' \
		"child: sh and node profiled (--trace-children), node's map (pid $kid) collected by pid and its profile augmented"
	expect 'grep -q "process [0-9]* wrote no perf map or jitdump, not augmented" "$tmp/child.err"' \
		"child: sh's profile is said to be left as it is"

	echo "# SIGTERM to cgjit reaches the program; the partial profile is kept"
	mkdir -p "$d/sig"
	cp "$tmp/wait.js" "$d/sig/"
	(cd "$d/sig" && exec "$CGJIT" record -q -- node wait.js 2>"$tmp/sig.err") &
	cg=$!
	for _ in $(seq 600); do [ -e "$d/sig/started" ] && break; sleep 0.1; done
	kill -TERM "$cg"
	wait "$cg"
	rc=$?
	p=$(main_profile "$d/sig")
	pid=${p#callgrind.out.}
	expect '[ $rc = 143 ] && [ -n "$pid" ] && [ -s "$d/sig/$p" ] && ! kill -0 "$pid" 2>/dev/null && [ -e "$d/sig/jit-$pid.dump" ] && [ -s "$d/sig/callgrind.out.jit.$pid" ]' \
		"SIGTERM: exit 143 (128 + 15), the profile written, valgrind gone, the dump beside it, the profile augmented"
	expect '[ -z "$(ls -A "$d/sig" | grep "^\.cgjit-record")" ]' "the run's own profile directory is gone"

	# guard PIDFILE: kills that process of the run after 10 minutes, so that a cgjit that
	# waits for it without passing a signal on cannot hang the test (the check then fails;
	# nothing is timed). unguard: the guard is not needed any more.
	guard() {
		(trap 'kill "$s" 2>/dev/null; exit 0' TERM; sleep 600 & s=$!; wait "$s"
		 kill -KILL "$(cat "$1" 2>/dev/null)" 2>/dev/null) &
		guard_pid=$!
	}
	unguard() { kill "$guard_pid" 2>/dev/null; wait "$guard_pid" 2>/dev/null; }

	echo "# a background child that outlives the program's own process: waited for, collected"
	cat >"$d/bg.sh" <<'EOF'
node --perf-basic-prof bg.js 2>bg-node.err &
echo $! >bg.pid
exit 0
EOF
	cat >"$d/bg.js" <<'EOF'
// runs on after the shell that started it has ended: first waits for the test's go
const fs = require('fs');
fs.readFileSync('go.fifo');
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
let t = 0;
for (let k = 0; k < 200; k++) t += work(2000);
console.log('background ' + t);
EOF
	rm -f "$d/go.fifo" "$tmp/bg.errfifo" "$tmp/bg.err"
	mkfifo "$d/go.fifo" "$tmp/bg.errfifo"
	(cd "$d" && exec "$CGJIT" record -d bg --runtime none -- sh bg.sh >"$tmp/bg.out" 2>"$tmp/bg.errfifo") &
	cg=$!
	# cgjit's stderr, line by line, until it says that it waits (or ends: one that does not
	# wait; node writes its stderr elsewhere, so that the end is seen); only then may node
	# go on, so it surely outlives the shell
	exec 9<"$tmp/bg.errfifo"
	saw=0
	while IFS= read -r line <&9; do
		printf '%s\n' "$line" >>"$tmp/bg.err"
		case $line in "cgjit: 'sh' has ended; waiting for the processes it started that still run (pid "*) saw=1; break ;; esac
	done
	cat <&9 >>"$tmp/bg.err" &
	drain=$!
	timeout 600 sh -c 'echo go >"$1"' sh "$d/go.fifo"
	wait "$cg"
	rc=$?
	wait "$drain"
	exec 9<&-
	kid=$(cat "$d/bg.pid" 2>/dev/null)
	expect '[ $rc = 0 ] && [ $saw = 1 ] && grep -q "waiting for .* (pid $kid)" "$tmp/bg.err" && grep -q "^background 1199000$" "$tmp/bg.out"' \
		"background child: record says it waits for pid $kid after sh ended, node finishes its work, exit $rc"
	expect '[ -n "$kid" ] && [ -s "$d/bg/callgrind.out.$kid" ] && [ "$(jit_functions "$d/bg/callgrind.out.jit.$kid")" -gt 0 ] && ! grep -q "process $kid wrote no perf map" "$tmp/bg.err"' \
		"background child: its profile is complete and augmented ($(jit_functions "$d/bg/callgrind.out.jit.$kid") JIT functions)"
	expect '[ -s "$d/bg/perf-$kid.map" ] && ! [ -e "/tmp/perf-$kid.map" ] && [ -z "$(ls -A "$d/bg" | grep "^\.cgjit-record")" ]' \
		"background child: its perf map moved out of /tmp beside the profile, the run's directory removed"

	echo "# SIGTERM to cgjit while a grandchild runs: passed on to every process of the run"
	cat >"$d/bg2.sh" <<'EOF'
node --perf-basic-prof wait2.js &
echo $! >bg2.pid
wait
EOF
	cat >"$d/wait2.js" <<'EOF'
const fs = require('fs');
process.on('SIGTERM', () => { console.log('node got SIGTERM'); process.exit(0); });
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
let t = 0;
for (let k = 0; k < 200; k++) t += work(2000);
fs.writeFileSync('started.fifo', t + '\n');   // the test reads it: compiled and running
setInterval(() => {}, 1000);
EOF
	rm -f "$d/started.fifo"
	mkfifo "$d/started.fifo"
	exec 9<>"$d/started.fifo"   # read-write: node's open for writing never waits
	(cd "$d" && exec "$CGJIT" record -q -d bg2 --runtime none -- sh bg2.sh >"$tmp/bg2.out" 2>"$tmp/bg2.err") &
	cg=$!
	read -t 600 -r started <&9
	kill -TERM "$cg"
	guard "$d/bg2.pid"
	wait "$cg"
	rc=$?
	unguard
	exec 9<&-
	kid=$(cat "$d/bg2.pid" 2>/dev/null)
	alive=0
	[ -n "$kid" ] && kill -0 "$kid" 2>/dev/null && alive=1 && kill -KILL "$kid"
	expect '[ $rc = 143 ] && [ "$started" = 1199000 ] && [ $alive = 0 ] && grep -q "^node got SIGTERM$" "$tmp/bg2.out"' \
		"SIGTERM with a grandchild running: exit $rc (the shell's 128 + 15), node got SIGTERM too and has ended"
	expect '[ -n "$kid" ] && [ -s "$d/bg2/callgrind.out.$kid" ] && [ "$(jit_functions "$d/bg2/callgrind.out.jit.$kid")" -gt 0 ] && [ -s "$d/bg2/perf-$kid.map" ] && ! [ -e "/tmp/perf-$kid.map" ]' \
		"SIGTERM with a grandchild running: its profile collected and augmented, its map moved"

	echo "# Ctrl-C on the terminal with a process of the run outside its process group (setsid)"
	# (a background job starts with SIGINT ignored, and cgjit keeps an ignored signal
	# ignored: env --default-signal gives script and cgjit the default action back)
	if command -v script >/dev/null && command -v setsid >/dev/null && env --default-signal=INT true 2>/dev/null; then
		cat >"$d/tty.sh" <<'EOF'
setsid node --perf-basic-prof daemon.js 2>daemon.err &
exit 0
EOF
		cat >"$d/daemon.js" <<'EOF'
// a daemon: its own session, so the terminal's Ctrl-C does not reach it
const fs = require('fs');
process.on('SIGINT', () => { fs.writeFileSync('daemon.log', 'daemon got SIGINT\n'); process.exit(0); });
fs.writeFileSync('daemon.pid', String(process.pid));
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
let t = 0;
for (let k = 0; k < 200; k++) t += work(2000);
fs.writeFileSync('ready.fifo', t + '\n');
setInterval(() => {}, 1000);
EOF
		rm -f "$d/ready.fifo" "$tmp/tty.in" "$tmp/tty.outfifo" "$tmp/tty.out" "$d/daemon.log"
		mkfifo "$d/ready.fifo" "$tmp/tty.in" "$tmp/tty.outfifo"
		# script(1) gives cgjit a terminal; what the test writes to script's input is typed there
		env --default-signal=INT script -qec "cd '$d' && exec '$CGJIT' record -d tty --runtime none -- sh tty.sh" /dev/null \
			<"$tmp/tty.in" >"$tmp/tty.outfifo" 2>&1 &
		sc=$!
		exec 6>"$tmp/tty.in" 7<"$tmp/tty.outfifo" 9<>"$d/ready.fifo"
		saw=0
		while IFS= read -r line <&7; do
			printf '%s\n' "$line" >>"$tmp/tty.out"
			# (after the progress line that the terminal gets, on the same row)
			case $line in *"cgjit: 'sh' has ended; waiting for"*) saw=1; break ;; esac
		done
		cat <&7 >>"$tmp/tty.out" &
		drain=$!
		ready=""
		[ $saw = 1 ] && read -t 600 -r ready <&9
		(printf '\003' >&6) 2>/dev/null   # Ctrl-C: SIGINT to the terminal's foreground group
		guard "$d/daemon.pid"
		wait "$sc"
		rc=$?
		unguard
		wait "$drain"
		exec 6>&- 7<&- 9<&-
		kid=$(cat "$d/daemon.pid" 2>/dev/null)
		alive=0
		[ -n "$kid" ] && kill -0 "$kid" 2>/dev/null && alive=1 && kill -KILL "$kid"
		expect '[ $saw = 1 ] && [ $rc = 0 ] && [ $alive = 0 ] && [ "$(cat "$d/daemon.log" 2>/dev/null)" = "daemon got SIGINT" ]' \
			"Ctrl-C while record waits for a process in another session: cgjit passes SIGINT on to it, exit $rc"
		expect '[ -n "$kid" ] && [ -s "$d/tty/callgrind.out.$kid" ] && [ "$(jit_functions "$d/tty/callgrind.out.jit.$kid")" -gt 0 ] && ! [ -e "/tmp/perf-$kid.map" ]' \
			"... its profile collected and augmented, its map moved"
	else
		skip "Ctrl-C on a terminal needs script(1), setsid(1) and env --default-signal"
	fi
else
	notok "node is needed for the node runs (nodejs)"
fi

if command -v javac >/dev/null && command -v java >/dev/null; then
	echo "# java"
	d=$tmp/java
	mkdir -p "$d"
	cat >"$d/T.java" <<'EOF'
public class T {
    static int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i % 7; return s; }
    public static void main(String[] a) {
        long t = 0;
        for (int k = 0; k < 2000; k++) t += work(1000);
        System.out.println(t);
        System.exit(Integer.parseInt(a[0]));
    }
}
EOF
	(cd "$d" && javac -d . T.java)
	# without cgjit's JVMTI agent: the JVM's perf map at exit. record adds -Xbatch (#22.1):
	# methods compile in the foreground, so work() is compiled however slowly valgrind
	# runs the JIT thread (a background compilation could end after the program)
	CGJIT_JVMTI_AGENT= run java "$d" -d out -- java -cp . T 3
	p=$(main_profile "$d/out")
	pid=${p#callgrind.out.}
	n=$(jit_functions "$d/out/callgrind.out.jit.$pid")
	expect '[ $rc = 3 ] && [ "$n" -gt 0 ] && [ -s "$d/out/perf-$pid.map" ] && ! [ -e "/tmp/perf-$pid.map" ]' \
		"java without the agent: exit 3 kept, $n JIT functions named, perf-$pid.map (DumpPerfMapAtExit) moved beside the profile"
	expect '"$CGJIT" report -n 200 "$d/out/callgrind.out.jit.$pid" | grep -q "JIT int T\.work(int)"' \
		"java without the agent: int T.work(int) is named"
	expect 'grep -q -- " java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -Xbatch .* -cp \. T 3 under callgrind (deterministic: -Xbatch " "$tmp/java.err"' \
		"java: -Xbatch and the other determinism flags added, after the perf map's"
	# with it (beside the cgjit binary, as make builds it): a jitdump, lines and code
	agent=$(dirname "$CGJIT")/libcgjit-jvmti.so
	if [ -f "$agent" ]; then
		mkdir -p "$tmp/elsewhere"
		JITDUMPDIR=$tmp/elsewhere run java-agent "$d" -d out2 -- java -Xbatch -cp . T 0
		p=$(main_profile "$d/out2")
		pid=${p#callgrind.out.}
		expect '[ $rc = 0 ] && grep -q -- "-agentpath:.*libcgjit-jvmti.so=dir=\. -XX:-UsePerfData .* -Xbatch -cp \. T 0 under callgrind (deterministic: -XX:-UsePerfData .*; yours: -Xbatch)$" "$tmp/java-agent.err" && [ -s "$d/out2/jit-$pid.dump" ] && [ -s "$d/out2/jit-$pid.dump.elf" ] && ! [ -e "$d/jit-$pid.dump" ] && [ -z "$(ls "$tmp/elsewhere")" ]' \
			"java with the agent beside cgjit: -agentpath added (dir=. over \$JITDUMPDIR), jit-$pid.dump and its ELF file beside the profile"
		expect '"$CGJIT" report -n 200 "$d/out2/callgrind.out.jit.$pid" | grep -q "JIT int T\.work(int)  \[jit-$pid.dump.elf, T.java\]"' \
			"java with the agent: int T.work(int) is named, with its source file T.java"
	else
		skip "no $agent (no JDK when cgjit was built): java with the agent"
	fi
else
	skip "no java and javac: the java runs (a JDK is optional: default-jdk-headless)"
fi

# the determinism settings record adds for CPython, unless they are set: not here
unset PYTHONHASHSEED PYTHONDONTWRITEBYTECODE
py313=""
for p in "$HOME"/.pyenv/versions/3.13.*/bin/python3.13; do [ -x "$p" ] && py313=$p; done
if [ -n "$py313" ]; then
	echo "# CPython 3.13 ($py313)"
	d=$tmp/py
	mkdir -p "$d"
	printf 'def work(n):\n    return sum(i %% 7 for i in range(n))\nprint(work(20000))\n' >"$d/p.py"
	# /dev/shm is another file system: the dump is copied there, then removed from /tmp
	if shm=$(mktemp -d /dev/shm/cgjit-record.XXXXXX 2>/dev/null); then out=$shm; else out=$d/out; fi
	run py "$d" -d "$out" -- "$py313" p.py
	p=$(main_profile "$out")
	pid=${p#callgrind.out.}
	n=$(jit_functions "$out/callgrind.out.jit.$pid")
	expect '[ $rc = 0 ] && [ "$n" -gt 0 ] && [ -s "$out/jit-$pid.dump" ] && ! [ -e "/tmp/jit-$pid.dump" ]' \
		"python3.13: $n JIT functions (py:: trampolines), jit-$pid.dump (-X perf_jit) moved from /tmp to $out"
	expect '"$CGJIT" report -n 200 "$out/callgrind.out.jit.$pid" | grep -q "JIT py::work"' "python3.13: py::work is named"

	echo "# python3 without a version in its name: asked with --version"
	mkdir -p "$tmp/pybin"
	ln -s "$py313" "$tmp/pybin/python3"
	PATH=$tmp/pybin:$PATH run py3 "$d" -d out3 -- python3 p.py
	p=$(main_profile "$d/out3")
	expect '[ $rc = 0 ] && grep -qx -- "cgjit: running PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 python3 -X perf_jit p.py under callgrind (deterministic: PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1)" "$tmp/py3.err" && [ -s "$d/out3/callgrind.out.jit.${p#callgrind.out.}" ]' \
		"python3 that is 3.13: -X perf_jit, PYTHONHASHSEED=0 and PYTHONDONTWRITEBYTECODE=1, augmented"
	PYTHONHASHSEED=5 PATH=$tmp/pybin:$PATH run py3seed "$d" -q --no-augment -d out4 -- python3 p.py
	expect '[ $rc = 0 ] && grep -qx "cgjit: wrote out4/callgrind\.out\.[0-9]* with out4/jit-[0-9]*\.dump (not augmented: --no-augment)" "$tmp/py3seed.err" && [ "$(wc -l <"$tmp/py3seed.err")" = 1 ]' \
		"python3 -q --no-augment: the final line names the profile and its dump"
else
	skip "no CPython 3.13 in ~/.pyenv/versions/3.13.*: the python runs"
fi
# a python3 that says it is 3.11 (Debian 12's own is): a stand-in, so that this runs
# everywhere; it must not be run for the program either
mkdir -p "$tmp/py311"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "Python 3.11.2"; exit 0; }\ntouch "%s/py311/ran"\n' "$tmp" >"$tmp/py311/python3"
chmod +x "$tmp/py311/python3"
# (--runtime python: the stand-in is a script, which record refuses under the runtime's
# own name; the version is still asked, python3 names none)
PATH=$tmp/py311:$PATH run py311 "$tmp" --runtime python -- python3 -c pass
expect '[ $rc = 1 ] && grep -q "^cgjit: python3: CPython 3.11 cannot write a perf map: -X perf needs 3.12 or later" "$tmp/py311.err" && ! ls "$tmp"/callgrind.out.* >/dev/null 2>&1 && ! [ -e "$tmp/py311/ran" ]' \
	"python3 that is 3.11: exit 1, says -X perf needs 3.12, runs nothing"

echo "# a shared (sticky) output directory: another user's links under the names augment writes"
if [ "$(id -u)" = 0 ] && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	chmod 755 "$tmp"   # for nobody
	sd=$tmp/shared
	mkdir -p "$sd/out"
	chmod 1777 "$sd/out"
	for f in secret secret2; do echo "root only" >"$tmp/$f"; chmod 600 "$tmp/$f"; done
	secrets() { cat "$tmp/secret" "$tmp/secret2" | md5sum; stat -c %a%U "$tmp/secret" "$tmp/secret2"; }
	sbefore=$(secrets)
	# The program tells its pid through a FIFO and waits on another until the links are
	# planted; then it leaves a jitdump of its pid in the current directory, which record
	# collects: augment then writes out/callgrind.out.jit.PID and out/jit-PID.dump.elf.
	cat >"$sd/plant.sh" <<'EOS'
echo $$ >pid.fifo
read go <go.fifo
cp "$1" "jit-$$.dump"
EOS
	# planted NAME LINK-TEMPLATE...: record with nobody's links (PID in the template
	# replaced) to the root-only files; sets rc and rpid
	planted() {
		local name=$1 i=0 l
		shift
		rm -f "$sd/pid.fifo" "$sd/go.fifo"
		mkfifo "$sd/pid.fifo" "$sd/go.fifo"
		exec 7<>"$sd/pid.fifo" 8<>"$sd/go.fifo"   # read-write: opening never blocks
		(cd "$sd" && exec "$CGJIT" record -q -d out --runtime none -- sh plant.sh "$top/tests/bad/good.dump" \
			>"$tmp/$name.out" 2>"$tmp/$name.err") &
		local cg=$!
		rpid=""
		read -t 300 -r rpid <&7
		for l in "$@"; do
			i=$((i + 1))
			setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$tmp/secret$([ $i = 2 ] && echo 2)" "$sd/out/${l//PID/$rpid}"
		done
		echo go >&8
		wait "$cg"
		rc=$?
		exec 7<&- 8<&-
	}
	planted planted-elf jit-PID.dump.elf
	expect '[ -n "$rpid" ] && [ $rc = 1 ] && grep -q "^cgjit: augmenting out/callgrind.out.$rpid failed: .*out/jit-$rpid.dump.elf: is a symbolic link of another user (uid [0-9]*) in the shared directory .*: not followed" "$tmp/planted-elf.err" && [ "$(secrets)" = "$sbefore" ]' \
		"record -d DIR (mode 1777): another user's link as jit-PID.dump.elf: exit $rc, not followed, the root-only file untouched ($(grep -m1 augmenting "$tmp/planted-elf.err" | head -c 250))"
	expect '[ -L "$sd/out/jit-$rpid.dump.elf" ] && [ ! -e "$sd/out/callgrind.out.jit.$rpid" ] && [ -s "$sd/out/callgrind.out.$rpid" ] && [ -s "$sd/out/jit-$rpid.dump" ] && ! ls -A "$sd/out" | grep -q cgjit-tmp' \
		"... the link stays, no augmented profile and no temporary; the profile and the dump were collected"
	planted planted-prof callgrind.out.jit.PID jit-PID.dump.elf
	expect '[ -n "$rpid" ] && [ $rc = 1 ] && grep -q "out/callgrind.out.jit.$rpid: is a symbolic link of another user" "$tmp/planted-prof.err" && [ "$(secrets)" = "$sbefore" ] && [ -L "$sd/out/callgrind.out.jit.$rpid" ] && ! ls -A "$sd/out" | grep -q cgjit-tmp' \
		"record -d DIR (mode 1777): another user's link as callgrind.out.jit.PID: exit $rc, not followed, the root-only files untouched"
	setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$tmp" "$sd/out/elsewhere"
	(cd "$sd" && "$CGJIT" record -q -d out/elsewhere --runtime none -- sh -c 'exit 0' 2>"$tmp/planted-dir.err")
	rc=$?
	expect '[ $rc = 1 ] && grep -q "^cgjit: output directory out/elsewhere: is a symbolic link of another user" "$tmp/planted-dir.err" && ! ls "$tmp" | grep -q "^callgrind.out"' \
		"record -d naming another user's link in a shared directory: exit $rc before anything runs"
else
	skip "a shared output directory: planting another user's links needs root and setpriv"
fi

echo "# errors"
mkdir -p "$tmp/nodeonly" "$tmp/vgonly"
command -v node >/dev/null && ln -s "$(command -v node)" "$tmp/nodeonly/node"
ln -s "$(command -v valgrind)" "$tmp/vgonly/valgrind"
PATH=$tmp/nodeonly run novg "$tmp" -- node x.js
expect '[ $rc = 127 ] && [ "$(cat "$tmp/novg.err")" = "cgjit: valgrind is not installed: '"'"'valgrind'"'"' not found on PATH (Debian: apt-get install valgrind)" ]' \
	"valgrind missing: exit 127 and says so"
PATH=$tmp/vgonly run nonode "$tmp" -- node x.js
expect '[ $rc = 127 ] && [ "$(cat "$tmp/nonode.err")" = "cgjit: node is not installed: '"'"'node'"'"' not found on PATH" ]' \
	"node missing: exit 127, 'node is not installed'"
PATH=$tmp/vgonly run nonode2 "$tmp" --runtime node -- nodejs-22 x.js
expect '[ $rc = 127 ] && grep -q "^cgjit: node is not installed: '"'"'nodejs-22'"'"' not found on PATH$" "$tmp/nonode2.err"' \
	"--runtime node with a command not on PATH: exit 127, names the runtime and the command"
run nocmd "$tmp" -- ./no-such-program
expect '[ $rc = 127 ] && [ "$(cat "$tmp/nocmd.err")" = "cgjit: '"'"'./no-such-program'"'"' not found or not executable" ]' \
	"a command that does not exist: exit 127"
run unknown "$tmp" -- /bin/true
expect '[ $rc = 2 ] && grep -q "^cgjit: /bin/true: cannot tell which JIT runtime '"'"'true'"'"' is: name it with --runtime NAME" "$tmp/unknown.err"' \
	"an unknown runtime: exit 2, asks for --runtime"
mkdir -p "$tmp/nomap"
run nomap "$tmp/nomap" --runtime node -- /bin/true
p=$(main_profile "$tmp/nomap")
expect '[ $rc = 1 ] && grep -q "^cgjit: node wrote no perf map or jitdump: expected $tmp/nomap/jit-${p#callgrind.out.}.dump (from --perf-prof) for '"'"'/bin/true'"'"', pid ${p#callgrind.out.}$" "$tmp/nomap.err" && [ -s "$tmp/nomap/$p" ] && ! ls "$tmp/nomap"/callgrind.out.jit.* >/dev/null 2>&1' \
	"no map written (--runtime node -- /bin/true): exit 1, names the file expected and where; the profile stays"
run nomap-fail "$tmp/nomap" -q --runtime none -- sh -c 'exit 5'
expect '[ $rc = 5 ] && grep -q "^cgjit: no process of the run wrote a perf map or jitdump" "$tmp/nomap-fail.err"' \
	"no map and the program exits 5: the program's status wins (5), the missing map is still said"
# a process of the run killed by SIGKILL from another one (valgrind turns a process's own
# kill -9 into an orderly exit): callgrind never writes its profile, left with 0 bytes
mkdir -p "$tmp/killed"
mkfifo "$tmp/killed/pid.fifo" "$tmp/killed/hold.fifo"
cat >"$tmp/killed/killed.sh" <<'EOF'
sh -c 'echo $$ >pid.fifo; read x <hold.fifo' &
read k <pid.fifo
echo "$k" >killed.pid
kill -KILL "$k"
wait
exit 0
EOF
run killed "$tmp/killed" -d out --runtime none -- sh killed.sh
kpid=$(cat "$tmp/killed/killed.pid" 2>/dev/null)
expect '[ -n "$kpid" ] && grep -q "^cgjit: process $kpid left an empty profile (it was killed before callgrind could write it, by SIGKILL?): nothing to collect or augment$" "$tmp/killed.err" && ! grep -q "process $kpid wrote no perf map" "$tmp/killed.err" && ! ls -A "$tmp/killed/out" | grep -q "callgrind.out.$kpid" && [ "$(ls "$tmp/killed/out" | grep -c "^callgrind.out")" = 1 ]' \
	"a process of the run killed by SIGKILL: its empty profile is said, neither moved nor reported as not augmented (exit $rc)"
mkdir -p "$tmp/threads"
run threads "$tmp/threads" -d out --separate-threads=yes --runtime none -- sh -c 'exit 0'
expect '[ "$(ls "$tmp/threads/out" | grep -c "^callgrind\.out\.[0-9]*-01$")" = 1 ] && ! ls "$tmp/threads/out" | grep -q "^callgrind\.out\.[0-9]*$" && ! grep -q "empty profile" "$tmp/threads.err"' \
	"--separate-threads=yes: the profile is callgrind.out.PID-01; the empty callgrind.out.PID beside it is dropped without a word"
run usage "$tmp" --tool=memcheck -- node x.js
expect '[ $rc = 2 ] && grep -q "^usage: cgjit record" "$tmp/usage.err"' "--tool=memcheck: usage error (2)"
# (a stand-in java on PATH: the option is refused before anything runs, JDK or not;
# --runtime java, since the stand-in is a script)
mkdir -p "$tmp/fakejava"
printf '#!/bin/sh\nexit 0\n' >"$tmp/fakejava/java"
chmod +x "$tmp/fakejava/java"
PATH=$tmp/fakejava:$PATH CGJIT_JVMTI_AGENT= run usage2 "$tmp" --runtime java --symbols=jitdump -- java Prog
expect '[ $rc = 1 ] && grep -q "^cgjit: --symbols: java writes a jitdump only with cgjit.s JVMTI agent" "$tmp/usage2.err"' \
	"--symbols=jitdump for java without the agent: exit 1, says what is missing"
echo "# #22.6: a version manager's shim, or a script, in place of the runtime: named, refused"
mkdir -p "$tmp/home/.pyenv/shims" "$tmp/wrap"
printf '#!/usr/bin/env bash\nset -e\ntouch "%s/shim-ran"\nexec pyenv exec "$0" "$@"\n' "$tmp" >"$tmp/home/.pyenv/shims/python3"
printf '#!/bin/sh\ntouch "%s/shim-ran"\nexec /usr/bin/node "$@"\n' "$tmp" >"$tmp/wrap/node"
chmod +x "$tmp/home/.pyenv/shims/python3" "$tmp/wrap/node"
PATH=$tmp/home/.pyenv/shims:$PATH run shim "$tmp" -- python3 -c pass
expect '[ $rc = 2 ] && grep -qx "cgjit: python3: is a pyenv shim ($tmp/home/.pyenv/shims/python3, a bash script), not python itself: .*; give the program itself, \"\$(pyenv which python3)\", or --runtime python to record through the shim anyway" "$tmp/shim.err" && ! [ -e "$tmp/shim-ran" ] && ! ls "$tmp"/callgrind.out.* >/dev/null 2>&1' \
	"a pyenv shim as python3: exit 2 before anything runs, named, with pyenv which python3 ($(head -c 150 "$tmp/shim.err"))"
PATH=$tmp/wrap:$PATH run wrapper "$tmp" -- node x.js
expect '[ $rc = 2 ] && grep -qx "cgjit: node: is a script ($tmp/wrap/node, run by sh), not node itself: .*" "$tmp/wrapper.err" && ! [ -e "$tmp/shim-ran" ]' \
	"a #! script named node: exit 2, named as a script run by sh"

echo "# #22.6: the progress line, on a terminal only (script(1) gives one)"
if command -v script >/dev/null; then
	mkdir -p "$tmp/pty"
	(cd "$tmp/pty" && script -qec "'$CGJIT' record -d out --runtime none -- sh -c 'exit 0'" /dev/null </dev/null >"$tmp/pty.out" 2>&1)
	cr=$(printf '\r')
	expect 'grep -q "${cr}cgjit: 0 s under callgrind: [0-9]* process" "$tmp/pty.out" && grep -q "$(printf "\r\033\\[K")cgjit: .sh. exited with status 0" "$tmp/pty.out"' \
		"under a terminal: the progress line is drawn, and cleared before the next line"
else
	skip "the progress line on a terminal needs script(1)"
fi

"$CGJIT" record --help >"$tmp/help" 2>&1
expect '[ $? = 0 ] && grep -q "^usage: cgjit record" "$tmp/help"' "--help"

left=$(our_syms_in_tmp)
expect '[ -z "$left" ]' "no perf map or jitdump left in /tmp by any run (${left:-none})"
finish
