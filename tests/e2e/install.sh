#!/bin/bash
# End-to-end tests of installing cgjit: `make install` into a DESTDIR puts exactly the
# binary and every man/*.1 there (the binary built before, not rebuilt), the installed
# binary runs and man finds and renders every page without groff warnings, `make uninstall`
# removes exactly those files; scripts/make-deb builds a .deb whose control file, contents,
# installation into a scratch dpkg root (fresh admin directory) and removal are checked.
# Needs no root. The build directory is $CGJIT's (build, or build-asan under check-asan).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"
export LC_ALL=C.UTF-8 MANPAGER=cat MANWIDTH=80
# dpkg-deb's scratch directories (/tmp/dpkg-deb.XXXXXX) go into this test's, which is
# removed at its end: two of six runs on 2026-11-27 had left one in /tmp
export TMPDIR=$tmp

bdir=$(dirname "$CGJIT")
b=${bdir#"$top"/}   # relative to $top when under it, as the Makefile's B usually is
version=$(sed -n 's/^#define CGJIT_VERSION "\([^"]*\)"$/\1/p' "$top/src/cmd/cmd.h")
pages=()
for f in "$top"/man/*.1; do pages+=("$(basename "$f")"); done
mk() { make -s --no-print-directory -C "$top" B="$b" "$@"; }
# the JVMTI agent is built (and installed) only where a JDK was found
agent=""
[ -f "$bdir/libcgjit-jvmti.so" ] && agent=libcgjit-jvmti.so

echo "# man pages in the source tree (${#pages[@]})"
for p in "${pages[@]}"; do
	man --warnings -l "$top/man/$p" >/dev/null 2>"$tmp/warn"
	w=$(head -c 300 "$tmp/warn" | tr '\n' ' ')
	expect '[ ! -s "$tmp/warn" ]' "man/$p renders without groff warnings${w:+: $w}"
	expect 'lexgrog "$top/man/$p" | grep -q ": \"${p%.1} - "' "man/$p: lexgrog reads its NAME line"
done

echo "# make install DESTDIR=... PREFIX=/usr/local"
root=$tmp/root
expect 'mk -q "$b/cgjit"' "$b/cgjit is up to date: install copies it, builds nothing"
mkdir -p "$root/usr/local/bin" "$root/usr/local/share/man/man1"
echo keep >"$root/usr/local/bin/other"
echo keep >"$root/usr/local/share/man/man1/other.1"
if mk install DESTDIR="$root" PREFIX=/usr/local >"$tmp/install.log" 2>&1; then
	ok "make install exits 0"
else
	notok "make install failed: $(tail -n 5 "$tmp/install.log")"
fi
{
	echo "usr/local/bin/cgjit"
	echo "usr/local/bin/other"
	[ -z "$agent" ] || echo "usr/local/lib/cgjit/$agent"
	echo "usr/local/lib/cgjit/cgjit_luajit.lua"
	for p in "${pages[@]}" other.1; do echo "usr/local/share/man/man1/$p"; done
} | LC_ALL=C sort >"$tmp/expected"
(cd "$root" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) >"$tmp/found"
d=$(diff "$tmp/expected" "$tmp/found" | grep '^[<>]' | tr '\n' ' ')
expect 'cmp -s "$tmp/expected" "$tmp/found"' \
	"exactly the binary, ${agent:+the JVMTI agent, }the LuaJIT agent, ${#pages[@]} man pages are installed beside the files already there${d:+: $d}"
expect 'cmp -s "$CGJIT" "$root/usr/local/bin/cgjit"' "the installed binary is $b/cgjit"
expect '[ "$(stat -c %a "$root/usr/local/bin/cgjit")" = 755 ] && [ "$(stat -c %a "$root/usr/local/share/man/man1/cgjit.1")" = 644 ]' \
	"modes: binary 755, man pages 644"
out=$("$root/usr/local/bin/cgjit" --version 2>&1)
expect '[ "$out" = "cgjit $version" ]' "installed cgjit --version prints 'cgjit $version' (src/cmd/cmd.h): '$out'"
mandir=$root/usr/local/share/man
out=$(man -M "$mandir" -w cgjit 2>&1)
expect '[ "$out" = "$mandir/man1/cgjit.1" ]' "man -M DESTDIR/usr/local/share/man -w cgjit finds the page"
for p in "${pages[@]}"; do
	man --warnings -M "$mandir" "${p%.1}" >"$tmp/page" 2>"$tmp/warn"
	w=$(head -c 300 "$tmp/warn" | tr '\n' ' ')
	expect '[ ! -s "$tmp/warn" ] && grep -q "^NAME" "$tmp/page"' \
		"man ${p%.1}: rendered from the installed tree, no warnings${w:+: $w}"
done

echo "# make uninstall with the same DESTDIR"
if mk uninstall DESTDIR="$root" PREFIX=/usr/local >"$tmp/uninstall.log" 2>&1; then
	ok "make uninstall exits 0"
else
	notok "make uninstall failed: $(tail -n 5 "$tmp/uninstall.log")"
fi
(cd "$root" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) >"$tmp/left"
printf 'usr/local/bin/other\nusr/local/share/man/man1/other.1\n' >"$tmp/others"
expect 'cmp -s "$tmp/others" "$tmp/left"' \
	"uninstall removes every installed file and nothing else (left: $(tr '\n' ' ' <"$tmp/left"))"
expect 'mk uninstall DESTDIR="$root" PREFIX=/usr/local >/dev/null 2>&1' "uninstall again: nothing to remove, exit 0"
root2=$tmp/root2
mk install DESTDIR="$root2" PREFIX=/opt/cgjit BINDIR=/opt/bin LIBDIR=/opt/lib MANDIR=/opt/man >/dev/null 2>&1
expect '[ -x "$root2/opt/bin/cgjit" ] && [ -f "$root2/opt/man/man1/cgjit.1" ] && [ ! -e "$root2/opt/cgjit" ] && { [ -z "$agent" ] || [ -f "$root2/opt/lib/cgjit/$agent" ]; } && [ -f "$root2/opt/lib/cgjit/cgjit_luajit.lua" ]' \
	"BINDIR, LIBDIR and MANDIR override PREFIX"

echo "# the Debian package (scripts/make-deb)"
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg >/dev/null; then
	skip "the package checks need dpkg-deb and dpkg (not installed)"
	finish
	exit
fi
arch=$(dpkg --print-architecture)
deb=$tmp/deb/cgjit_${version}-1_${arch}.deb
# as a user runs it: not inside `make -j2 check`'s jobserver, whose warning would be output
out=$(cd "$tmp" && MAKEFLAGS= B="$b" "$top/scripts/make-deb" "$tmp/deb" 2>&1)
expect '[ "$out" = "$deb" ] && [ -f "$deb" ]' "make-deb writes cgjit_${version}-1_$arch.deb: $out"
expect '[ "$(dpkg-deb -f "$deb" Package Version Architecture Section Priority)" = "Package: cgjit
Version: $version-1
Architecture: $arch
Section: devel
Priority: optional" ]' "control: Package, Version from src/cmd/cmd.h, Architecture, Section, Priority"
depends=$(dpkg-deb -f "$deb" Depends)
expect '[[ $depends == *libc6* ]] && [[ $depends == *libzstd* ]] && [[ $depends == *libyaml* ]] && [[ $depends == *libjansson* ]]' \
	"Depends names the shared libraries' packages: $depends"
expect 'dpkg-deb -f "$deb" Maintainer Description | grep -q "^Maintainer: .*<.*@.*>" && dpkg-deb -f "$deb" Description | grep -q "^ "' \
	"control: Maintainer with an address, a long Description"
dpkg-deb -c "$deb" >"$tmp/contents"
want="./usr/bin/cgjit ./usr/share/doc/cgjit/copyright ./usr/share/doc/cgjit/changelog.Debian.gz${agent:+ ./usr/lib/cgjit/$agent} ./usr/lib/cgjit/cgjit_luajit.lua"
for p in "${pages[@]}"; do want="$want ./usr/share/man/man1/$p.gz"; done
missing=""
for f in $want; do grep -q " $f\$" "$tmp/contents" || missing="$missing $f"; done
expect '[ -z "$missing" ] && [ "$(grep -vc "/$" "$tmp/contents")" = "$(echo $want | wc -w)" ]' \
	"contents: the binary, ${agent:+the JVMTI agent, }the LuaJIT agent, ${#pages[@]} gzipped man pages, copyright, changelog.Debian.gz and nothing else${missing:+; missing:$missing}"
expect '! awk "\$2 != \"root/root\"" "$tmp/contents" | grep -q .' "every file is owned by root/root"
depkgs=$(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/|.*//; s/ //g')
absent=""
for d in $depkgs; do dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q "install ok installed" || absent="$absent $d"; done
expect '[ -z "$absent" ]' "every package in Depends is installed on this host${absent:+; absent:$absent}"

# A fresh dpkg database in a scratch root: nothing of the real system is touched. Its
# dependencies are this host's (checked above), not the scratch root's: --force-depends.
debroot=$tmp/debroot
mkdir -p "$debroot/var/lib/dpkg/info" "$debroot/var/lib/dpkg/updates"
: >"$debroot/var/lib/dpkg/status"
force=--force-depends
[ "$(id -u)" = 0 ] || force=$force,not-root
dpk() { dpkg --root="$debroot" "$force" --path-include='/usr/share/man/*' "$@"; }
if dpk -i "$deb" >"$tmp/dpkg.log" 2>&1; then
	ok "dpkg --root=SCRATCH -i installs the package"
else
	notok "dpkg -i failed: $(tail -n 5 "$tmp/dpkg.log")"
fi
expect '[ "$(dpkg-query --admindir="$debroot/var/lib/dpkg" -W -f="\${Status} \${Version}" cgjit 2>/dev/null)" = "install ok installed $version-1" ]' \
	"the scratch database has cgjit $version-1 installed"
out=$("$debroot/usr/bin/cgjit" --version 2>&1)
expect '[ "$out" = "cgjit $version" ]' "the packaged cgjit --version prints 'cgjit $version': '$out'"
out=$(man -M "$debroot/usr/share/man" -w cgjit 2>&1)
expect '[ "$out" = "$debroot/usr/share/man/man1/cgjit.1.gz" ]' "man -M SCRATCH/usr/share/man -w cgjit finds the gzipped page: $out"
man --warnings -M "$debroot/usr/share/man" cgjit-check >"$tmp/page" 2>"$tmp/warn"
expect '[ ! -s "$tmp/warn" ] && grep -q "BUDGET FILE" "$tmp/page"' "the packaged cgjit-check page renders without warnings"
if dpk -r cgjit >"$tmp/dpkg.log" 2>&1; then
	ok "dpkg --root=SCRATCH -r cgjit removes it"
else
	notok "dpkg -r failed: $(tail -n 5 "$tmp/dpkg.log")"
fi
left=$(cd "$debroot" && find usr ! -type d 2>/dev/null | head -n 5)
expect '[ -z "$left" ] && [ "$(dpkg-query --admindir="$debroot/var/lib/dpkg" -W -f="\${Status}" cgjit 2>/dev/null)" != "install ok installed" ]' \
	"after removal no file of the package is left${left:+: $left}"
finish
