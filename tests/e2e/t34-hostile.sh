#!/bin/bash
# A root profiler among hostile users: each test is an attack by nobody
# (setpriv) with inputs it built itself, against a whole-host root profile.
# Each checks that the run ends on time, stays under a stated memory bound
# (peak RSS from -vv), and names what it can; the -v counters say which
# cap was hit.
. "$(dirname "$0")/lib.sh"

# Bounds, KiB of peak RSS: a whole-host run is about 12 MiB here; a perf
# map is read whole before it is parsed (35 MB in the test).
RSS_SMALL=65536
RSS_PERFMAP=65536
# MiniDebugInfo is unpacked whole (up to 64 MiB) and parsed in place.
RSS_UNPACKED=98304
# AddressSanitizer's shadow memory and quarantine (make check-asan) add
# to RSS what the profiler does not keep: four times the room there.
if grep -a -q "__asan_init" "$PROFILE" 2>/dev/null; then
	RSS_SMALL=$((RSS_SMALL * 4)) RSS_PERFMAP=$((RSS_PERFMAP * 4))
	RSS_UNPACKED=$((RSS_UNPACKED * 4))
fi

# A directory nobody can reach (TRASH is private), with the helpers.
H=$(outside_dir /var/tmp)
chmod 755 "$H"

build_helpers() {
	[ -x "$H/hostile" ] && return 0
	cc -O2 -g -fno-omit-frame-pointer -o "$H/hostile" "$PROFILE_TOP/tests/e2e/helpers/hostile.c"
}

# hostile_bg ARGS...: start the helper as nobody; its stdout goes to h.out.
hostile_bg() {
	bg $NOBODY "$H/hostile" "$@" >h.out 2>&1
}


# profile_timed LIMIT ARGS...: run the profiler with -vv, at most LIMIT s;
# out, err, and the wall time in ms in $ms.
profile_timed() {
	local limit=$1 t0 t1
	shift
	t0=$(date +%s%N)
	rc=0
	timeout -s KILL "$limit" "$PROFILE" -vv "$@" >out 2>err || rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
}

peak_kib() { sed -n 's/^profile: report: .*peak RSS .*, \([0-9]*\) KiB$/\1/p' err | tail -1; }
caps_hit() { sed -n "s/^profile: caps hit:.*$1 \\([0-9]*\\).*/\\1/p" err; }

# The verdict every attack shares: exit 0 within SECONDS, RSS under BOUND.
check_run() {
	local secs=$1 bound=$2 peak
	peak=$(peak_kib)
	echo "exit $rc after $ms ms, peak RSS ${peak:-?} KiB (bound $bound)"
	grep -E "caps hit|hit the cap|perf maps|processes:|recovery" err || :
	[ "$rc" = 0 ] || fail "exit $rc"
	[ "$ms" -le $((secs * 1000)) ] || fail "took $ms ms, more than $secs s"
	[ -n "$peak" ] && [ "$peak" -le "$bound" ] || fail "peak RSS ${peak:-?} KiB over $bound"
}

t_debuglink() {
	build_helpers
	# A stripped binary without a build-id, linked to a debug file that is
	# then grown to 8 TiB: checking its CRC would read it all.
	cc -O2 -Wl,--build-id=none -o "$H/dl.full" "$PROFILE_TOP/tests/e2e/helpers/hostile.c"
	cp "$H/dl.full" "$H/huge.debug"
	objcopy --strip-all --add-gnu-debuglink="$H/huge.debug" "$H/dl.full" "$H/dl"
	truncate -s 8T "$H/huge.debug"
	chmod 755 "$H/dl"
	chown nobody "$H/dl" "$H/huge.debug"
	bg $NOBODY "$H/dl" map 8 "$H/dl" >h.out 2>&1
	wait_for h.out "^hostile: mapped" 5
	profile_timed 60 -F 49 -f 2
	check_run 15 $RSS_SMALL
	[ "$(caps_hit "CRC input")" -ge 1 ] || fail "the CRC cap was not counted"
	grep -q "^profile: '$H/dl' hit the cap on debug file CRC input" err ||
		fail "no warning naming the binary"
	[ "$(fsum out "^dl;")" -ge 20 ] || fail "the linked binary has no samples"
}

# map_as_nobody FILE: nobody maps FILE executable and spins for a while.
map_as_nobody() {
	build_helpers
	chmod 644 "$1"
	hostile_bg map 8 "$1"
	wait_for h.out "^hostile: mapped" 5
}

# crafted_attack NAME BOUND CAP MODE ARGS...: nobody maps NAME.elf, made by
# mkelf.py MODE; a 2 s whole-host profile stays under BOUND KiB, counts
# the cap CAP, and warns once naming the file (the first to hit it).
crafted_attack() {
	local name=$1 bound=$2 cap=$3 mode=$4
	shift 4
	python3 "$PROFILE_TOP/tests/e2e/helpers/mkelf.py" "$mode" "$H/$name.elf" "$@"
	ls -ls "$H/$name.elf"
	map_as_nobody "$H/$name.elf"
	profile_timed 60 -F 49 -f 2
	check_run 15 "$bound"
	[ "$(caps_hit "$cap")" -ge 1 ] || fail "the cap on $cap was not counted"
	grep -q "^profile: '$H/$name.elf' hit the cap on " err || fail "no warning naming the file"
	[ "$(fsum out "^hostile;")" -ge 20 ] || fail "no samples of the helper"
}

# 1.4 KB: 250 symbols naming one 4 MB string, xz-compressed.  A name that
# long is no real symbol: left out unscanned, and counted.
t_shared_names() { crafted_attack shared $RSS_SMALL "symbol names" shared 250 4000000; }

# 300 symbols, each naming the same 4 MB string from its own byte on.
t_suffix_names() { crafted_attack suffixes $RSS_SMALL "symbol names" suffixes 300 4000000; }

# A sparse file whose .gnu_debugdata claims 1 GiB.
t_big_section() { crafted_attack big $RSS_SMALL "section size" bigsection 1073741824; }

# A few KB: 1.3 million symbols at one address, naming 500 equal
# 64,000-byte strings in turn, in xz MiniDebugInfo (63 MB unpacked).
t_same_address() { crafted_attack same $RSS_UNPACKED "symbol names" sameaddr 1300000 64000 500; }

# Its table of section names claims 1 GiB (sparse).
t_big_shstrtab() { crafted_attack shstr $RSS_SMALL "section size" bigshstrtab 1073741824; }

t_perfmap_repeated() {
	build_helpers
	# About 35 MB: 1.1 million copies of one line.
	hostile_bg jit 10 7e0000000000 1100000
	wait_for h.out "^hostile: jit" 20
	pid=$(sed -n 's/.*, pid \([0-9]*\)$/\1/p' h.out)
	ls -l "/tmp/perf-$pid.map"
	profile_timed 60 -F 99 -f 3
	kill_bg
	rm -f "/tmp/perf-$pid.map"
	check_run 20 $RSS_PERFMAP
	[ "$(fsum out "^hostile;.*hostile_jit_code")" -ge 20 ] || fail "the JIT frame is not named"
}

t_perfmap_bind() {
	build_helpers
	printf '7e1000000000 1000 SECRET_ROOT_ONLY_LINE\n' >"$H/secret"
	chmod 600 "$H/secret"
	# In a user and mount namespace of its own, nobody puts root's file
	# where the profiler looks for its perf map.
	bg $NOBODY unshare -Urm sh -c 'touch /tmp/perf-$$.map &&
		mount --bind "$1" /tmp/perf-$$.map && echo "pid $$" &&
		exec "$2" jit 8 7e1000000000' sh "$H/secret" "$H/hostile" >h.out 2>&1
	wait_for h.out "^hostile: jit" 5
	pid=$(sed -n 's/^pid //p' h.out)
	profile_timed 60 -F 99 -f 3
	rm -f "/tmp/perf-$pid.map"
	check_run 20 $RSS_SMALL
	! grep -q SECRET out || fail "root's file was shown"
	grep -E -q "[1-9][0-9]* perf maps refused" err || fail "the refusal was not counted"
	[ "$(fsum out "^hostile;")" -ge 20 ] || fail "no samples of the helper"
}

t_forkloop() {
	build_helpers
	hostile_bg forkloop 7 5000
	wait_for h.out "^hostile: 5000 maps" 10
	profile_timed 60 -F 49 -f 6
	check_run 20 $RSS_SMALL
	cat h.out
	freed=$(sed -n 's/.*, \([0-9]*\) freed at exit without samples.*/\1/p' err)
	[ "${freed:-0}" -ge 100 ] || fail "children that exited were not freed (${freed:-?})"
}

t_mmapflood() {
	build_helpers
	bg "$WORKLOADS/burn" -n floodburn -d 6 >/dev/null
	( sleep 1; $NOBODY "$H/hostile" mmapflood 300000 >h.out 2>&1 ) &
	profile_timed 60 -F 49 -f 4
	wait
	check_run 20 $RSS_SMALL
	lost=$(sed -n 's/.*first-sample, [0-9]* exec-note, \([0-9]*\) lost.*/\1/p' err)
	rounds=$(sed -n 's/^profile: recovery from lost records: \([0-9]*\) rounds.*/\1/p' err)
	echo "lost $lost records, $rounds recoveries"
	# 300,000 mmaps overflow the ring here every time (115k-197k lost).
	[ "${lost:-0}" -gt 0 ] || fail "no record was lost: the flood did not test recovery"
	[ "${rounds:-0}" -ge 1 ] || fail "records were lost and not recovered from"
	[ "$(fsum out "^floodburn;.*func_b")" -ge 20 ] || fail "floodburn lost its names"
}

t_filtered() {
	build_helpers
	python3 "$PROFILE_TOP/tests/e2e/helpers/mkelf.py" bigsection "$H/big2.elf" 1073741824
	bg "$WORKLOADS/burn" -n target -d 8 >/dev/null
	target=$!
	sleep 0.3
	( profile_timed 60 -p "$target" -F 49 -f 3; echo "$rc $ms" >timed ) &
	sleep 0.5
	map_as_nobody "$H/big2.elf"
	wait %%
	read -r rc ms <timed
	check_run 15 $RSS_SMALL
	skipped=$(sed -n 's/.*, \([0-9]*\) of processes not profiled$/\1/p' err)
	[ "${skipped:-0}" -ge 1 ] || fail "nobody's records were not skipped"
	[ "$(caps_hit "section size")" = 0 ] || fail "a file of a process not profiled was parsed"
	[ "$(fsum out "^target;.*func_b")" -ge 20 ] || fail "the target is not named"
}

t_sigint() {
	local t0 t1
	build_helpers
	# Just under the CRC cap: reading it all takes a while.
	cc -O2 -Wl,--build-id=none -o "$H/dl2.full" "$PROFILE_TOP/tests/e2e/helpers/hostile.c"
	cp "$H/dl2.full" "$H/long.debug"
	objcopy --strip-all --add-gnu-debuglink="$H/long.debug" "$H/dl2.full" "$H/dl2"
	truncate -s $((1024 * 1024 * 1024 - 1)) "$H/long.debug"
	chmod 755 "$H/dl2"
	python3 "$PROFILE_TOP/tests/e2e/helpers/mkelf.py" suffixes "$H/suffixes2.elf" 300 4000000
	chmod 644 "$H/suffixes2.elf"
	"$PROFILE" -F 49 -v >out 2>err &
	pid=$!
	sleep 1
	# Each new mapping below makes the profiler read or parse a big file.
	for i in 1 2 3; do
		bg $NOBODY "$H/dl2" map 5 "$H/suffixes2.elf" >/dev/null 2>&1
	done
	sleep 0.3
	t0=$(date +%s%N)
	kill -INT $pid
	wait $pid
	t1=$(date +%s%N)
	echo "SIGINT to exit: $(((t1 - t0) / 1000000)) ms"
	[ $(((t1 - t0) / 1000000)) -le 1500 ] || fail "more than 1.5 s from SIGINT to exit"
	grep -q "counted + filtered + dropped == taken" err || fail "no accounting: the report did not finish"
}

test_expect_success ROOT_BPF,CAPS,cc,objcopy 'debug link to an 8 TiB file: refused unread, run on time' t_debuglink
test_expect_success ROOT_BPF,CAPS,cc,python3 '250 symbols naming one 4 MB string: bounded, counted' t_shared_names
test_expect_success ROOT_BPF,CAPS,cc,python3 'symbol names overlapping as suffixes: names cap, warning' t_suffix_names
test_expect_success ROOT_BPF,CAPS,cc,python3 'a 1 GiB sparse .gnu_debugdata: section cap, not read' t_big_section
test_expect_success ROOT_BPF,CAPS,cc,python3 '1.3M symbols at one address, equal 64 KiB names: bounded' t_same_address
test_expect_success ROOT_BPF,CAPS,cc,python3 'a 1 GiB sparse section-name table: section cap' t_big_shstrtab
test_expect_success ROOT_BPF,CAPS,cc 'a 35 MB perf map of one repeated line: bounded, named' t_perfmap_repeated
test_expect_success ROOT_BPF,CAPS,cc,unshare 'root-only file bind-mounted as a perf map: refused' t_perfmap_bind
test_expect_success ROOT_BPF,CAPS,cc 'fork loop with 5,000 mappings: children shared and freed' t_forkloop
test_expect_success ROOT_BPF,CAPS,cc 'mmap flood: losses counted and recovered from' t_mmapflood
test_expect_success ROOT_BPF,CAPS,cc,python3 'with -p, files of other processes are not parsed' t_filtered
test_expect_success ROOT_BPF,CAPS,cc,objcopy,python3 'SIGINT while hostile files are read: exit within 1.5 s' t_sigint
test_done
