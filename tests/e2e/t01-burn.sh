#!/bin/bash
# The known answer: burn runs func_b three times as often as func_a.
#
# Each test makes the profile it reads through burn_folded or burn_plain: the
# first test to ask runs the profiler, later ones reuse its output, and none
# depends on an earlier test having run or passed (see t00).
. "$(dirname "$0")/lib.sh"

# burn_folded: $TRASH/burn.folded, 10 s of burn -t 2 at 9999 Hz.  The ratio's
# spread is sampling's, 6.93 / sqrt(samples) for independent samples: at
# 999 Hz a loaded host leaves 3,000-8,000 samples and 3.3 is a 2-4 sigma
# reading; at 9999 Hz the same host leaves 35,000+ (bench/case_burn_ratio.py).
burn_folded() {
	[ -s "$TRASH/burn.folded" ] && return 0
	bg "$WORKLOADS/burn" -t 2 -d 13 &&
	"$PROFILE" -F 9999 -f -p $! 10 >"$TRASH/burn.tmp" 2>"$TRASH/burn.err" &&
	mv "$TRASH/burn.tmp" "$TRASH/burn.folded"
}

# burn_plain: $TRASH/burn.plain, 2 s at 499 Hz, and burn's pid in $TRASH/burn.pid.
burn_plain() {
	[ -s "$TRASH/burn.plain" ] && return 0
	bg "$WORKLOADS/burn" -d 4 &&
	echo $! >"$TRASH/burn.pid" &&
	"$PROFILE" -F 499 -p $! 2 >"$TRASH/burn.tmp" 2>"$TRASH/burn.err" &&
	mv "$TRASH/burn.tmp" "$TRASH/burn.plain"
}

test_expect_success ROOT_BPF 'folded: func_b/func_a is 3.0 within 5% over 20000+ samples' '
	burn_folded &&
	a=$(fsum burn.folded ";func_a( |;)") &&
	b=$(fsum burn.folded ";func_b( |;)") &&
	echo "func_a=$a func_b=$b" &&
	[ $((a + b)) -ge 20000 ] &&
	r=$(ratio $b $a) && echo "ratio=$r" &&
	in_range $r 2.85 3.15
'

# A -p target is sampled once its tables are in: no stack of the first
# milliseconds stops at __libc_start_call_main or start_thread, where the
# kernel's frame-pointer walk ends.
test_expect_success ROOT_BPF 'folded: every func_a and func_b stack reaches _start or clone3' '
	burn_folded &&
	grep -E ";func_[ab]( |;)" burn.folded >ab &&
	{ ! grep -v -E "^burn;(_start|clone3);" ab || fail "stacks cut short"; }
'

test_expect_success ROOT_BPF 'folded lines are comm;frames COUNT, nothing else on stdout' '
	burn_folded &&
	! grep -v -E "^burn(;[^;]+)+ [0-9]+$" burn.folded &&
	grep -q "^burn;.*main;.*func_b [0-9]*$" burn.folded
'

test_expect_success ROOT_BPF 'folded output is sorted by count, ties by text' '
	burn_folded &&
	awk "{print \$NF}" burn.folded >counts &&
	sort -n -c counts
'

test_expect_success ROOT_BPF 'plain: bcc header, frames, "- comm (pid)" and count lines' '
	burn_plain &&
	pid=$(cat burn.pid) &&
	head -1 burn.plain >header &&
	echo "Sampling at 499 Hertz of PID $pid by user + kernel stack for 2 secs." >expect &&
	diff expect header &&
	grep -q "^    func_b$" burn.plain &&
	grep -q "^    -                burn ($pid)$" burn.plain &&
	grep -E -q "^        [0-9]+$" burn.plain &&
	tail -n 3 burn.plain | head -1 | grep -q "^    -                burn ($pid)$"
'

test_expect_success ROOT_BPF 'plain: the hottest record is last' '
	burn_plain &&
	awk "/^        [0-9]+$/ {print \$1}" burn.plain >counts &&
	sort -n -c counts
'

test_expect_success ROOT_BPF 'identical stacks are printed once' '
	burn_plain &&
	awk "/^    -   /{ if (seen[blk]++) dup=1; blk=\"\"; next } { blk = blk \$0 \"\n\" } END { exit dup }" burn.plain
'

test_done
