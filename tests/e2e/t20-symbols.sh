#!/bin/bash
# User-space symbolization against workloads with known names: C++
# demangling, JIT code named by a perf map, libc named through its debug
# file, binaries deleted while they run or present only in another mount
# namespace, processes that exit long before the profile ends, and a perf
# map planted by another user; kernel frames named by the kernel agree
# with /proc/kallsyms.
. "$(dirname "$0")/lib.sh"

# bg records its pids in the body's subshell: each body reaps its own.
reap() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	true
}

test_expect_success ROOT_BPF 'cxxburn: C++ names are demangled' '
	bg "$WORKLOADS/cxxburn" 6 >/dev/null &&
	"$PROFILE" -F 499 -f -U -p $! 3 >cxx.folded 2>err &&
	reap &&
	m=$(fsum cxx.folded ";engine::Matrix<double>::multiply\\(unsigned long\\) const( |;)") &&
	h=$(fsum cxx.folded ";engine::hash_strings\\(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, .*> const&\\)( |;)") &&
	all=$(fsum cxx.folded "") &&
	echo "multiply=$m hash_strings=$h all=$all" &&
	{ [ "$m" -ge $((all / 5)) ] || fail "multiply not demangled"; } &&
	{ [ "$h" -ge $((all / 5)) ] || fail "hash_strings not demangled"; } &&
	{ ! grep -q "_ZNK6engine\|_ZN6engine" cxx.folded || fail "mangled names left"; }
'

test_expect_success ROOT_BPF '--no-demangle keeps the mangled names' '
	bg "$WORKLOADS/cxxburn" 4 >/dev/null &&
	"$PROFILE" --no-demangle -F 499 -f -U -p $! 2 >raw.folded 2>err &&
	reap &&
	grep -q ";_ZNK6engine6MatrixIdE8multiplyEm [0-9]*$" raw.folded &&
	grep -q ";_ZN6engine12hash_strings" raw.folded &&
	! grep -q "engine::" raw.folded
'

test_expect_success ROOT_BPF 'jitburn: JIT code is named by /tmp/perf-PID.map' '
	bg "$WORKLOADS/jitburn" 5 &&
	pid=$! &&
	"$PROFILE" -F 499 -f -U -p $pid 2 >jit.folded 2>err &&
	reap && rm -f /tmp/perf-$pid.map &&
	j=$(fsum jit.folded ";jit_spin_loop( |;)") && all=$(fsum jit.folded "") &&
	echo "jit_spin_loop=$j all=$all" &&
	{ [ "$j" -ge $((all * 8 / 10)) ] || fail "jit_spin_loop missing"; }
'

# A runtime may announce code after it first ran it.  Stacks are named
# while the run goes on once the count map has grown (manystacks beside,
# whole host: its first thousand keys take a second or two, and jitburn
# starts once the profiler is attached): those through the code before
# its line was in the map must not keep it unnamed, the report looks again.
test_expect_success ROOT_BPF 'jitburn: JIT code its perf map names 4 s after it ran is named in every sample' '
	bg "$WORKLOADS/manystacks" -D 6 -t 1 -d 10 >/dev/null
	"$PROFILE" -F 999 -f -U -vv 7 >late.folded 2>err &
	prof=$! &&
	wait_attached $prof &&
	bg "$WORKLOADS/jitburn" -l 4 8 &&
	pid=$! &&
	wait $prof &&
	reap && rm -f /tmp/perf-$pid.map &&
	grep "^profile: report:" err &&
	pre=$(sed -n "s/^profile: report: [0-9]* keys (\([0-9]*\) prefetches before).*/\1/p" err) &&
	{ [ "${pre:-0}" -ge 1 ] || fail "no prefetch: the case did not name stacks early"; } &&
	j=$(fsum late.folded "^jitburn;.*;jit_spin_loop( |;)") && all=$(fsum late.folded "^jitburn;") &&
	echo "jitburn: jit_spin_loop=$j all=$all" &&
	{ [ "$all" -gt 1000 ] && [ "$j" -ge $((all * 95 / 100)) ] ||
		fail "samples from before the map had the code left unnamed"; }
'

test_expect_success ROOT_BPF 'JIT code in a container: its own /tmp and pid namespace' '
	# Outside /tmp, which the container covers: the build may be under it.
	dir=$(outside_dir /var/tmp) && cp "$WORKLOADS/jitburn" "$dir/" &&
	bg unshare -p -f -m --propagation private sh -c "
		mount -t tmpfs none /tmp && exec \"$dir/jitburn\" 6" &&
	sleep 0.5 &&
	pid=$(pgrep -f "^$dir/jitburn 6") &&
	{ [ ! -e /tmp/perf-$pid.map ] && [ ! -e /tmp/perf-1.map ] || fail "map visible outside"; } &&
	"$PROFILE" -F 499 -f -U -p $pid 2 >cjit.folded 2>err &&
	reap &&
	j=$(fsum cjit.folded ";jit_spin_loop( |;)") && all=$(fsum cjit.folded "") &&
	echo "jit_spin_loop=$j all=$all" &&
	{ [ "$all" -gt 100 ] && [ "$j" -ge $((all * 8 / 10)) ] || fail "jit_spin_loop missing"; }
'

test_expect_success ROOT_BPF 'a perf map planted by another user is refused' '
	bg "$WORKLOADS/jitburn" -k 6 &&
	pid=$! && map=/tmp/perf-$pid.map &&
	for i in 1 2 3 4 5 6 7 8 9 10; do [ -s $map ] && break; sleep 0.1; done &&
	addr=$(cut -d" " -f1 $map) &&
	rm -f $map &&
	runuser -u nobody -- sh -c "echo \"$addr 10 planted_by_nobody\" >$map" &&
	"$PROFILE" -F 499 -f -U -p $pid 2 >planted.folded 2>err &&
	reap && rm -f $map &&
	all=$(fsum planted.folded "") && echo "all=$all" &&
	{ [ "$all" -gt 100 ] || fail "too few samples"; } &&
	{ ! grep -q planted_by_nobody planted.folded || fail "planted name shown"; }
'

# Address, name+offset and module of every kernel frame in plain -v output.
# The address is tagged /leaf or /ret: a record's first frame is where the
# CPU was, named at its address, the others at address - 1, so one address
# can have two right names.
kframes() {
	awk "/^    ffff[0-9a-f]+ / { print \$1 (infr ? \"/ret\" : \"/leaf\"), \$2, \$3; infr = 1; next }
	     { infr = 0 }" "$1" | sort -u
}

test_expect_success ROOT_BPF 'faulter: kernel frames named by the kernel match /proc/kallsyms (--kallsyms)' '
	trap reap EXIT &&
	bg "$WORKLOADS/faulter" 6 >/dev/null && pid=$! &&
	sleep 0.3 &&
	{ "$PROFILE" --kallsyms -K -v -F 499 -p $pid 2 >ks.plain 2>ks.err & p1=$!; } &&
	"$PROFILE" -K -v -F 499 -p $pid 2 >kn.plain 2>kn.err &&
	wait $p1 &&
	kframes kn.plain >kn.frames && kframes ks.plain >ks.frames &&
	join kn.frames ks.frames >both &&
	n=$(wc -l <both) &&
	named=$(grep -v -c "\[unknown\]" kn.frames || :) &&
	echo "kernel frames: $(wc -l <kn.frames) by the kernel ($named named), $(wc -l <ks.frames) by kallsyms, $n addresses in both" &&
	sed -n 1,3p both &&
	{ [ "$n" -ge 20 ] || fail "too few kernel frames in common"; } &&
	{ [ "$named" -eq "$(wc -l <kn.frames)" ] || fail "kernel frames left [unknown]"; } &&
	{ ! awk "\$2 != \$4 || \$3 != \$5" both | grep . || fail "names differ"; } &&
	grep "kernel symbols:" kn.err ks.err &&
	{ grep -q -E "^profile: kernel symbols: [0-9]+ addresses named by the kernel in [0-9]+ runs; /proc/kallsyms not read\$" kn.err ||
		fail "-v does not say the kernel named the frames"; } &&
	{ grep -q -x "profile: kernel symbols: from /proc/kallsyms" ks.err || fail "--kallsyms -v: no line"; }
'

test_expect_success ROOT_BPF,LIBC_DEBUG_FILE 'burn: libc frames are named through the debug file' '
	bg "$WORKLOADS/burn" -t 2 -d 5 &&
	"$PROFILE" -F 499 -f -U -p $! 2 >libc.folded 2>err &&
	reap &&
	s=$(fsum libc.folded "^burn;.*start_thread;worker;") &&
	m=$(fsum libc.folded "^burn;.*__libc_start_call_main;main;") &&
	echo "start_thread=$s __libc_start_call_main=$m" &&
	[ "$s" -gt 100 ] && [ "$m" -gt 100 ]
'

test_expect_success ROOT_BPF 'a binary deleted while it runs is named' '
	cp "$WORKLOADS/burn" doomed &&
	bg ./doomed -d 6 &&
	pid=$! && sleep 0.3 && rm doomed &&
	"$PROFILE" -F 499 -f -U -p $pid 2 >deleted.folded 2>err &&
	reap &&
	ab=$(fsum deleted.folded ";func_[ab]( |;)") && all=$(fsum deleted.folded "") &&
	echo "func_a+func_b=$ab all=$all" &&
	{ [ "$ab" -ge $((all * 9 / 10)) ] && [ "$all" -gt 100 ] || fail "unnamed"; }
'

test_expect_success ROOT_BPF 'a binary that exists only in a private mount namespace is named' '
	mkdir -p private &&
	bg unshare -m --propagation private sh -c "
		mount -t tmpfs none \"$TRASH/private\" &&
		cp \"$WORKLOADS/burn\" \"$TRASH/private/burn-ns\" &&
		exec \"$TRASH/private/burn-ns\" -d 6" &&
	sleep 0.5 &&
	pid=$(pgrep -f "^$TRASH/private/burn-ns") &&
	{ [ ! -e "$TRASH/private/burn-ns" ] || fail "the test binary is visible outside"; } &&
	"$PROFILE" -F 499 -f -U -p $pid 2 >ns.folded 2>err &&
	reap &&
	ab=$(fsum ns.folded ";func_[ab]( |;)") && all=$(fsum ns.folded "") &&
	echo "func_a+func_b=$ab all=$all" &&
	{ [ "$ab" -ge $((all * 9 / 10)) ] && [ "$all" -gt 100 ] || fail "unnamed"; }
'

test_expect_success ROOT_BPF 'shortlived: 95% of shortburn samples show func_a or func_b' '
	cp "$WORKLOADS/burn" "$TRASH/burn-short" &&
	bg sh "$PROFILE_TOP/tests/workloads/shortlived.sh" "$TRASH/burn-short" 5 &&
	( sleep 5.5; rm -f "$TRASH/burn-short" ) &
	"$PROFILE" -F 999 -f -U 7 >short.folded 2>err &&
	reap &&
	{ [ ! -e "$TRASH/burn-short" ] || fail "the binary was not deleted"; } &&
	all=$(fsum short.folded "^shortburn;") &&
	ab=$(fsum short.folded "^shortburn;.*;func_[ab]( |;)") &&
	echo "shortburn: func_a+func_b=$ab of $all" &&
	{ [ "$all" -ge 1000 ] || fail "too few shortburn samples"; } &&
	{ [ $((ab * 100)) -ge $((all * 95)) ] || fail "below 95%"; }
'

test_done
