#!/bin/sh
# Seed inputs for the fuzz targets, built from the test fixtures: ELF files
# (PIE, non-PIE, a shared library; stripped, with a debuglink, with
# MiniDebugInfo, a separate debug file), xz streams of MiniDebugInfo, perf
# maps and /proc maps texts.
#   seeds.sh DIR
set -eu
out=${1:?usage: seeds.sh DIR}
fx=$(cd "$(dirname "$0")/../tests/fixtures" && pwd)
mkdir -p "$out/elf" "$out/minidebuginfo" "$out/perfmap" "$out/procmaps" "$out/ehframe"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

cc -Os -fPIE -pie "$fx/fixture.c" -o "$t/pie"
cc -Os -fno-pie -no-pie "$fx/fixture.c" -o "$t/nopie"
cc -Os -shared -fPIC "$fx/fixlib.c" -o "$t/lib.so"
objcopy --only-keep-debug "$t/lib.so" "$t/lib.debug"
strip --strip-all "$t/lib.so" -o "$t/stripped.so"
cp "$t/stripped.so" "$t/linked.so"
objcopy --add-gnu-debuglink="$t/lib.debug" "$t/linked.so"
# MiniDebugInfo, as Fedora builds it.
nm -D "$t/lib.so" --format=posix --defined-only | awk '{print $1}' | sort >"$t/dyn"
nm "$t/lib.so" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' | sort >"$t/funcs"
comm -13 "$t/dyn" "$t/funcs" >"$t/keep"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$t/keep" "$t/lib.debug" "$t/mini"
xz -f -k "$t/mini"
cp "$t/stripped.so" "$t/mini.so"
objcopy --add-section .gnu_debugdata="$t/mini.xz" "$t/mini.so"
strip --strip-all "$t/pie" -o "$t/pie-stripped"
for f in pie nopie lib.so lib.debug stripped.so linked.so mini mini.so pie-stripped; do
	cp "$t/$f" "$out/elf/$f"
done
# .eh_frame: whole files, and bare sections (the target wraps them in an ELF).
cc -Os -fomit-frame-pointer -fPIE -pie "$fx/fixture.c" -o "$t/nofp"
for f in pie nofp lib.so; do
	cp "$t/$f" "$out/ehframe/$f"
	objcopy -O binary --only-section=.eh_frame "$t/$f" "$out/ehframe/$f.eh_frame"
done
cp "$t/mini.xz" "$out/minidebuginfo/lib.xz"
xz -9e -c "$t/mini" >"$out/minidebuginfo/lib-9e.xz"
xz -c "$t/pie" >"$out/minidebuginfo/pie.xz"

printf '7f0000001000 40 jit_plain\n0x7f0000002000 0x20 LazyCompile:~run /x.js:1\n' \
	>"$out/perfmap/plain.map"
printf '1000 100 old\r\n1000 10 new\n  2000\t8\tx\nbad line\n' >"$out/perfmap/odd.map"

cat /proc/self/maps >"$out/procmaps/self"
printf '%s\n' \
	'55d0c8a00000-55d0c8a01000 r-xp 00001000 fd:01 1234   /usr/bin/x (deleted)' \
	'7f0000000000-7f0000001000 r-xs 00000000 00:01 99     /memfd:jit (deleted)' \
	'7ffd1000-7ffd3000 r-xp 00000000 00:00 0              [vdso]' \
	'7f00-7f10 rwxp 00000000 00:00 0 ' >"$out/procmaps/odd"
