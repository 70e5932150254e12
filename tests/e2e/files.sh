#!/bin/bash
# End-to-end tests of what cgjit does to files (issue #8, "Hardening, round 2", items 1, 2,
# 3, 6, 7, 8, 9, 11): failed runs restore what they replaced and delete nothing they did not
# create, /dev/stdout and other descriptor paths are written in place, short output names,
# out of memory, signals and stale temporaries, permissions, ELF files of an output that is
# a device, outputs that name an input; and (issue 19, item 1) shared sticky directories,
# where another user's links, files and FIFOs are neither followed nor replaced. Takes CGJIT
# and CGCHECK like run.sh.
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
# Cases that need root (a tmpfs, mknod, another user through setpriv) say "skip" and
# why when they cannot run.
. "$(dirname "$0")/harness.sh"
chmod 755 "$tmp"   # another user (nobody) runs cgjit below
mounts=()
cleanup() {
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# no_tmp DIR...: no .cgjit-tmp.* file in any of them
no_tmp() { ! ls -A "$@" 2>/dev/null | grep -q 'cgjit-tmp'; }
mode() { stat -c %a "$1"; }

jd=$top/tests/jitprog/profiles/jitdump-instr
in=$tmp/in
mkdir -p "$in"
cp "$bad/good.cg" "$in/callgrind.out.4242"
cp "$bad/good.map" "$in/good.map"
cp "$bad/good.dump" "$in/good.dump"
cp "$jd"/callgrind.out.* "$in/big.cg"
cp "$jd"/jit-*.dump "$in/jit-30961.dump"
chmod -R a+rX "$in"
P=$in/callgrind.out.4242
# The reference outputs
"$CGJIT" augment -q "$P" "$in/good.map" -o "$tmp/ref.out"
"$CGJIT" augment -q "$P" "$in/good.dump" -o "$tmp/refd.out" --elf "$tmp"
# A default signal action for the cgjit started in the background: a non-interactive shell
# starts background jobs with SIGINT and SIGQUIT ignored, and cgjit keeps ignored signals.
# dflt SIG sets pre=(env --default-signal=SIG) (coreutils >= 8.31), so that "${pre[@]}" cgjit
# is still one process whose PID is $!.
have_dflt=0
env --default-signal=INT true 2>/dev/null && have_dflt=1
dflt() { pre=(); [ "$have_dflt" = 1 ] && pre=(env "--default-signal=$1"); }
# same_profile OUT ELFDIR: OUT is the reference profile with the jitdump, its ELF file in ELFDIR
same_profile() {
	cmp -s <(sed "s|$(realpath "$2")/good.dump.elf|ELF|g" "$1") <(sed "s|$(realpath "$tmp")/good.dump.elf|ELF|g" "$tmp/refd.out")
}
have_root=0
[ "$(id -u)" = 0 ] && have_root=1
as_nobody=()
if [ "$have_root" = 1 ] && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi

# feed FIFO FILE [N]: makes FIFO and writes the first N (400) bytes of FILE into it, the rest
# once "release FIFO" was called (in the background, PID in $feeder). A run reading FIFO
# waits there with its outputs open.
feed() {
	local n=${3:-400}
	rm -f "$1" "$1.go"
	mkfifo "$1"
	(head -c "$n" "$2"; while [ ! -e "$1.go" ]; do sleep 0.05; done; tail -c +$((n + 1)) "$2") >"$1" 2>/dev/null &
	feeder=$!
}
release() { touch "$1.go"; wait "$feeder" 2>/dev/null; rm -f "$1.go"; }
# wait_tmp DIR N [PATTERN]: until DIR holds N temporaries (matching PATTERN), at most 10 s
wait_tmp() {
	local i
	for i in $(seq 100); do
		[ "$(ls -A "$1" | grep "${3:-cgjit-tmp}" | grep -c cgjit-tmp)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

echo "# 1. a failed run deletes nothing it did not create and restores what it replaced"
k=$tmp/keep1
mkdir -p "$k" "$tmp/full"
if [ "$have_root" = 1 ] && mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
	mounts+=("$tmp/full")
	head -c 1M /dev/zero >"$tmp/full/fill" 2>/dev/null
	echo "old stats" >"$k/s.yaml"
	echo "old elf" >"$k/good.dump.elf"
	mknod "$k/null" c 1 3
	# good.cg compresses to less than a zstd block: the write fails only when the frame ends,
	# at the commit, after the stats and the ELF file were complete.
	"$CGJIT" augment -q "$P" "$in/good.dump" -o "$tmp/full/out.zst" --stats "$k/s.yaml" --elf "$k" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "out.zst: write error: No space left on device" "$tmp/err"' \
		"zstd output whose last block hits a full device: exit 1 and a clear error ($(head -c 200 "$tmp/err"))"
	expect '[ "$(cat "$k/s.yaml")" = "old stats" ] && [ "$(cat "$k/good.dump.elf")" = "old elf" ]' \
		"... an earlier run's --stats file and ELF file are untouched"
	"$CGJIT" augment -q "$P" "$in/good.dump" -o "$tmp/full/out.zst" --stats "$k/null" --elf "$k" 2>/dev/null
	rc=$?
	expect '[ $rc = 1 ] && [ -c "$k/null" ] && [ "$(cat "$k/good.dump.elf")" = "old elf" ]' \
		"... a --stats that is a device is not deleted"
	expect 'no_tmp "$k" "$tmp/full" && [ ! -e "$tmp/full/out.zst" ]' "... no temporary file, no output"
else
	skip "a full file system needs root to mount a 64 KiB tmpfs"
fi
# Without root: the profile's destination becomes a directory while the run reads a FIFO,
# so its rename fails after the ELF file and the stats were renamed into place.
r1=$tmp/race1
mkdir -p "$r1"
echo "old stats" >"$r1/s.yaml"
echo "old elf" >"$r1/good.dump.elf"
feed "$r1/fifo" "$P" 100
"$CGJIT" augment -q "$r1/fifo" "$in/good.dump" -o "$r1/p.out" --stats "$r1/s.yaml" --elf "$r1" 2>"$tmp/err" &
victim=$!
wait_tmp "$r1" 2   # the profile's and the stats' temporaries: the outputs are open
mkdir "$r1/p.out"
release "$r1/fifo"
wait "$victim"
rc=$?
expect '[ $rc = 1 ] && grep -q "p.out: is a directory" "$tmp/err" && [ "$(cat "$r1/s.yaml")" = "old stats" ] && [ "$(cat "$r1/good.dump.elf")" = "old elf" ] && [ "$(ls -A "$r1" | wc -l)" = 4 ]' \
	"the profile's rename fails last: exit $rc, the --stats and ELF files it had replaced are restored, nothing else left ($(head -c 160 "$tmp/err"))"
if [ ${#as_nobody[@]} -gt 0 ]; then
	# A sticky directory with the profile's destination owned by root: nobody cannot replace
	# it, so the last rename fails after the ELF file and the stats were renamed into place.
	st=$tmp/sticky
	nk=$tmp/nobody1
	mkdir -p "$st" "$nk"
	chmod 1777 "$st"
	echo "root's profile" >"$st/p.out"
	echo "old stats" >"$nk/s.yaml"
	echo "old elf" >"$nk/good.dump.elf"
	chown -R nobody "$nk"
	"${as_nobody[@]}" "$CGJIT" augment -q "$P" "$in/good.dump" -o "$st/p.out" --stats "$nk/s.yaml" \
		--elf "$nk" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "p.out: cannot rename the temporary file into place: Operation not permitted" "$tmp/err"' \
		"profile destination owned by another user in a sticky directory: exit 1 ($(head -c 200 "$tmp/err"))"
	expect '[ "$(cat "$nk/s.yaml")" = "old stats" ] && [ "$(cat "$nk/good.dump.elf")" = "old elf" ] && [ "$(cat "$st/p.out")" = "root'"'"'s profile" ]' \
		"... the --stats and ELF files it had replaced are restored, the profile is untouched"
	expect 'no_tmp "$nk" "$st" && [ "$(ls -A "$nk" | wc -l)" = 2 ]' "... no temporary or other file left"
	# and when every rename works, all three are replaced
	rm -f "$st/p.out"
	"${as_nobody[@]}" "$CGJIT" augment -q "$P" "$in/good.dump" -o "$st/p.out" --stats "$nk/s.yaml" --elf "$nk"
	rc=$?
	expect '[ $rc = 0 ] && same_profile "$st/p.out" "$nk" && grep -q "^elf_files: 1" "$nk/s.yaml" && cmp -s "$nk/good.dump.elf" "$tmp/good.dump.elf" && no_tmp "$nk" "$st"' \
		"... a run that succeeds replaces the ELF file, the stats and the profile"
else
	skip "the sticky-directory case needs root and setpriv (to run as nobody)"
fi

echo "# 2. /dev/stdout and descriptor paths are written in place, never replaced"
ln -s /proc/self/fd/1 "$tmp/mystdout"
"$CGJIT" augment -q "$P" "$in/good.map" -o "$tmp/mystdout" >"$tmp/redir1"
rc=$?
expect '[ $rc = 0 ] && [ -L "$tmp/mystdout" ] && cmp -s "$tmp/redir1" "$tmp/ref.out"' \
	"-o LINK (-> /proc/self/fd/1) with stdout redirected to a file: the file gets the profile, the link stays"
"$CGJIT" augment -q "$P" "$in/good.map" -o /dev/fd/1 >"$tmp/redir2"
rc=$?
expect '[ $rc = 0 ] && cmp -s "$tmp/redir2" "$tmp/ref.out"' "-o /dev/fd/1 writes to the redirected stdout"
ln -s /dev/stdout "$tmp/chain"
"$CGJIT" augment -q "$P" "$in/good.map" -o "$tmp/o2.out" --stats "$tmp/chain" >"$tmp/redir3"
rc=$?
expect '[ $rc = 0 ] && [ -L "$tmp/chain" ] && grep -q "^pseudo_functions_resolved: 2$" "$tmp/redir3" && cmp -s "$tmp/o2.out" "$tmp/ref.out"' \
	"--stats LINK (-> /dev/stdout): the YAML goes to the redirected stdout, the link stays"
echo "first line" >"$tmp/redir4"
"$CGJIT" augment -q "$P" "$in/good.map" -o "$tmp/mystdout" >>"$tmp/redir4"
rc=$?
expect '[ $rc = 0 ] && [ "$(head -1 "$tmp/redir4")" = "first line" ] && tail -n +2 "$tmp/redir4" | cmp -s - "$tmp/ref.out"' \
	"... through >> the output is appended (the descriptor is shared, not reopened)"
expect 'no_tmp "$tmp"' "... no temporary file"
# /dev/stdout itself only once the links above behaved: a cgjit that replaces it would
# break the machine's /dev/stdout.
if [ -L "$tmp/mystdout" ] && [ -L "$tmp/chain" ] && [ -L /dev/stdout ]; then
	"$CGJIT" augment -q "$P" "$in/good.map" -o /dev/stdout --stats /dev/stdout >"$tmp/redir5"
	rc=$?
	expect '[ $rc = 0 ] && [ -L /dev/stdout ] && head -c "$(stat -c %s "$tmp/ref.out")" "$tmp/redir5" | cmp -s - "$tmp/ref.out" && grep -q "^pseudo_functions_resolved: 2$" "$tmp/redir5"' \
		"-o /dev/stdout --stats /dev/stdout with stdout redirected: profile then stats in the file, /dev/stdout still a link"
else
	notok "-o /dev/stdout not tried: the links to /proc/self/fd/1 and /dev/stdout were replaced"
fi

echo "# 3. short output names"
c3=$tmp/cwd3
mkdir -p "$c3/d"
mcheck=()
if ! ldd "$CGJIT" 2>/dev/null | grep -q libasan; then
	lib=$(ls /lib/*/libc_malloc_debug.so.0 /usr/lib/*/libc_malloc_debug.so.0 2>/dev/null | head -1)
	# glibc's checking malloc aborts on a write past the requested size (ASan builds catch it themselves)
	[ -n "$lib" ] && mcheck=(env LD_PRELOAD="$lib" MALLOC_CHECK_=3)
	[ -z "$lib" ] && echo "# note: no libc_malloc_debug.so.0: overflows below are caught only by make check-asan"
fi
(cd "$c3" && "${mcheck[@]}" "$CGJIT" augment -q "$P" "$in/good.map" -o a) 2>"$tmp/err"
rc=$?
expect '[ $rc = 0 ] && cmp -s "$c3/a" "$tmp/ref.out"' "-o a (1-character name): $(head -c 200 "$tmp/err")"
(cd "$c3" && "${mcheck[@]}" "$CGJIT" augment -q "$P" "$in/good.map" -o d/x) 2>"$tmp/err"
rc=$?
expect '[ $rc = 0 ] && cmp -s "$c3/d/x" "$tmp/ref.out"' "-o d/x: $(head -c 200 "$tmp/err")"
(cd "$c3" && "${mcheck[@]}" "$CGJIT" augment -q "$P" "$in/good.map" -o o3 --stats s) 2>"$tmp/err"
rc=$?
expect '[ $rc = 0 ] && grep -q "^parts: 1$" "$c3/s"' "--stats s: $(head -c 200 "$tmp/err")"
(cd "$c3" && "${mcheck[@]}" "$CGJIT" augment -q "$P" "$in/good.map" -o '') 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && grep -q "empty file name" "$tmp/err"' "-o '': usage error, exit 2 ($(head -c 200 "$tmp/err"))"
(cd "$c3" && "${mcheck[@]}" "$CGJIT" augment -q "$P" "$in/good.map" -o o4 --stats '') 2>/dev/null
rc=$?
expect '[ $rc = 2 ] && [ ! -e "$c3/o4" ]' "--stats '': usage error, exit 2"
(cd "$c3" && "${mcheck[@]}" "$CGJIT" augment -q "$P" "$in/good.map" -o d/) 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "d/: names a directory, expected a file" "$tmp/err"' "-o d/ (a directory): $(head -c 200 "$tmp/err")"
expect 'no_tmp "$c3" "$c3/d"' "... no temporary file"

echo "# 6. out of memory leaves nothing behind"
m6=$tmp/oom
mkdir -p "$m6"
# Test hook: allocations above 1 MB fail (the profile reader's first buffer is 2 MiB)
CGJIT_TEST_ALLOC_LIMIT=1000000 "$CGJIT" augment -q "$P" "$in/good.dump" -o "$m6/out" --stats "$m6/s.yaml" \
	--elf "$m6" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "cgjit: out of memory" "$tmp/err" && [ -z "$(ls -A "$m6")" ]' \
	"out of memory (CGJIT_TEST_ALLOC_LIMIT): exit 1, no output, stats, ELF or temporary file (exit $rc)"
if { (ulimit -v 60000 && "$CGJIT" --version) >/dev/null 2>&1; } 2>/dev/null; then
	# A real malloc failure: a 40 MB line needs a 64 MiB buffer under a 60 MB address space.
	(printf 'events: Ir\nfn='; head -c 40000000 /dev/zero | tr '\0' a; echo) |
		(ulimit -v 60000; exec "$CGJIT" augment -q - "$in/good.map" -o "$m6/out" --stats "$m6/s.yaml") 2>"$tmp/err"
	rc=${PIPESTATUS[1]}
	expect '[ $rc = 1 ] && grep -q "cgjit: out of memory" "$tmp/err" && [ -z "$(ls -A "$m6")" ]' \
		"out of memory (ulimit -v): exit 1, no output, no temporary file (exit $rc)"
else
	skip "this cgjit cannot start under ulimit -v (ASan); the hook above covers it"
fi

echo "# 7. signals"
s7=$tmp/sig
mkdir -p "$s7"
for sig in HUP INT QUIT TERM PIPE ALRM USR1 USR2 XCPU XFSZ VTALRM PROF; do
	feed "$s7/fifo" "$in/big.cg"
	dflt "$sig"
	"${pre[@]}" "$CGJIT" augment -q "$s7/fifo" "$in/jit-30961.dump" -o "$s7/out" \
		--stats "$s7/s.yaml" --elf "$s7" 2>/dev/null &
	victim=$!
	wait_tmp "$s7" 3   # profile, stats, ELF files
	before=$(ls -A "$s7" | grep -c cgjit-tmp)
	kill -"$sig" "$victim"
	{ wait "$victim"; } 2>/dev/null   # no "Hangup" etc. from the shell
	rc=$?
	release "$s7/fifo"
	expect '[ "$rc" = $((128 + $(kill -l "$sig"))) ] && [ "$before" -ge 3 ] && no_tmp "$s7" && [ ! -e "$s7/out" ] && [ ! -e "$s7/s.yaml" ]' \
		"SIG$sig during a run: killed by it (exit $rc), its $before temporaries (profile, stats, ELF) removed"
done
# more than 64 temporaries: 70 jitdumps, an ELF file each
mk=$tmp/many
mkdir -p "$mk"
dumps=()
for i in $(seq 1 70); do
	cp "$in/good.dump" "$mk/jit-$i.dump"
	dumps+=("$mk/jit-$i.dump")
done
feed "$s7/fifo" "$P"
dflt INT
"${pre[@]}" "$CGJIT" augment -q "$s7/fifo" "${dumps[@]}" -o "$mk/out" --elf "$mk" 2>/dev/null &
victim=$!
wait_tmp "$mk" 71
before=$(ls -A "$mk" | grep -c cgjit-tmp)
kill -INT "$victim"
wait "$victim"
rc=$?
release "$s7/fifo"
expect '[ "$rc" = 130 ] && [ "$before" -gt 64 ] && no_tmp "$mk" && ! ls "$mk" | grep -q "\.elf$"' \
	"SIGINT with $before temporaries (more than the old table's 64): all removed"
# a real SIGPIPE: -o - | head
p7=$tmp/pipe
mkdir -p "$p7"
dflt PIPE
"${pre[@]}" "$CGJIT" augment -q "$in/big.cg" "$in/jit-30961.dump" -o - --stats "$p7/s.yaml" --elf "$p7" |
	head -c 100 >/dev/null
rc=${PIPESTATUS[0]}
expect '[ "$rc" = 141 ] && [ -z "$(ls -A "$p7")" ]' "-o - | head: SIGPIPE (exit $rc), no stats, ELF or temporary file"
# a real SIGXFSZ: a file size limit of 8 KiB
x7=$tmp/xfsz
mkdir -p "$x7"
dflt XFSZ
{
	(ulimit -f 8; exec "${pre[@]}" "$CGJIT" augment -q "$in/big.cg" "$in/jit-30961.dump" -o "$x7/out" \
		--stats "$x7/s.yaml" --elf "$x7")
	rc=$?
} 2>/dev/null
expect '[ "$rc" = 153 ] && [ -z "$(ls -A "$x7")" ]' "ulimit -f 8 (SIGXFSZ, exit $rc): nothing left"
# an ignored SIGHUP (nohup) stays ignored: the run goes on and succeeds
rm -f "$s7/out"
feed "$s7/fifo" "$P" 100
nohup "$CGJIT" augment -q "$s7/fifo" "$in/good.map" -o "$s7/out" >/dev/null 2>&1 &
victim=$!
wait_tmp "$s7" 1   # nohup has run cgjit, which has opened its output
kill -HUP "$victim"
sleep 0.2
release "$s7/fifo"
wait "$victim"
rc=$?
expect '[ "$rc" = 0 ] && cmp -s "$s7/out" "$tmp/ref.out" && no_tmp "$s7"' \
	"nohup cgjit: SIGHUP stays ignored, the run completes (exit $rc)"
# SIGKILL leaves .cgjit-tmp.PID.*, which the next run in that directory removes, and only that
k7=$tmp/stale
mkdir -p "$k7"
feed "$s7/fifo" "$P"
"$CGJIT" augment -q "$s7/fifo" "$in/good.map" -o "$k7/out" 2>/dev/null &
killed=$!
wait_tmp "$k7" 1
kill -KILL "$killed"
{ wait "$killed"; } 2>/dev/null
release "$s7/fifo"
left=$(ls -A "$k7" | grep "^\.cgjit-tmp\.$killed\.")
expect '[ -n "$left" ] && [ "$(ls -A "$k7" | wc -l)" = 1 ]' "SIGKILL leaves one temporary, named with the PID: $left"
# look-alikes that must stay: a live run's, one locked by a live process, another user's
feed "$s7/fifo" "$P"
"$CGJIT" augment -q "$s7/fifo" "$in/good.map" -o "$k7/live" 2>/dev/null &
live=$!
# the look-alikes only once the live run has its temporary (and so has scanned the directory,
# removing the killed run's; STALE2 below is left for the next run)
wait_tmp "$k7" 1 "^\.cgjit-tmp\.$live\."
true &
dead=$!
wait "$dead"
echo x >"$k7/.cgjit-tmp.$dead.LOCKED"
(exec 9<"$k7/.cgjit-tmp.$dead.LOCKED" && flock -x 9 && exec sleep 30) >/dev/null 2>&1 &
locker=$!
for i in $(seq 100); do flock -n "$k7/.cgjit-tmp.$dead.LOCKED" true || break; sleep 0.05; done
echo x >"$k7/.cgjit-tmp.$dead.OTHERS"
[ "$have_root" = 1 ] && chown nobody "$k7/.cgjit-tmp.$dead.OTHERS"
echo x >"$k7/.cgjit-tmp.$dead.STALE2"
livetmp=$(ls -A "$k7" | grep "^\.cgjit-tmp\.$live\.")
"$CGJIT" augment -q "$P" "$in/good.map" -o "$k7/next"
rc=$?
expect '[ $rc = 0 ] && [ ! -e "$k7/$left" ] && [ ! -e "$k7/.cgjit-tmp.$dead.STALE2" ]' \
	"the next run in that directory removes the dead processes' temporaries"
if [ "$have_root" = 1 ]; then
	expect '[ -n "$livetmp" ] && [ -e "$k7/$livetmp" ] && [ -e "$k7/.cgjit-tmp.$dead.LOCKED" ] && [ -e "$k7/.cgjit-tmp.$dead.OTHERS" ]' \
		"... and keeps a live run's ($livetmp), a locked one and another user's"
else
	expect '[ -n "$livetmp" ] && [ -e "$k7/$livetmp" ] && [ -e "$k7/.cgjit-tmp.$dead.LOCKED" ]' \
		"... and keeps a live run's ($livetmp) and a locked one"
	skip "... another user's temporary is kept (needs root to chown it)"
fi
kill "$live" "$locker" 2>/dev/null
wait "$live" "$locker" 2>/dev/null
release "$s7/fifo"

echo "# 8. permissions: the umask for new files, the old mode for replaced ones"
p8=$tmp/perm
mkdir -p "$p8"
for um in 077 027 002 022; do
	want=$(printf '%o' $((0666 & ~0$um)))
	mkdir -p "$p8/elf$um"
	(umask $um && exec "$CGJIT" augment -q "$P" "$in/good.dump" -o "$p8/$um.out" --stats "$p8/$um.yaml" \
		--elf "$p8/elf$um")
	expect '[ "$(mode "$p8/$um.out")" = $want ] && [ "$(mode "$p8/$um.yaml")" = $want ] && [ "$(mode "$p8/elf$um/good.dump.elf")" = $want ]' \
		"umask $um: profile, stats and ELF file are $want ($(mode "$p8/$um.out"), $(mode "$p8/$um.yaml"), $(mode "$p8/elf$um/good.dump.elf"))"
done
for m in 600 640 664; do
	echo old >"$p8/k$m.out"
	echo old >"$p8/k$m.yaml"
	echo old >"$p8/good.dump.elf"
	chmod "$m" "$p8/k$m.out" "$p8/k$m.yaml" "$p8/good.dump.elf"
	(umask 022 && exec "$CGJIT" augment -q "$P" "$in/good.dump" -o "$p8/k$m.out" --stats "$p8/k$m.yaml" --elf "$p8")
	expect '[ "$(mode "$p8/k$m.out")" = $m ] && [ "$(mode "$p8/k$m.yaml")" = $m ] && [ "$(mode "$p8/good.dump.elf")" = $m ] && same_profile "$p8/k$m.out" "$p8"' \
		"replacing $m files under umask 022: they stay $m"
done

echo "# 9. ELF files of an output that is not a regular file go to the current directory"
c9=$tmp/cwd9
mkdir -p "$c9"
chmod 777 "$c9"
pre=0
[ -e /dev/good.dump.elf ] && pre=1
(cd "$c9" && "$CGJIT" augment -q "$P" "$in/good.dump" -o /dev/null) 2>"$tmp/err"
rc=$?
expect '[ $rc = 0 ] && [ -s "$c9/good.dump.elf" ] && { [ $pre = 1 ] || [ ! -e /dev/good.dump.elf ]; }' \
	"-o /dev/null with a jitdump: the ELF file in the current directory, none in /dev (exit $rc)"
[ $pre = 0 ] && rm -f /dev/good.dump.elf   # made by a cgjit without the fix
if [ ${#as_nobody[@]} -gt 0 ]; then
	rm -f "$c9/good.dump.elf"
	(cd "$c9" && "${as_nobody[@]}" "$CGJIT" augment -q "$P" "$in/good.dump" -o /dev/null) 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 0 ] && [ -s "$c9/good.dump.elf" ]' "... and as a user who cannot write /dev $(head -c 200 "$tmp/err")"
else
	skip "... and as a user who cannot write /dev (needs root and setpriv)"
fi
f9=$tmp/fifo9
mkdir -p "$f9"
mkfifo "$f9/fifo"
cat "$f9/fifo" >"$tmp/fifo9.got" &
reader=$!
rm -f "$c9/good.dump.elf"
(cd "$c9" && "$CGJIT" augment -q "$P" "$in/good.dump" -o "$f9/fifo")
rc=$?
wait "$reader"
expect '[ $rc = 0 ] && [ -s "$c9/good.dump.elf" ] && [ "$(ls -A "$f9")" = fifo ] && same_profile "$tmp/fifo9.got" "$c9"' \
	"-o FIFO: written in place, the ELF file in the current directory"

echo "# 11. -o or --stats naming an input is refused"
i11=$tmp/in11
mkdir -p "$i11"
cp "$P" "$i11/callgrind.out.4242"
cp "$in/good.map" "$i11/perf-4242.map"
cp "$in/good.dump" "$i11/jit.dump"
ln -s callgrind.out.4242 "$i11/link"
ln "$i11/perf-4242.map" "$i11/hard.map"
sum() { cat "$i11/callgrind.out.4242" "$i11/perf-4242.map" "$i11/jit.dump" | md5sum; }
before=$(sum)
refuse() {   # refuse DESCRIPTION ARGS...
	local what=$1
	shift
	(cd "$i11" && "$CGJIT" augment -q "$@") 2>"$tmp/err" </dev/null
	local rc=$?
	expect '[ $rc = 2 ] && grep -q "is the same file as" "$tmp/err" && [ "$(sum)" = "$before" ] && [ -L "$i11/link" ] && no_tmp "$i11"' \
		"$what: exit $rc, '$(head -c 160 "$tmp/err")'"
}
refuse "-o PROFILE" callgrind.out.4242 perf-4242.map -o callgrind.out.4242
refuse "-o ./PROFILE (another spelling)" callgrind.out.4242 perf-4242.map -o "$i11/./callgrind.out.4242"
refuse "-o LINK-TO-PROFILE" callgrind.out.4242 perf-4242.map -o link
refuse "-o HARD-LINK-OF-MAP" callgrind.out.4242 perf-4242.map -o hard.map
refuse "-o MAP" callgrind.out.4242 perf-4242.map -o perf-4242.map
refuse "-o DUMP" callgrind.out.4242 jit.dump -o jit.dump
refuse "--stats PROFILE" callgrind.out.4242 perf-4242.map -o x.out --stats callgrind.out.4242
refuse "--stats MAP" callgrind.out.4242 perf-4242.map -o x.out --stats ../in11/perf-4242.map
refuse "-o MAP found from the pid: line (--map-dir)" --map-dir "$i11" callgrind.out.4242 -o perf-4242.map
refuse "-o and --stats the same file" callgrind.out.4242 perf-4242.map -o same --stats ./same
(cd "$i11" && "$CGJIT" augment -q - perf-4242.map -o callgrind.out.4242 <callgrind.out.4242) 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && grep -q "is the same file as the input" "$tmp/err" && [ "$(sum)" = "$before" ]' \
	"-o PROFILE with the profile on stdin: refused"
expect '[ ! -e "$i11/x.out" ] && [ ! -e "$i11/same" ]' "... no output of any refused run"

# Another process's descriptor of an input: refused before anything is emptied.
cp "$bad/good.cg" "$tmp/held.cg"
sleep 30 7<"$tmp/held.cg" &
holder=$!
held_before=$(cksum <"$tmp/held.cg")
"$CGJIT" augment -q -o "/proc/$holder/fd/7" "$tmp/held.cg" "$bad/good.map" 2>"$tmp/err"
rc=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
expect '[ $rc = 2 ] && [ "$(cksum <"$tmp/held.cg")" = "$held_before" ]' \
	"-o /proc/PID/fd/N of another process naming the input: refused, the input not emptied"

# fsync: a temporary that replaces an existing file is synced before the rename (a crash
# cannot leave an empty file where the old one was); a new file is not (it costs as much
# time as writing a large output).
if command -v strace >/dev/null 2>&1 && strace -f -qq -e trace=fsync true 2>/dev/null; then
	rm -f "$tmp/sync.out"
	strace -f -qq -e trace=fsync -o "$tmp/strace.new" "$CGJIT" augment -q -o "$tmp/sync.out" "$P" "$in/good.map"
	strace -f -qq -e trace=fsync -o "$tmp/strace.old" "$CGJIT" augment -q -o "$tmp/sync.out" "$P" "$in/good.map"
	expect '! grep -q "fsync(" "$tmp/strace.new" && grep -q "fsync(" "$tmp/strace.old" && cmp -s "$tmp/sync.out" "$tmp/ref.out"' \
		"a new output is not fsync()ed, one that replaces a file is"
else
	skip "fsync check (no working strace)"
fi

echo "# 12. shared (sticky, world-writable) directories: another user's links and files"
if [ ${#as_nobody[@]} -gt 0 ]; then
	# As /tmp: mode 1777, owned by root. Another user (nobody) plants links named as cgjit's
	# default outputs, to root-only files; root runs cgjit.
	sh12=$tmp/shared12
	mkdir -p "$sh12"
	chmod 1777 "$sh12"
	for f in secret secret2; do echo "root only" >"$tmp/$f"; chmod 600 "$tmp/$f"; done
	secrets() { cat "$tmp/secret" "$tmp/secret2" | md5sum; stat -c %a%U "$tmp/secret" "$tmp/secret2"; }
	sbefore=$(secrets)
	cp "$P" "$sh12/callgrind.out.4242"
	plant() { "${as_nobody[@]}" ln -sfn "$1" "$2"; }
	plant "$tmp/secret" "$sh12/callgrind.out.jit.4242"
	plant "$tmp/secret2" "$sh12/good.dump.elf"
	n_before=$(ls -A "$sh12" | wc -l)
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.dump" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "^cgjit: $sh12/callgrind.out.jit.4242: is a symbolic link of another user (uid [0-9]*) in the shared directory .$sh12. (sticky, world-writable): not followed" "$tmp/err" && [ "$(secrets)" = "$sbefore" ]' \
		"default output name (callgrind.out.jit.PID) a link of another user in a sticky directory: exit 1, not followed, its target untouched ($(head -c 220 "$tmp/err"))"
	expect '[ -L "$sh12/callgrind.out.jit.4242" ] && [ -L "$sh12/good.dump.elf" ] && [ "$(ls -A "$sh12" | wc -l)" = "$n_before" ]' \
		"... the links stay, no file or temporary is left"
	rm -f "$sh12/callgrind.out.jit.4242"   # root may remove it (sticky: as its owner could)
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.dump" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "good.dump.elf: is a symbolic link of another user" "$tmp/err" && [ "$(secrets)" = "$sbefore" ] && [ ! -e "$sh12/callgrind.out.jit.4242" ] && no_tmp "$sh12"' \
		"the ELF file's name (DUMP.elf, here good.dump.elf) such a link: exit 1, no profile written either, the target untouched"
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$tmp/o12.out" --stats "$sh12/good.dump.elf" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "good.dump.elf: is a symbolic link of another user" "$tmp/err" && [ "$(secrets)" = "$sbefore" ] && [ ! -e "$tmp/o12.out" ]' \
		"--stats naming such a link explicitly: refused too (exit $rc), no profile written"
	plant "$tmp/secret" "$sh12/named.out"
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$sh12/named.out" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "named.out: is a symbolic link of another user" "$tmp/err" && [ "$(secrets)" = "$sbefore" ]' \
		"-o naming such a link explicitly: refused (exit $rc), as the kernel's protected_symlinks refuses open()"
	plant "$tmp" "$sh12/dir"
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$sh12/dir/secret" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "dir/secret: .$sh12/dir. is a symbolic link of another user" "$tmp/err" && [ "$(secrets)" = "$sbefore" ]' \
		"a directory on the way that is such a link: refused (exit $rc)"
	elf_before=$(md5sum <"$tmp/good.dump.elf")
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.dump" -o "$tmp/o12.out" --elf "$sh12/dir" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "dir: is a symbolic link of another user" "$tmp/err" && [ ! -e "$tmp/o12.out" ] && [ "$(md5sum <"$tmp/good.dump.elf")" = "$elf_before" ] && no_tmp "$tmp"' \
		"--elf naming such a link: refused (exit $rc)"
	# another user's regular file or FIFO under the output's name: not replaced, not written to
	rm -f "$sh12/named.out"
	"${as_nobody[@]}" sh -c "echo theirs >'$sh12/named.out'; mkfifo '$sh12/fifo'"
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$sh12/named.out" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "named.out: belongs to another user (uid [0-9]*) in the shared directory .*not replaced" "$tmp/err" && [ "$(cat "$sh12/named.out")" = theirs ] && [ "$(stat -c %U "$sh12/named.out")" = nobody ]' \
		"another user's regular file under the output's name: exit $rc, left as it was"
	# (a cgjit that opens the FIFO would wait there for a reader: timeout ends it)
	timeout 60 "$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$sh12/fifo" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "fifo: belongs to another user .*not written to" "$tmp/err"' \
		"another user's FIFO as the output: exit $rc, not opened"
	# this user's own link in the shared directory is followed (README: a link to a regular
	# file is followed), and so is one of the directory's owner
	echo old >"$tmp/mine"
	ln -s "$tmp/mine" "$sh12/mylink"
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$sh12/mylink" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 0 ] && [ -L "$sh12/mylink" ] && cmp -s "$tmp/mine" "$tmp/ref.out"' \
		"this user's own link there: followed, the file replaced, the link stays (exit $rc)"
	own=$tmp/owned12
	mkdir -p "$own"
	chmod 1777 "$own"
	chown nobody "$own"
	echo old >"$tmp/mine"
	"${as_nobody[@]}" ln -s "$tmp/mine" "$own/link"
	"$CGJIT" augment -q "$sh12/callgrind.out.4242" "$in/good.map" -o "$own/link" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 0 ] && [ -L "$own/link" ] && cmp -s "$tmp/mine" "$tmp/ref.out"' \
		"a link of the directory's owner (a sticky directory owned by nobody): followed, as the kernel allows (exit $rc)"
	expect '[ "$(secrets)" = "$sbefore" ]' "... and the root-only files are unchanged after all of it"
else
	skip "shared directories: planting another user's links needs root and setpriv (to run as nobody)"
fi

finish
