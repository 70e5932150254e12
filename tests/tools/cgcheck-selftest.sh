#!/bin/sh
# Self-test for the cgcheck oracle: feeds it hand-written callgrind files
# from cases/ and compares its verdicts (exit code and a problem pattern on
# stderr) with the expected ones.  Last line: "N passed, N failed, N skipped".
# Uses $CGCHECK_SELFTEST or else $CGCHECK if set (make check-asan sets the first to the
# sanitized checker, the second to the optimised one the other scripts run), otherwise
# builds cgcheck.c into a temporary dir.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cases=$here/cases
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgcheck-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ -n "${CGCHECK_SELFTEST:-}" ]; then
	cg=$CGCHECK_SELFTEST
elif [ -n "${CGCHECK:-}" ]; then
	cg=$CGCHECK
else
	cg=$tmp/cgcheck
	${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$cg" "$here/cgcheck.c" || {
		echo "cgcheck does not build"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	}
fi

pass=0
fail=0
skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

# expect NAME FILE RC [ERE that must occur on stderr]
expect() {
	name=$1 file=$2 want=$3 pat=${4:-}
	"$cg" "$file" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		bad "$name" "exit $rc, expected $want; stderr: $(head -3 "$tmp/err")"
	elif [ "$want" -eq 0 ] && [ -s "$tmp/err" ]; then
		bad "$name" "passed but wrote to stderr: $(head -3 "$tmp/err")"
	elif [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/err"; then
		bad "$name" "stderr lacks /$pat/: $(head -3 "$tmp/err")"
	else
		ok "$name"
	fi
}

# accepted files
expect good "$cases/good.cg" 0
expect good-crlf "$cases/good-crlf.cg" 0
expect multipart "$cases/multipart.cg" 0
expect refbinding "$cases/refbinding.cg" 0

# rejected files
expect split "$cases/split.cg" 1 \
	"SPLIT function 'jit_A'.*file '\?\?\?' object '\?\?\?'.*body is under file 'jit.perfmap' object '/tmp/jit-perfmap.so'"
expect obonly "$cases/obonly.cg" 1 \
	"SPLIT function 'jit_A'.*file 'jit.perfmap' object '\?\?\?'.*object '/tmp/jit.so'"
expect undef "$cases/undef.cg" 1 "undefined function id \(7\) in cfn="
expect undef-part2 "$cases/undef-part2.cg" 1 "undefined object id \(1\) in ob="
expect nocost "$cases/nocost.cg" 1 "^[^ ]*nocost.cg:8: calls= not followed by its cost line"
expect totals "$cases/totals.cg" 1 "event Dr: sum of self cost 1 != totals: 2"
expect redef "$cases/redef.cg" 1 "redefinition of function id \(2\)"
expect nofn "$cases/nofn.cg" 1 "Function not specified"
expect tab "$cases/tab.cg" 1 "TAB separator"
expect leadws "$cases/leadws.cg" 1 "leading whitespace"
expect truncated "$cases/truncated.cg" 1 "no totals: line"

# generated: NUL byte, missing final newline, calls= as the last line
printf '# callgrind format\nevents: Ir\nfn=main\n1 1\0\ntotals: 1\n' >"$tmp/nul.cg"
expect nul "$tmp/nul.cg" 1 "NUL byte"
printf 'events: Ir\nfn=main\n1 1\ntotals: 1' >"$tmp/nonl.cg"
expect no-newline "$tmp/nonl.cg" 1 "no newline"
printf 'events: Ir\nfn=main\n1 1\ncfn=f\ncalls=1 1\ntotals: 1\n' >"$tmp/dangling.cg"
expect dangling-calls "$tmp/dangling.cg" 1 ":5: calls= not followed by its cost line"

# outputs: --list, --totals, --inclusive on good.cg
# check NAME EXPECTED-FILE OPTION
check() {
	if "$cg" "$3" "$cases/good.cg" >"$tmp/got" 2>"$tmp/err" && cmp -s "$tmp/got" "$2"; then
		ok "$1"
	else
		bad "$1" "output differs: $(diff "$2" "$tmp/got" | head -5)"
	fi
}
T=$(printf '\t')
cat >"$tmp/want" <<EOF
1${T}helper${T}inl.h${T}/usr/bin/prog${T}5 0${T}1${T}1
1${T}jit_A${T}jit.perfmap${T}/tmp/jit.so${T}100 4${T}1${T}2
1${T}main${T}prog.c${T}/usr/bin/prog${T}28 3${T}0${T}0
EOF
check list "$tmp/want" --list
printf '1\tIr\t133\n1\tDr\t7\n' >"$tmp/want"
check totals-output "$tmp/want" --totals
cat >"$tmp/want" <<EOF
1${T}helper${T}inl.h${T}/usr/bin/prog${T}5 0
1${T}jit_A${T}jit.perfmap${T}/tmp/jit.so${T}100 4
1${T}main${T}prog.c${T}/usr/bin/prog${T}133 7
EOF
check inclusive "$tmp/want" --inclusive

# --spans: one row per fn= block of a function outside ???, also a function's second block
printf '1\tBuiltins_X\t???\t/bin/node\t2000\t2010\n1\tBuiltins_X\t???\t/bin/node\t2030\t2030\n' >"$tmp/want"
if "$cg" --spans "$cases/spans.cg" >"$tmp/got" 2>"$tmp/err" && cmp -s "$tmp/got" "$tmp/want"; then
	ok spans-per-block
else
	bad spans-per-block "output differs: $(diff "$tmp/want" "$tmp/got" | head -5)"
fi

# --jit-invariants RANGES IN OUT on hand-written pairs (cases/jit-*, ranges cases/jit.ranges)
# jit NAME IN OUT RC ERE...: exit RC, nothing on stderr, every ERE matches a line of stdout,
# and no violation line when RC is 0
jit() {
	name=$1 in=$2 out=$3 want=$4
	shift 4
	"$cg" --jit-invariants "$cases/jit.ranges" "$cases/$in" "$cases/$out" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		bad "$name" "exit $rc, expected $want: $(grep -v '^fn' "$tmp/out" | head -3) $(head -3 "$tmp/err")"
		return
	elif [ -s "$tmp/err" ]; then
		bad "$name" "wrote to stderr: $(head -3 "$tmp/err")"
		return
	elif [ "$want" -eq 0 ] && grep -q '^violation' "$tmp/out"; then
		bad "$name" "$(grep '^violation' "$tmp/out" | head -3)"
		return
	fi
	for pat; do
		if ! grep -Eq -- "$pat" "$tmp/out"; then
			bad "$name" "stdout lacks /$pat/: $(head -5 "$tmp/out")"
			return
		fi
	done
	ok "$name"
}
# the prologue's return to jit_F+0x14 found and dropped, its cost taken off jit_F's call
# to the prologue; jit_G reached by a jump gets a synthetic call
jit jit-return-dropped jit-ret.in.cg jit-ret.out.cg 0 \
	"^return${T}1${T}0x10000014${T}jit_F${T}Builtins_Prologue${T}0x2005${T}0x1000000f${T}3${T}991\$" \
	"^fn${T}1${T}jit_F${T}incl=1030${T}in=2021${T}ret=991${T}synth=0${T}count=3${T}in-count=6${T}ret-count=3${T}synth-count=0${T}self=909${T}in-self=909${T}calls=81${T}in-calls=1072${T}ret-taken=991${T}synth-out=40${T}fn-in=2021${T}fn-self=949${T}fn-calls=1072\$" \
	"^fn${T}1${T}jit_G${T}incl=40${T}in=0${T}ret=0${T}synth=40${T}count=1${T}" \
	"^summary${T}parts=1${T}functions=2${T}returns=1${T}violations=0\$"
# the same input with the cycle jit_F -> Builtins_Prologue -> jit_F kept (the bug)
jit jit-return-kept jit-ret.in.cg jit-ret-cycle.out.cg 1 \
	"^violation${T}inv1${T}1${T}jit_F${T}Ir: inclusive 2021 != 1030 = calls into it in the input 2021 - returns recorded as calls 991 \+ synthetic calls into it 0\$" \
	"^violation${T}inv2${T}1${T}jit_F${T}Ir: self 909 \+ calls to others 1072 = 1981 > 990 = " \
	"^violation${T}inv3${T}1${T}jit_F${T}called 6 times > 3 = " \
	"^summary${T}parts=1${T}functions=2${T}returns=1${T}violations=3\$"
# a synthetic call lighter than what moved: jit_F's callers pay more than its self cost and
# callees, jit_G's less, where the input's functions added up (inv5; README rule 5)
jit jit-synthetic-call-low jit-ret.in.cg jit-ret-synth-low.out.cg 1 \
	"^violation${T}inv5${T}1${T}jit_F${T}Ir: its callers pay 1030, its self cost 909 \+ calls to others 81 \+ synthetic calls 30 = 1020; in the input its functions added up \(2021\)\$" \
	"^violation${T}inv5${T}1${T}jit_G${T}Ir: its callers pay 30, its self cost 40 \+ calls to others 0 \+ synthetic calls 0 = 40; " \
	"^summary${T}parts=1${T}functions=2${T}returns=1${T}violations=2\$"
# one JIT name as two functions (two files), both with a body (inv6; README rule 3)
jit jit-identity-split jit-ret.in.cg jit-ret-two-ids.out.cg 1 \
	"^violation${T}inv6${T}0${T}jit_G${T}'jit_G' is two functions: in file '\?\?\?' of '/tmp/perf-1.map' and in file 'other.js' of '/tmp/perf-1.map'\$" \
	"^summary${T}parts=1${T}functions=2${T}returns=1${T}violations=1\$"
# recursion through a builtin back to jit_F's start, and a real call to jit_F+0x14 (more
# calls than jit_F's calls to the builtin): no return recorded as a call, all calls stay
jit jit-recursion jit-rec.in.cg jit-rec.out.cg 0 \
	"^fn${T}1${T}jit_F${T}incl=58${T}in=58${T}ret=0${T}synth=0${T}count=4${T}in-count=4${T}" \
	"^summary${T}parts=1${T}functions=1${T}returns=0${T}violations=0\$"
# ... and an output that dropped that real call (jit_F no longer adds up)
jit jit-recursion-call-dropped jit-rec.in.cg jit-rec-dropped.out.cg 1 \
	"^violation${T}inv1${T}1${T}jit_F${T}Ir: inclusive 54 != 58 = calls into it in the input 58 - returns recorded as calls 0 \+ synthetic calls into it 0\$" \
	"^violation${T}inv5${T}1${T}jit_F${T}Ir: its callers pay 54, its self cost 22 \+ calls to others 36 \+ synthetic calls 0 = 58; " \
	"^summary${T}parts=1${T}functions=1${T}returns=0${T}violations=2\$"
# jit_G's own line inside the span of an ELF function (Builtins_E) stays jit_G's: rule 9
# takes only code of another JIT function, reached by a jump
jit jit-rule9-own-code jit-r9own.in.cg jit-r9own.out.cg 0 \
	"^fn${T}1${T}jit_G${T}incl=0${T}.*${T}self=10${T}in-self=10${T}" \
	"^summary${T}parts=1${T}functions=1${T}returns=0${T}violations=0\$"
"$cg" --jit-invariants "$cases/jit.ranges" "$cases/jit-ret.in.cg" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then ok jit-usage; else bad jit-usage "one profile exited $rc, not 2"; fi
printf '0x10 0x20 0x10 a\n0x20 0x8 0x20 b\n' >"$tmp/overlap.ranges"
"$cg" --jit-invariants "$tmp/overlap.ranges" "$cases/jit-ret.in.cg" "$cases/jit-ret.out.cg" >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q overlap "$tmp/err"; then ok jit-ranges-overlap; else bad jit-ranges-overlap "exit $rc: $(cat "$tmp/err")"; fi

# usage errors exit 2
"$cg" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then ok usage; else bad usage "no-argument call exited $rc, not 2"; fi
"$cg" --bogus "$cases/good.cg" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then ok usage-option; else bad usage-option "unknown option exited $rc, not 2"; fi

# real callgrind output must be accepted (skipped without valgrind)
if command -v valgrind >/dev/null 2>&1; then
	real() { # real NAME VALGRIND-OPTIONS...
		name=$1
		shift
		if ! valgrind -q --tool=callgrind --callgrind-out-file="$tmp/$name.out" "$@" \
			/bin/true >/dev/null 2>"$tmp/vg.err"; then
			bad "real-$name" "valgrind failed: $(head -3 "$tmp/vg.err")"
			return
		fi
		expect "real-$name" "$tmp/$name.out" 0
	}
	real instr --dump-instr=yes
	real callers --dump-instr=yes --separate-callers=2 --collect-jumps=yes
	real parts --dump-instr=yes --collect-jumps=yes --dump-every-bb=20000 --combine-dumps=yes
	real plain --dump-instr=yes --separate-callers=2 --compress-strings=no --compress-pos=no
	# the same function keys with and without name compression
	if [ -s "$tmp/callers.out" ] && [ -s "$tmp/plain.out" ]; then
		"$cg" --list "$tmp/callers.out" | cut -f1-4 >"$tmp/k1"
		"$cg" --list "$tmp/plain.out" | cut -f1-4 >"$tmp/k2"
		if [ -s "$tmp/k1" ] && cmp -s "$tmp/k1" "$tmp/k2"; then
			ok real-keys
		else
			bad real-keys "compressed and uncompressed profiles give other keys"
		fi
	fi
else
	skipped=$((skipped + 1))
	echo "skip real callgrind profiles: no valgrind"
fi

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
