#!/bin/bash
# The known answer: burn runs func_b three times as often as func_a.
. "$(dirname "$0")/lib.sh"

test_expect_success ROOT_BPF 'folded: func_b/func_a is 3.0 within 10% over 8000+ samples' '
	bg "$WORKLOADS/burn" -t 2 -d 13 &&
	pid=$! &&
	"$PROFILE" -F 999 -f -p $pid 10 >burn.folded 2>err &&
	a=$(fsum burn.folded ";func_a( |;)") &&
	b=$(fsum burn.folded ";func_b( |;)") &&
	echo "func_a=$a func_b=$b" &&
	[ $((a + b)) -ge 8000 ] &&
	r=$(ratio $b $a) && echo "ratio=$r" &&
	in_range $r 2.7 3.3
'

test_expect_success ROOT_BPF 'folded lines are comm;frames COUNT, nothing else on stdout' '
	! grep -v -E "^burn(;[^;]+)+ [0-9]+$" burn.folded &&
	grep -q "^burn;.*main;.*func_b [0-9]*$" burn.folded
'

test_expect_success ROOT_BPF 'folded output is sorted by count, ties by text' '
	awk "{print \$NF}" burn.folded >counts &&
	sort -n -c counts
'

test_expect_success ROOT_BPF 'plain: bcc header, frames, "- comm (pid)" and count lines' '
	bg "$WORKLOADS/burn" -d 4 &&
	pid=$! &&
	"$PROFILE" -F 499 -p $pid 2 >plain 2>err &&
	head -1 plain >header &&
	echo "Sampling at 499 Hertz of PID $pid by user + kernel stack for 2 secs." >expect &&
	diff expect header &&
	grep -q "^    func_b$" plain &&
	grep -q "^    -                burn ($pid)$" plain &&
	grep -E -q "^        [0-9]+$" plain &&
	tail -n 3 plain | head -1 | grep -q "^    -                burn ($pid)$"
'

test_expect_success ROOT_BPF 'plain: the hottest record is last' '
	awk "/^        [0-9]+$/ {print \$1}" plain >counts &&
	sort -n -c counts
'

test_expect_success ROOT_BPF 'identical stacks are printed once' '
	awk "/^    -   /{ if (seen[blk]++) dup=1; blk=\"\"; next } { blk = blk \$0 \"\n\" } END { exit dup }" plain
'

test_done
