#!/bin/bash
# End-to-end test of function ids kept from the input (issue 25 step 1): each profile is
# rewritten with hostile ids (every object, file and function id N becomes
# 9223372036854775000 + 7N: near 2^63, sparse, and in a multi-part file used again in
# every part, as the original's are) and augmented, and so is the original. Both outputs
# must be the same profile for every reader: scripts/callgrind-canonical (names, files,
# objects, costs, arcs, jumps: ids play no part), callgrind_annotate --tree=both (sorted:
# self costs and the calls in and out, from which its inclusive costs follow; Annotate.pm's
# question, so the augmented originals' answers are those reports.sh kept), and cgcheck's
# invariants; the hostile one must carry the hostile ids, and the functions cgjit adds ids
# above them.
# Prints "ok"/"not ok" per check and "N passed, N failed, N skipped" last.
. "$(dirname "$0")/harness.sh"

command -v callgrind_annotate >/dev/null || { notok "callgrind_annotate is needed"; finish; exit; }

# hostile IN OUT: the ids of IN's name lines moved near 2^63 (perl's bigint: exact)
hostile() {
	perl -Mbigint -pe 's/^((?:c?ob|c?f[lin]|fe|cfl|jf[in])=\()(\d+)\)/$1 . (9223372036854775000 + 7 * $2) . ")"/e' "$1" >"$2"
}

# sorted FILE: callgrind_annotate's paragraphs, each sorted (its hashes' order varies)
sorted() {
	grep -v '^Profile data file' "$1" |
		LC_ALL=C perl -00 -ne 'chomp; push @g, join("\n", sort split /\n/); END { print "$_\n\n" for sort @g }'
}

n=0
for d in "$top"/tests/jitprog/profiles/{trampoline,parts,callers2,jumps,recs10} \
	 "$top"/samples/{moarvm-callers,moarvm-parts,node-baseline,java-jvmti}; do
	name=$(basename "$d")
	prof=$(ls "$d"/callgrind.out.* | head -n 1)
	map=$(ls "$d"/perf-*.map | grep -v overlap | head -n 1)
	case "$prof" in
	*.zst) zstd -dc -q "$prof" >"$tmp/$name.in" ;;
	*) cp "$prof" "$tmp/$name.in" ;;
	esac
	hostile "$tmp/$name.in" "$tmp/$name.hostile"
	if ! grep -q '^fn=(92233720368547' "$tmp/$name.hostile"; then
		notok "$name: the hostile copy has hostile ids"
		continue
	fi
	for v in in hostile; do
		"$CGJIT" augment --no-elf -q "$tmp/$name.$v" "$map" -o "$tmp/$name.$v.out" \
			2>"$tmp/$name.$v.err" || notok "$name ($v): augment failed: $(head -c 300 "$tmp/$name.$v.err")"
		"$top/scripts/callgrind-canonical" "$tmp/$name.$v.out" >"$tmp/$name.$v.canon"
		perl -I"$top/tests/e2e" -MAnnotate -e 'my ($rc, @l) = Annotate::tree(@ARGV); print @l; exit $rc' \
			"$tmp/$name.$v.out" >"$tmp/$name.$v.ann" 2>&1
		sorted "$tmp/$name.$v.ann" >"$tmp/$name.$v.anns"
	done
	expect "cmp -s '$tmp/$name.in.canon' '$tmp/$name.hostile.canon'" \
		"$name: the hostile ids give the same profile (callgrind-canonical)"
	expect "cmp -s '$tmp/$name.in.anns' '$tmp/$name.hostile.anns' && [ -s '$tmp/$name.in.anns' ]" \
		"$name: callgrind_annotate reads the same self costs and call trees"
	expect "'$CGCHECK' '$tmp/$name.hostile.out' >'$tmp/$name.check' 2>&1" \
		"$name: cgcheck finds every identity bound once in the hostile output"
	# every function id written is the input's or above the part's largest input id
	expect "perl -ne 'if (/^c?fn=\\((\\d+)\\)/) { \$id = \$1; \$ok = 0 if \$id < 9223372036854775000 }
		END { exit(defined \$ok ? 1 : 0) }' '$tmp/$name.hostile.out'" \
		"$name: no function id below the hostile range"
	n=$((n + 1))
done
expect "[ $n = 9 ]" "every profile was compared"
finish
