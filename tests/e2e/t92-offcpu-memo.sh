#!/bin/bash
# Off-CPU walks kept per thread (bpf/unwind/unwind.bpf.h, struct uw_memo):
# a thread that blocks again with the same registers is walked from its
# memo when the stack words its last walk read are the same too.
# tests/workloads/offcpu -s (no frame pointers) blocks its main thread in
# func_x 3 ms and func_y 1 ms, in the order x x y y (each pair from one
# call site in twice()), both through one call site (same_site) from
# frames alike: the registers at each block are the
# same, only the return address into func_x or func_y differs.  So:
#
#   the second block of each pair is taken from the memo (-v counts them)
#   func_x / func_y = 3.0 within 10%: a memo used across the change of
#   caller would give x 7 ms for y's 1 (every first y under func_x)
#   every block of the main thread under main, through func_x or func_y
. "$(dirname "$0")/lib.sh"

OFFCPU=$WORKLOADS/offcpu

# memo_profile: offcpu -s, its main thread profiled for 4 s, once.
memo_profile() {
	local pid rc=0
	[ -s "$TRASH/memo.folded" ] && return 0
	bg "$OFFCPU" -s -d 14 >"$TRASH/memo.wl"
	pid=$!
	wait_for "$TRASH/memo.wl" "^offcpu: running" 10 || return 1
	"$PROFILE" --off-cpu -f -v -L $pid 4 >"$TRASH/memo.tmp" 2>"$TRASH/memo.folded.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$TRASH/memo.folded.err"; fail "profile exited with status $rc"; return 1; }
	mv "$TRASH/memo.tmp" "$TRASH/memo.folded"
}

test_expect_success ROOT_BPF 'func_x/func_y 3.0 within 10% from one call site' '
	memo_profile &&
	x=$(fsum memo.folded ";func_x;same_site;") &&
	y=$(fsum memo.folded ";func_y;same_site;") &&
	r=$(ratio $x $y) && echo "func_x=$x func_y=$y us, x/y=$r" &&
	[ $((x + y)) -ge 2500000 ] &&
	in_range $r 2.7 3.3
'

test_expect_success ROOT_BPF 'every block of the main thread under main, through func_x or func_y' '
	memo_profile &&
	t=$(fsum memo.folded .) &&
	u=$(fsum memo.folded "^[^;]+;(.*;)?main;twice[^;]*;func_[xy];same_site;") &&
	echo "$u of $t us under main;twice;func_x|func_y;same_site" &&
	[ "$t" -gt 0 ] && in_range "$(ratio $u $t)" 0.99 1
'

# Where the kernel cannot keep them (a switch-in by kprobe, 6.1), -v has no
# such line: nothing to check there.
test_expect_success ROOT_BPF 'the second block of each pair from the memo (-v)' '
	memo_profile &&
	line=$(grep "user stacks from the thread" memo.folded.err || :) &&
	echo "${line:-no memo line}" &&
	if [ -n "$line" ]; then
		n=$(echo "$line" | sed -E "s/.*off-CPU: ([0-9]+) user stacks.*/\1/") &&
		[ "$n" -ge 500 ]
	fi
'

test_done
