#!/bin/sh
# make-profiles.sh OUTDIR [VARIANT...] - build jitprog and profile it under
# callgrind in every variant cgjit must handle (or only the VARIANTs named, e.g.
# "jitdump-instr jitdump-line"). Writes one directory per variant:
#   OUTDIR/<variant>/callgrind.out.<pid>[.<n>]  the profile(s)
#   OUTDIR/<variant>/perf-<pid>.map             the perf map of the same run
#   OUTDIR/<variant>/perf-<pid>.overlap.map     the same plus stale/duplicate lines
#   OUTDIR/<variant>/jit-<pid>.dump             jitdump variants only (jitdump-*):
#                                               the jitdump of the same run, made
#                                               with --move --reuse (no overlap map);
#                                               and trampoline (--trampoline)
#   OUTDIR/<variant>/jitprog.out                jitprog's stdout (pid, base, layout)
#   OUTDIR/<variant>/COMMAND                    the command that made them
# Environment: JITPROG_REPS (default 200) = how often main calls A;
#              VALGRIND (default valgrind); CC as for make.
# Runs one valgrind at a time; each run takes well under 3 s.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 OUTDIR [VARIANT...]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
only=" $* "
all_variants=" instr line jumps callers2 nocompress cachesim parts parts-files recs10 jitdump-instr jitdump-line trampoline "
for v in $only; do
	case $all_variants in
	*" $v "*) ;;
	*) echo "$0: unknown variant '$v' (known:$all_variants)" >&2; exit 2 ;;
	esac
done
reps=${JITPROG_REPS:-200}
valgrind=${VALGRIND:-valgrind}

command -v "$valgrind" >/dev/null 2>&1 || { echo "$0: '$valgrind' not found" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/jitprog.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
make -s -C "$here" OUT="$work/jitprog"

# jitprog's options besides -n (a run with --jitdump writes into the variant's
# directory: "--jitdump ." in COMMAND)
jp_args="--overlap-map"

# variant name, then callgrind options; jitprog gets -n $reps $jp_args
run() {
	name=$1
	shift
	[ "$only" = "  " ] || case $only in *" $name "*) ;; *) return 0 ;; esac
	d=$out/$name
	rm -rf "$d"
	mkdir -p "$d"
	# shellcheck disable=SC2086 # jp_args holds several words
	set -- "$@" ./jitprog -n "$reps" $jp_args
	echo "PERFMAP_DIR=. valgrind --tool=callgrind $*" | sed 's/--jitdump [^ ]*/--jitdump ./' >"$d/COMMAND"
	if ! (cd "$work" && PERFMAP_DIR=$d "$valgrind" --tool=callgrind \
		--callgrind-out-file="$d/callgrind.out.%p" "$@" \
		>"$d/jitprog.out" 2>"$work/log"); then
		cat "$work/log" >&2
		echo "$0: variant '$name' failed" >&2
		exit 1
	fi
	pid=$(sed -n 's/^pid //p' "$d/jitprog.out")
	base=$(sed -n 's/^base //p' "$d/jitprog.out")
	grep -q '^reps .* result ok$' "$d/jitprog.out" || { echo "$0: $name: jitprog computed wrong results" >&2; exit 1; }
	[ -s "$d/perf-$pid.map" ] || { echo "$0: $name: no perf-$pid.map" >&2; exit 1; }
	ls "$d"/callgrind.out."$pid"* >/dev/null 2>&1 || { echo "$0: $name: no callgrind.out.$pid" >&2; exit 1; }
	grep -q "^pid: $pid\$" "$d/callgrind.out.$pid" || { echo "$0: $name: pid mismatch" >&2; exit 1; }
	[ "$base" = 0x10000000 ] || echo "$0: warning: $name: code at $base, README addresses do not apply" >&2
	case " $jp_args " in
	*" --jitdump "*)
		[ "$(head -c 4 "$d/jit-$pid.dump" 2>/dev/null)" = DTiJ ] || { echo "$0: $name: no jit-$pid.dump" >&2; exit 1; }
		;;
	esac
	case " $jp_args " in
	*" --move "*)
		grep -q '^move M ' "$d/jitprog.out" && grep -q '^fn Y ' "$d/jitprog.out" ||
			{ echo "$0: $name: jitprog did not move M or reuse X's address" >&2; exit 1; }
		;;
	esac
	printf '%-16s pid %s  %s\n' "$name" "$pid" "$(cd "$d" && ls callgrind.out.* | tr '\n' ' ')"
}

run instr      --dump-instr=yes
run line
run jumps      --dump-instr=yes --collect-jumps=yes
run callers2   --dump-instr=yes --separate-callers=2
run nocompress --compress-strings=no --compress-pos=no --dump-instr=yes
run cachesim   --dump-instr=yes --cache-sim=yes --branch-sim=yes
run parts      --dump-instr=yes --dump-every-bb=30000 --combine-dumps=yes
# R (0x10000900) is entered once, so dumps taken inside the JIT phase leave its
# call record open: later parts must show it as calls=0
[ ! -d "$out/parts" ] || grep -q '^calls=0 0x10000900 ' "$out"/parts/callgrind.out.* ||
	echo "$0: warning: parts: no 'calls=0 0x10000900' record" >&2
# extras beyond the basic set
run parts-files --dump-instr=yes --dump-every-bb=30000
run recs10     --dump-instr=yes --separate-recs=10

# jitdump variants: jitprog also writes jit-<pid>.dump, moves M (CODE_MOVE) and
# replaces X by Y at the same address (a second CODE_LOAD at X's code_addr)
jp_args="--jitdump $out/jitdump-instr --move --reuse"
run jitdump-instr --dump-instr=yes
jp_args="--jitdump $out/jitdump-line --move --reuse"
run jitdump-line

# trampoline: T and U jump (jmp, not call) into the stubs S and V, which no map
# or jitdump entry covers; callgrind charges S's and V's instructions and their
# calls (to B and to jitprog_tramp_c) to T and U
jp_args="--trampoline --jitdump $out/trampoline"
run trampoline --dump-instr=yes
if [ -d "$out/trampoline" ]; then
	grep -q '^fn=.*0x0000000010000e[08]' "$out"/trampoline/callgrind.out.* &&
		echo "$0: warning: trampoline: S or V has a pseudo-function of its own" >&2
	grep -q '^0x10000e' "$out"/trampoline/callgrind.out.* ||
		echo "$0: warning: trampoline: no cost line at S's or V's addresses" >&2
fi
