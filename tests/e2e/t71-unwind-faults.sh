#!/bin/bash
# The unwinder under faults (issue 15): binaries deleted or in another
# mount namespace, tables that do not fit --unwind-mem, a garbage frame
# pointer in JIT code, processes that exec and exit while being synced,
# and a kernel that will not load the unwinder.  Each run must end
# cleanly, account for every sample, and say what it could not do.
. "$(dirname "$0")/lib.sh"

# A -v counter: vcount FILE SED-REGEX, the regex capturing one number.
vcount() { sed -n "s/$2/\\1/p" "$1"; }

identity() {
	grep -q -x "profile: counted + filtered + dropped == taken" "$1" ||
		fail "the counters do not add up"
}

test_expect_success ROOT_BPF 'a no-FP binary deleted while it runs: whole stacks, 3.0 ratio' '
	cp "$WORKLOADS/burn-nofp" doomed &&
	bg ./doomed -t 2 -d 9 &&
	pid=$! && sleep 0.3 && rm doomed &&
	"$PROFILE" -F 499 -f -a -v -p $pid 6 >deleted.folded 2>err &&
	kill_bg &&
	identity err &&
	stats -c doomed --ratio func_b,func_a deleted.folded &&
	{ [ "$samples" -ge 3000 ] || fail "only $samples samples"; } &&
	{ in_range "$complete" 97 100 || fail "only $complete% complete"; } &&
	{ in_range "$ratio" 2.7 3.3 || fail "func_b/func_a $ratio"; }
'

test_expect_success ROOT_BPF,unshare 'a no-FP binary only in a private mount namespace: whole stacks' '
	mkdir -p private &&
	bg unshare -m --propagation private sh -c "
		mount -t tmpfs none \"$TRASH/private\" &&
		cp \"$WORKLOADS/burn-nofp\" \"$TRASH/private/burn-ns\" &&
		exec \"$TRASH/private/burn-ns\" -t 2 -d 9" &&
	sleep 0.5 &&
	pid=$(pgrep -f "^$TRASH/private/burn-ns") &&
	{ [ ! -e "$TRASH/private/burn-ns" ] || fail "the test binary is visible outside"; } &&
	"$PROFILE" -F 499 -f -a -v -p $pid 6 >ns.folded 2>err &&
	kill_bg &&
	identity err &&
	stats -c burn-ns --ratio func_b,func_a ns.folded &&
	{ [ "$samples" -ge 3000 ] || fail "only $samples samples"; } &&
	{ in_range "$complete" 97 100 || fail "only $complete% complete"; } &&
	{ in_range "$ratio" 2.7 3.3 || fail "func_b/func_a $ratio"; }
'

# python3.11 (460 KiB of rows), libperl (about 300 KiB), libstdc++, libc
# and the rest do not all fit in 1 MiB.
test_expect_success ROOT_BPF 'tables over --unwind-mem: one warning, those objects walked by FP, nothing lost' '
	bg /usr/bin/python3 -c "while True: pass" && p1=$! &&
	bg perl -e "while (1) { \$i++ }" && p2=$! &&
	bg "$WORKLOADS/cxxburn-nofp" 8 && p3=$! &&
	sleep 0.3 &&
	"$PROFILE" -F 499 -f -v --unwind-mem 1 -p $p1,$p2,$p3 4 >mem.folded 2>err &&
	kill_bg &&
	grep -v "^profile: \\(processes\\|files\\|recovery\\|caps\\|kernel symbols\\)" err &&
	identity err &&
	over=$(vcount err "^profile: unwind tables:.*, \\([0-9]*\\) over --unwind-mem.*") &&
	kib=$(vcount err "^profile: unwind tables: [0-9]* loaded, [0-9]* rows, \\([0-9]*\\) KiB.*") &&
	echo "over budget: $over objects; $kib KiB loaded" &&
	{ [ "${over:-0}" -ge 1 ] || fail "no object was over budget"; } &&
	{ [ "${kib:-9999}" -le 1024 ] || fail "$kib KiB loaded under a 1 MiB cap"; } &&
	{ [ "$(grep -c "found no room under --unwind-mem 1;" err)" -eq 1 ] ||
		fail "expected one warning naming an object"; } &&
	{ ! grep -q "^\\(python\\|perl\\|cxxburn\\).*\\[Missed" mem.folded || fail "stacks were lost"; }
'

# A file named with terminal escapes, too big for 1 MiB (cc1: about 3 MiB
# of rows): the warning that names it prints no control byte.
test_expect_success ROOT_BPF,cc 'an object over --unwind-mem named with escapes: the warning is safe text' '
	cc1=$(cc -print-prog-name=cc1) && [ -x "$cc1" ] &&
	esc=$(printf "\033") && bin="$TRASH/cc1-${esc}[2J${esc}]0;x" &&
	cp "$cc1" "$bin" &&
	for i in $(seq 2000); do echo "int f$i(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * $i ^ (s >> 3); return s; }"; done >big.c &&
	"$PROFILE" -F 499 -f --unwind-mem 1 -o esc.folded -- "$bin" -quiet -O2 big.c -o /dev/null 2>err &&
	grep "found no room under --unwind-mem 1;" err | cut -c1-200 &&
	grep -q "^profile: .*/cc1-?\[2J?\]0;x. and .* found no room under --unwind-mem 1;" err &&
	! grep -q "$esc" err
'

test_expect_success ROOT_BPF 'JIT code with a garbage frame pointer: the stack ends there, cleanly, and --unwind-debug says so' '
	bg "$WORKLOADS/jitburn" -g 8 && pid=$! &&
	sleep 0.3 &&
	"$PROFILE" -F 499 -f -v -U -p $pid 3 >jit.folded 2>err &&
	"$PROFILE" -F 499 -f -U --unwind-debug -p $pid 2 >debug.folded 2>debug.err &&
	kill_bg &&
	identity err &&
	jit=$(fsum jit.folded ";jit_spin_loop [0-9]*\$") && all=$(fsum jit.folded "") &&
	bad=$(vcount err "^profile: unwind ends:.* bad frame pointer \\([0-9]*\\),.*") &&
	echo "jit_spin_loop at the leaf: $jit of $all; walks ended on a bad frame pointer: $bad" &&
	{ [ "$all" -ge 500 ] || fail "too few samples"; } &&
	{ [ "$jit" -ge $((all * 9 / 10)) ] || fail "the JIT frame is not the leaf"; } &&
	{ [ "${bad:-0}" -ge $((jit * 9 / 10)) ] || fail "the walks did not end on the bad frame pointer"; } &&
	{ ! grep -q "Missed" jit.folded || fail "stacks were lost"; } &&
	marked=$(fsum debug.folded "^jitburn;\\[unwind: bad frame pointer\\];jit_spin_loop [0-9]+\$") &&
	all=$(fsum debug.folded "") &&
	echo "--unwind-debug: $marked of $all samples end in [unwind: bad frame pointer]" &&
	{ [ "$marked" -ge $((all * 9 / 10)) ] && [ "$all" -ge 100 ] || fail "no pseudo-frame"; }
'

# Processes that fork, exec and exit many times a second, each synced on
# its first sample: the exec and exit programs drop their mappings, and no
# stack of one image is walked with another's tables.
test_expect_success ROOT_BPF 'exec and exit while processes are synced: counted, whole, never mixed' '
	cp "$WORKLOADS/burn-nofp" "$TRASH/shortburn" &&
	bg sh "$PROFILE_TOP/tests/workloads/shortlived.sh" "$TRASH/shortburn" 5 &&
	"$PROFILE" -F 999 -f -a -v 6 >short.folded 2>err &&
	kill_bg &&
	identity err &&
	syncs=$(vcount err "^profile: unwind processes:.*(\\([0-9]*\\) syncs,.*") &&
	echo "syncs: $syncs" &&
	stats -c shortburn --ratio func_b,func_a short.folded &&
	{ [ "$samples" -ge 1000 ] || fail "only $samples samples"; } &&
	{ [ "${syncs:-0}" -ge 20 ] || fail "only ${syncs:-0} syncs"; } &&
	{ in_range "$complete" 90 100 || fail "only $complete% complete"; } &&
	{ in_range "$ratio" 2.7 3.3 || fail "func_b/func_a $ratio"; } &&
	# Below main, only root frames (all three from tables, fewer from a
	# frame-pointer walk before the sync): a walk with the tables of the
	# image before the exec would show others.
	mixed=$(grep "^shortburn;.*;main;" short.folded |
		grep -c -v -E "^shortburn;((_start;)?__libc_start_main;)?(__libc_start_call_main;)?main;" || :) &&
	echo "shortburn stacks through main with other frames below it: $mixed" &&
	{ [ "$mixed" -eq 0 ] || fail "frames of another image"; }
'

test_expect_success ROOT_BPF 'a kernel that will not load the unwinder: one warning, frame pointers, every sample' '
	bg "$WORKLOADS/burn-nofp" -d 6 && pid=$! &&
	sleep 0.3 &&
	PROFILE_TEST_UNWIND_FAIL=1 "$PROFILE" -F 499 -f -a -v -p $pid 2 >fb.folded 2>err &&
	kill_bg &&
	identity err &&
	{ [ "$(grep -c "^profile: cannot load the .eh_frame unwinder: .*; user stacks are walked by frame pointer only" err)" -eq 1 ] ||
		fail "expected one warning"; } &&
	{ grep -q "^profile: unwind: fp;" err || fail "-v does not say fp"; } &&
	stats -c burn-nofp --ratio func_b,func_a fb.folded &&
	{ [ "$samples" -ge 500 ] || fail "only $samples samples"; } &&
	{ in_range "$complete" 0 20 || fail "$complete% complete without tables?"; } &&
	{ grep -q "^profile: only [0-9]*% of user stacks reach their root frame; most stop in .*burn-nofp (.*; the .eh_frame unwinder is not running (see above)\$" err ||
		fail "no warning naming burn-nofp"; }
'

test_done
