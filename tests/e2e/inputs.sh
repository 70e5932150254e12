#!/bin/bash
# End-to-end tests of how symbol files and compressed inputs are opened and read (issue #8,
# items 4, 10, 14, 15, 16): each symbol file opened once (pipes, FIFOs, stdin), ELF files
# that never collide, zstd streams that begin with a skippable frame, auto-discovery that
# skips files it should not trust, ranges that end at 2^64, jitdump records past 2^64
# counted rather than fatal, error offsets in compressed data; gzip input (issue 26); the
# reader alone as scripts/bench times it (build/bench-read); the same output whichever
# threads read ahead and write (io_pump.h).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"
cd "$tmp" || exit 1

expect() { if eval "$1"; then ok "$2"; else notok "$2 ($(head -c 300 "$tmp/err" 2>/dev/null))"; fi; }

# run OUT ARGS...: cgjit augment -o OUT ARGS, at most 10 s (a hang is a failure, not a
# stuck test); stderr in $tmp/err, the exit status in $rc.
run() {
	local out=$1
	shift
	rm -f "$out"
	timeout 10 "$CGJIT" augment -o "$out" "$@" </dev/null 2>"$tmp/err" >/dev/null
	rc=$?
}

# mkdump FILE [load ADDR SIZE NAME BYTE]... [move OLD NEW]...: a little-endian jitdump
# (perf's jitdump-specification.txt), version 1, elf_mach 62 (x86-64); each load's code is
# SIZE bytes: "mov eax, BYTE; ret" and then int3.
mkdump() {
	perl -e '
		use strict;
		my $f = shift;
		my $out = pack("a4VVVVVQ<Q<", "DTiJ", 1, 40, 62, 0, 4242, 0, 0);
		my $index = 0;
		my %size;
		while (@ARGV) {
			my $kind = shift;
			if ($kind eq "load") {
				my ($addr, $size, $name, $byte) = (hex(shift), hex(shift), shift, hex(shift));
				my $code = pack("CCCCCC", 0xb8, $byte, 0, 0, 0, 0xc3) . ("\xcc" x ($size - 6));
				my $body = pack("VVQ<Q<Q<Q<", 4242, 1, $addr, $addr, $size, ++$index) . "$name\0" . $code;
				$size{$addr} = [$size, $index];
				$out .= pack("VVQ<", 0, 16 + length($body), 0) . $body;
			} elsif ($kind eq "move") {
				my ($old, $new) = (hex(shift), hex(shift));
				my ($size, $ix) = @{$size{$old}};
				$out .= pack("VVQ<VVQ<Q<Q<Q<Q<", 1, 64, 0, 4242, 1, $new, $old, $new, $size, $ix);
			} else {
				die "mkdump: $kind?";
			}
		}
		open(my $o, ">", $f) or die;
		binmode $o;
		print $o $out;
	' "$@"
}

# obj_of OUT NAME: the ob= of the function whose name starts with NAME in profile OUT.
obj_of() {
	perl -ne '
		BEGIN { $want = shift }
		if (/^ob=\((\d+)\)(?: (.*))?$/) { $ob{$1} = $2 if defined $2; $cur = $ob{$1}; }
		if (/^fn=\((\d+)\)(?: (.*))?$/) { $fn{$1} = $2 if defined $2;
			if (index($fn{$1}, $want) == 0) { print "$cur\n"; exit } }
	' "$2" "$1"
}

# has_code ELF ADDR BYTE: objdump shows "mov $BYTE,%eax" at ADDR in ELF.
has_code() {
	objdump -d --start-address="$2" --stop-address=$(($2 + 6)) "$1" 2>/dev/null |
		grep -q "$(printf '%x' "$2"):.*mov *\$0x$3,%eax"
}
# has_nop ELF ADDR: objdump shows a nop at ADDR in ELF (scripts/make-hostile-jitdump's code).
has_nop() {
	objdump -d --start-address="$2" --stop-address=$(($2 + 1)) "$1" 2>/dev/null |
		grep -q "$(printf '%x' "$2"):.*nop"
}

cp "$bad/good.cg" "$tmp/callgrind.out.4242"
prof=$tmp/callgrind.out.4242

echo "# item 4: every symbol file is opened once (pipes, FIFOs, stdin)"
run "$tmp/o" "$prof" <(cat "$bad/good.map")
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main(/src/a.raku:3)" "$tmp/o"' \
	"a map from a pipe keeps its first bytes: the first symbol is named"
rm -f "$tmp/o"
timeout 10 "$CGJIT" augment -o "$tmp/o" "$prof" - <"$bad/good.map" 2>"$tmp/err"
expect '[ $? = 0 ] && grep -q "^fn=.*jit_main(/src/a.raku:3)" "$tmp/o"' "a map from stdin (-): the first symbol is named"
run "$tmp/o" "$prof" <(zstd -q -c "$bad/good.map")
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o" && grep -q "^fn=.*JS:\*helper" "$tmp/o"' \
	"a zstd-compressed map from a pipe: both symbols"
run "$tmp/o" --no-elf "$prof" <(cat "$bad/good.dump")
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o"' "a jitdump from a pipe is recognised and read"
run "$tmp/o" --no-elf "$prof" <(zstd -q -c "$bad/good.dump")
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o"' "a zstd-compressed jitdump from a pipe"
rm -f "$tmp/fifo"
mkfifo "$tmp/fifo"
cat "$bad/good.map" >"$tmp/fifo" &
writer=$!
run "$tmp/o" "$prof" "$tmp/fifo"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o"' "a map from a FIFO: read once, no hang (exit $rc)"
rm -f "$tmp/o"
timeout 10 "$CGJIT" augment -o "$tmp/o" - - <"$prof" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "stdin is already read as the profile" "$tmp/err" && [ ! -e "$tmp/o" ]' \
	"profile and symbol file both stdin: a clear error"

echo "# item 10: dumps with one file name get ELF files of their own"
mkdir -p "$tmp/a" "$tmp/b" "$tmp/elf"
mkdump "$tmp/a/jit-4242.dump" load 10000000 40 jit_A 11
mkdump "$tmp/b/jit-4242.dump" load 10000100 10 jit_B 22
run "$tmp/o" --elf "$tmp/elf" "$prof" "$tmp/a/jit-4242.dump" "$tmp/b/jit-4242.dump"
ea=$(obj_of "$tmp/o" jit_A)
eb=$(obj_of "$tmp/o" jit_B)
expect '[ $rc = 0 ] && [ -n "$ea" ] && [ -n "$eb" ] && [ "$ea" != "$eb" ]' \
	"same name, other directories: two ELF files ($(basename "$ea"), $(basename "$eb"))"
expect 'has_code "$ea" 0x10000000 11 && has_code "$eb" 0x10000100 22' \
	"... each holds its own dump's code at its address"
zstd -q -c "$tmp/b/jit-4242.dump" >"$tmp/a/jit-4242.dump.zst"
run "$tmp/o" --elf "$tmp/elf" "$prof" "$tmp/a/jit-4242.dump" "$tmp/a/jit-4242.dump.zst"
ea=$(obj_of "$tmp/o" jit_A)
eb=$(obj_of "$tmp/o" jit_B)
expect '[ $rc = 0 ] && [ "$ea" != "$eb" ] && has_code "$ea" 0x10000000 11 && has_code "$eb" 0x10000100 22' \
	"x.dump and x.dump.zst: two ELF files, each with its code ($(basename "$ea"), $(basename "$eb"))"
# reuse generations (.g1.elf) of one dump do not collide with another dump's names either
# (dump a reuses its addresses: its generation 1 would be jit-4242.dump.g1.elf, the name
# dump b's code already has)
rm -rf "$tmp/elf"/*
mkdump "$tmp/a/jit-4242.dump" load 10000000 40 jit_old 33 load 10000000 40 jit_A 11
mkdump "$tmp/b/jit-4242.dump.g1" load 10000100 10 jit_B 22
run "$tmp/o" --elf "$tmp/elf" "$prof" "$tmp/b/jit-4242.dump.g1" "$tmp/a/jit-4242.dump"
ea=$(obj_of "$tmp/o" jit_A)
eb=$(obj_of "$tmp/o" jit_B)
expect '[ $rc = 0 ] && has_code "$eb" 0x10000100 22 && has_code "$ea" 0x10000000 11 &&
	[ "$(ls "$tmp/elf" | wc -l)" = 3 ] && has_code "$tmp/elf/jit-4242.dump-2.g1.elf" 0x10000000 33' \
	"a dump's reuse generation does not take another dump's ELF name ($(ls "$tmp/elf" | tr '\n' ' '))"

echo "# item 14: zstd streams that begin with a skippable frame (pzstd, seekable format)"
skippable() { printf '\x50\x2a\x4d\x18\x04\x00\x00\x00\xc1\x00\x00\x00'; zstd -q -c "$1"; }
"$CGJIT" augment -q -o "$tmp/plain.out" "$prof" "$bad/good.map"
skippable "$prof" >"$tmp/skip.cg.zst"
run "$tmp/o" "$tmp/skip.cg.zst" "$bad/good.map"
expect '[ $rc = 0 ] && cmp -s "$tmp/o" "$tmp/plain.out"' "a profile that starts with a skippable frame"
skippable "$bad/good.map" >"$tmp/skip.map.zst"
run "$tmp/o" "$prof" "$tmp/skip.map.zst"
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o" && cmp -s <(grep "^c\?fn=" "$tmp/o") <(grep "^c\?fn=" "$tmp/plain.out")' \
	"a map that starts with a skippable frame"
if command -v pzstd >/dev/null; then
	pzstd -q -c "$prof" >"$tmp/p.cg.zst" 2>/dev/null
	run "$tmp/o" "$tmp/p.cg.zst" "$bad/good.map"
	expect '[ $rc = 0 ] && cmp -s "$tmp/o" "$tmp/plain.out"' "pzstd's output"
else
	skip "pzstd's output (no pzstd)"
fi

echo "# issue 26: gzip input, sniffed by its magic (1f 8b) as zstd is, read once"
gzip -c "$prof" >"$tmp/g.cg.gz"
mkdir -p "$tmp/gzname" && gzip -c "$prof" >"$tmp/gzname/callgrind.out.4242.gz"
(cd "$tmp/gzname" && timeout 10 "$CGJIT" augment -q callgrind.out.4242.gz "$bad/good.map" 2>"$tmp/err")
expect '[ -f "$tmp/gzname/callgrind.out.jit.4242" ] && [ ! -e "$tmp/gzname/callgrind.out.jit.4242.gz" ] && cmp -s "$tmp/gzname/callgrind.out.jit.4242" "$tmp/plain.out"' \
	"augment of callgrind.out.N.gz writes plain callgrind.out.jit.N, not a plain file named .gz"
run "$tmp/o" "$tmp/g.cg.gz" "$bad/good.map"
expect '[ $rc = 0 ] && cmp -s "$tmp/o" "$tmp/plain.out"' "a gzip profile: the same output as the plain one"
gzip -c "$prof" >"$tmp/g-noext"
run "$tmp/o" "$tmp/g-noext" <(gzip -c "$bad/good.map")
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o" && cmp -s <(grep "^c\?fn=" "$tmp/o") <(grep "^c\?fn=" "$tmp/plain.out")' \
	"a gzip profile without .gz and a gzip map from a pipe"
rm -f "$tmp/g.fifo"
mkfifo "$tmp/g.fifo"
gzip -c "$prof" >"$tmp/g.fifo" &
run "$tmp/o" "$tmp/g.fifo" "$bad/good.map"
wait
expect '[ $rc = 0 ] && cmp -s "$tmp/o" "$tmp/plain.out"' "a gzip profile from a FIFO (opened once)"
half=$(( $(wc -c <"$prof") / 2 ))
{ head -c "$half" "$prof" | gzip -c; tail -c +"$((half + 1))" "$prof" | gzip -1 -c; } >"$tmp/multi.gz"
run "$tmp/o" "$tmp/multi.gz" "$bad/good.map"
expect '[ $rc = 0 ] && cmp -s "$tmp/o" "$tmp/plain.out"' "two gzip members concatenated are read whole, as gzip -dc reads them"
"$CGJIT" report "$prof" >"$tmp/r.plain" 2>/dev/null
"$CGJIT" report "$tmp/multi.gz" >"$tmp/r.gz" 2>"$tmp/err"
expect 'diff -q <(tail -n +2 "$tmp/r.plain") <(tail -n +2 "$tmp/r.gz") >/dev/null' "cgjit report of the gzip file: the plain file's report"
size=$(stat -c %s "$tmp/g.cg.gz")
head -c $((size - 3)) "$tmp/g.cg.gz" >"$tmp/cut.cg.gz"
run "$tmp/o" "$tmp/cut.cg.gz" "$bad/good.map"
expect '[ $rc = 1 ] && grep -q "cut.cg.gz: byte $((size - 3)): gzip stream cut short" "$tmp/err" && [ ! -e "$tmp/o" ]' \
	"a cut gzip stream: exit 1, the byte where it ends, no output"
"$CGJIT" report --format json "$tmp/cut.cg.gz" >"$tmp/r.json" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "cut.cg.gz: byte" "$tmp/err" && [ ! -s "$tmp/r.json" ]' "... and cgjit report of it: exit 1, nothing on stdout"
cp "$tmp/g.cg.gz" "$tmp/crc.cg.gz"
perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f; seek($f, -8, 2); read($f, my $c, 1);
	seek($f, -8, 2); print $f chr(ord($c) ^ 0xff);' "$tmp/crc.cg.gz"
run "$tmp/o" "$tmp/crc.cg.gz" "$bad/good.map"
expect '[ $rc = 1 ] && grep -q "crc.cg.gz: byte [0-9]*: corrupt gzip data (member at byte 0): incorrect data check" "$tmp/err" && [ ! -e "$tmp/o" ]' \
	"a wrong CRC-32: zlib's message, the byte, no output"
{ cat "$tmp/g.cg.gz"; echo junk; } >"$tmp/junk.cg.gz"
run "$tmp/o" "$tmp/junk.cg.gz" "$bad/good.map"
expect '[ $rc = 1 ] && grep -q "junk.cg.gz: byte $size: not gzip data after the member" "$tmp/err" && [ ! -e "$tmp/o" ]' \
	"bytes after the last member that begin no other: refused at that byte"

echo "# item 15: auto-discovery reads only regular files of the user or root"
mkdir -p "$tmp/md" "$tmp/pd"
cp "$prof" "$tmp/pd/callgrind.out.4242"
if [ "$(id -u)" = 0 ]; then
	cp "$bad/good.map" "$tmp/md/perf-4242.map"
	chown 12345 "$tmp/md/perf-4242.map"
	run "$tmp/o" --map-dir "$tmp/md" "$tmp/pd/callgrind.out.4242"
	expect '[ $rc = 1 ] && grep -q "perf-4242.map: owned by uid 12345, not by you (uid 0) or root" "$tmp/err" &&
		[ ! -e "$tmp/o" ]' "a map owned by another user is not read, and the error says why"
	mkdump "$tmp/pd/jit-4242.dump" load 10000000 40 jit_A 11
	run "$tmp/o" --no-elf --map-dir "$tmp/md" "$tmp/pd/callgrind.out.4242"
	expect '[ $rc = 0 ] && grep -q "skipped .*perf-4242.map: owned by uid 12345" "$tmp/err" &&
		grep -q "^fn=.*jit_A" "$tmp/o" && ! grep -q "jit_main" "$tmp/o"' \
		"... with a dump found beside the profile: the map is skipped, and the summary says so"
	rm -f "$tmp/pd/jit-4242.dump"
	run "$tmp/o" "$tmp/pd/callgrind.out.4242" "$tmp/md/perf-4242.map"
	expect '[ $rc = 0 ] && grep -q "^fn=.*jit_main" "$tmp/o"' "... named on the command line, it is read"
	rm -f "$tmp/md/perf-4242.map"
else
	other=$(find /etc /usr/share -maxdepth 2 -type f -readable ! -user 0 ! -user "$(id -u)" 2>/dev/null | head -1)
	if [ -n "$other" ]; then
		ln -s "$other" "$tmp/md/perf-4242.map"
		run "$tmp/o" --map-dir "$tmp/md" "$tmp/pd/callgrind.out.4242"
		expect '[ $rc = 1 ] && grep -q "perf-4242.map: owned by uid" "$tmp/err"' \
			"a map owned by another user is not read, and the error says why"
		rm -f "$tmp/md/perf-4242.map"
	else
		skip "not root, and no file of another user to point at"
	fi
fi
mkfifo "$tmp/md/perf-4242.map"
run "$tmp/o" --map-dir "$tmp/md" "$tmp/pd/callgrind.out.4242"
expect '[ $rc = 1 ] && grep -q "perf-4242.map: not a regular file (a FIFO)" "$tmp/err"' \
	"a FIFO under the map's name: skipped at once, not opened for reading (exit $rc)"
rm -f "$tmp/md/perf-4242.map"
mkdir "$tmp/md/perf-4242.map"
mkdump "$tmp/pd/jit-4242.dump" load 10000000 40 jit_A 11
run "$tmp/o" --no-elf --map-dir "$tmp/md" "$tmp/pd/callgrind.out.4242" --stats "$tmp/s.yaml"
expect '[ $rc = 0 ] && grep -q "^fn=.*jit_A" "$tmp/o" && grep -q "perf-4242.map: not a regular file (a directory)" "$tmp/err" &&
	grep -q "^- .*perf-4242.map: not a regular file (a directory)" "$tmp/s.yaml"' \
	"a directory under the map's name: skipped, the dump is used, summary and --stats say so"

echo "# item 16: ranges that end at 2^64, jitdump records past it, error offsets"
cat >"$tmp/top.cg" <<'EOF'
version: 1
creator: callgrind-3.19.0
pid: 4242
positions: instr line
events: Ir
ob=(1) ???
fl=(1) ???
fn=(1) 0xffffffffffffff00
0xffffffffffffff00 0 10
0xffffffffffffffff 0 5
fn=(2) 0x0000000010000000
0x10000000 0 1
totals: 16
EOF
printf 'ffffffffffffff00 100 top\n' >"$tmp/top.map"
run "$tmp/o" "$tmp/top.cg" "$tmp/top.map"
expect '[ $rc = 0 ] && grep -q "^fn=(1) top$" "$tmp/o" && "$CGCHECK" "$tmp/o" 2>/dev/null' \
	"a map range that ends exactly at 2^64 is accepted and names its code"
printf 'ffffffffffffff00 101 top\n' >"$tmp/past.map"
run "$tmp/o" "$tmp/top.cg" "$tmp/past.map"
expect '[ $rc = 1 ] && grep -q "past.map:1: range 0xffffffffffffff00 + 0x101 goes past the end" "$tmp/err"' \
	"one byte more is refused, with the line"
mkdump "$tmp/top.dump" load ffffffffffffff00 100 top 11 load 10000000 40 jit_A 22
run "$tmp/o" --elf "$tmp/elf" "$tmp/top.cg" "$tmp/top.dump"
expect '[ $rc = 0 ] && grep -q "^fn=(1) top$" "$tmp/o" && has_code "$(obj_of "$tmp/o" top)" 0xffffffffffffff00 11' \
	"a jitdump load that ends exactly at 2^64: named, its code in the ELF file"
mkdump "$tmp/wrap.dump" load ffffffffffffff00 101 wraps 11 load 10000000 40 jit_A 22
run "$tmp/o" --no-elf "$tmp/top.cg" "$tmp/wrap.dump"
expect '[ $rc = 0 ] && grep -q "1 code loads refused" "$tmp/err" && grep -q "^fn=.*jit_A" "$tmp/o"' \
	"a jitdump load past 2^64 is refused and counted, like other bad records; the rest is used"
mkdump "$tmp/move.dump" load 10000000 40 jit_A 22 move 10000000 ffffffffffffffe0
run "$tmp/o" --no-elf "$tmp/top.cg" "$tmp/move.dump" --stats "$tmp/s.yaml"
expect '[ $rc = 0 ] && grep -q "1 code moves refused" "$tmp/err" && grep -q "moves_refused: 1" "$tmp/s.yaml" &&
	grep -q "^fn=.*jit_A" "$tmp/o"' "a jitdump move past 2^64 is refused and counted; the rest is used"
zstd -q -c "$prof" >"$tmp/ck.cg.zst"
size=$(stat -c %s "$tmp/ck.cg.zst")
perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f; seek($f, -1, 2); read($f, my $c, 1);
	seek($f, -1, 2); print $f chr(ord($c) ^ 0xff);' "$tmp/ck.cg.zst"
run "$tmp/o" "$tmp/ck.cg.zst" "$bad/good.map"
expect '[ $rc = 1 ] && grep -q "ck.cg.zst: byte $((size - 4)): corrupt zstd data: the checksum" "$tmp/err" && [ ! -e "$tmp/o" ]' \
	"a zstd checksum error names the checksum's byte ($((size - 4)) of $size)"

echo "# item 12: jitdump moves: memory and ELF files follow the distinct code, not the moves"
"$top/scripts/make-hostile-jitdump" "$tmp/hj" 2000 200 1024 >/dev/null
mkdir -p "$tmp/hj/elf"
run "$tmp/o" --elf "$tmp/hj/elf" "$tmp/hj/callgrind.out.4243" "$tmp/hj/jit-4243.dump"
elf=$tmp/hj/elf/jit-4243.dump.elf
expect '[ $rc = 0 ] && grep -q "1984 moves of functions moved more than 16 times: name only" "$tmp/err" &&
	[ "$(stat -c %s "$elf")" -lt 100000 ]' \
	"2000 moves of one function: 16 copies with rows and code, the rest name only (ELF $(stat -c %s "$elf" 2>/dev/null) bytes)"
expect '[ "$(grep -c "^fn=" "$tmp/o")" = 1 ] && grep -q "^fn=(1) hostile_fn_1$" "$tmp/o" && "$CGCHECK" "$tmp/o" 2>/dev/null &&
	has_nop "$elf" 0x10000000 && has_nop "$elf" $((0x10000000 + 16 * 1024)) &&
	! has_nop "$elf" $((0x10000000 + 17 * 1024)) && ! has_nop "$elf" $((0x10000000 + 2000 * 1024))' \
	"... every copy is one function (same object and file); code in the ELF for the load and its first 16 moves"

echo "# one shared thread for the reads ahead and the writes (io_pump.h), or two of their own"
# A plain file in and out takes the shared thread where the process may use two CPUs; a
# pipe in, a zstd file out and $CGJIT_TEST_SEPARATE_IO take the two threads. The output is
# the same byte for byte whichever does the work; 10 MB read in 1 MiB buffers and written in
# 1 MiB blocks: both threads run (the first 1 MiB is read without one).
s=$top/samples/moarvm-callers
zstd -q -dc "$s/callgrind.out.21824.zst" >"$tmp/mc.cg"
run "$tmp/mc.pump" "$tmp/mc.cg" "$s/perf-21824.map"
rc_pump=$rc
CGJIT_TEST_SEPARATE_IO=1 run "$tmp/mc.sep" "$tmp/mc.cg" "$s/perf-21824.map"
rc_sep=$rc
rm -f "$tmp/mc.pipe"
cat "$tmp/mc.cg" | timeout 10 "$CGJIT" augment -q -o "$tmp/mc.pipe" - "$s/perf-21824.map" 2>"$tmp/err"
rc_pipe=${PIPESTATUS[1]}
run "$tmp/mc.zst" "$tmp/mc.cg" "$s/perf-21824.map"
expect '[ $rc_pump = 0 ] && [ $rc_sep = 0 ] && [ $rc_pipe = 0 ] && [ $rc = 0 ] &&
	[ "$(stat -c %s "$tmp/mc.pump")" -gt 3000000 ] && cmp -s "$tmp/mc.pump" "$tmp/mc.sep" &&
	cmp -s "$tmp/mc.pump" "$tmp/mc.pipe" && zstd -q -dc "$tmp/mc.zst" | cmp -s - "$tmp/mc.pump" &&
	"$CGCHECK" "$tmp/mc.pump" 2>/dev/null' \
	"moarvm-callers (10 MB): the same output from the shared thread, two threads of their own, a pipe in and zstd out ($(stat -c %s "$tmp/mc.pump" 2>/dev/null) bytes)"
# helper threads started (clones under strace; ASan's build starts threads of its own, so
# the counts are compared with one another): the shared one is one fewer
threads() { # OUT ENV...: the clones of one run
	rm -f "$1"
	local out=$1
	shift
	env "$@" strace -f -qq -e trace=clone,clone3 -o "$tmp/st" "$CGJIT" augment -q -o "$out" \
		"$tmp/mc.cg" "$s/perf-21824.map" 2>/dev/null
	grep -c 'clone' "$tmp/st"
}
# the same from a pipe: the reads ahead then on a thread of their own
threads_piped() { # OUT
	rm -f "$1"
	cat "$tmp/mc.cg" | strace -f -qq -e trace=clone,clone3 -o "$tmp/st" "$CGJIT" augment -q -o "$1" \
		- "$s/perf-21824.map" 2>/dev/null
	grep -c 'clone' "$tmp/st"
}
if ! command -v strace >/dev/null; then
	skip "no strace: the count of helper threads"
else
	fewer=1
	[ "$(nproc)" -ge 2 ] || fewer=0   # one CPU: no polling thread (io_pump_default_spin_ns)
	n_pump=$(threads "$tmp/mc.t1") n_sep=$(threads "$tmp/mc.t2" CGJIT_TEST_SEPARATE_IO=1)
	n_one=$(threads "$tmp/mc.t3" taskset -c 0) n_pipe=$(threads_piped "$tmp/mc.t4")
	expect '[ $((n_sep - n_pump)) = $fewer ] && [ "$n_one" = "$n_sep" ] && [ "$n_pipe" = "$n_sep" ] &&
		[ "$n_sep" -ge 2 ] && cmp -s "$tmp/mc.t1" "$tmp/mc.t2" && cmp -s "$tmp/mc.t1" "$tmp/mc.t3" &&
		cmp -s "$tmp/mc.t1" "$tmp/mc.t4"' \
		"threads started: $n_pump with a plain file in and out, $n_sep with \$CGJIT_TEST_SEPARATE_IO, $n_one on one CPU (taskset), $n_pipe from a pipe: $fewer fewer shared ($(nproc) CPUs); the same output"
	# a cgroup (v1 cpu controller, as on the development machine) that allows 1.5 CPUs of
	# two: no polling thread; 2.5 CPUs: the shared one
	cg=/sys/fs/cgroup/cpu/cgjit-test-$$
	if [ "$(nproc)" -ge 2 ] && [ -w /sys/fs/cgroup/cpu ] && mkdir "$cg" 2>/dev/null; then
		# each run in a shell moved into the cgroup first
		export -f threads
		export tmp s CGJIT
		n_q15=$(bash -c "echo \$\$ >$cg/cgroup.procs; echo 150000 >$cg/cpu.cfs_quota_us; threads $tmp/mc.t5")
		n_q25=$(bash -c "echo \$\$ >$cg/cgroup.procs; echo 250000 >$cg/cpu.cfs_quota_us; threads $tmp/mc.t6")
		rmdir "$cg"
		expect '[ "$n_q15" = "$n_sep" ] && [ "$n_q25" = "$n_pump" ] && cmp -s "$tmp/mc.t1" "$tmp/mc.t5" &&
			cmp -s "$tmp/mc.t1" "$tmp/mc.t6"' \
			"a cgroup's CPU quota: $n_q15 threads at 1.5 CPUs (as one CPU), $n_q25 at 2.5 (shared); the same output"
	else
		skip "no writable cgroup v1 cpu controller (or one CPU): the CPU quota rule"
	fi
fi
rm -f "$tmp"/mc.*

echo "# scripts/bench's reading-alone row: build/bench-read reads a profile as augment's reader does"
probe=$(dirname "$CGJIT")/bench-read
if [ ! -x "$probe" ]; then
	skip "no $probe (make check builds it)"
else
	zstd -q -dc "$top/samples/node-instr/callgrind.out.22916.zst" >"$tmp/ni.cg"
	blocks=$(grep -c '^fn=' "$tmp/ni.cg")
	lines=$(grep -c '^[0-9+*-]' "$tmp/ni.cg")
	for f in "$tmp/ni.cg" "$top/samples/node-instr/callgrind.out.22916.zst"; do
		"$probe" "$f" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		sunk=$(sed -n 's/.* fn= blocks, \([0-9]*\) lines to the sinks$/\1/p' "$tmp/err")
		expect '[ $rc = 0 ] && grep -Eqx "[0-9]+\.[0-9]{3}" "$tmp/out" && [ "$(tr -d .0 <"$tmp/out")" != "" ] &&
			grep -q " $blocks fn= blocks," "$tmp/err" && [ "${sunk:-0}" -gt $((lines / 2)) ]' \
			"bench-read $(basename "$f"): to the end, every one of its $blocks fn= blocks, the sinks given more than half as many lines as its $lines cost lines ($sunk); a CPU time above 0 on stdout"
	done
	head -c 300000 "$tmp/ni.cg" >"$tmp/cut.cg"
	"$probe" "$tmp/cut.cg" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && grep -q "^bench-read: $tmp/cut.cg:[0-9]*: the last line has no newline" "$tmp/err" && [ ! -s "$tmp/out" ]' \
		"bench-read on a cut profile: exit 1 with the reader's message, no figure"
fi

finish
