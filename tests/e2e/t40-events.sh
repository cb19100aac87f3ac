#!/bin/bash
# perf-style events and views: -e, --list-events, --per-cpu, --per-thread,
# --report and --top.
. "$(dirname "$0")/lib.sh"

test_expect_success ROOT_BPF '-e page-faults -c 1: faulter samples have touch_pages as user leaf' '
	bg "$WORKLOADS/faulter" 6 &&
	pid=$! && sleep 0.3 &&
	"$PROFILE" -e page-faults -c 1 -f -p $pid 2 >pf.folded 2>err &&
	all=$(fsum pf.folded "^faulter") &&
	leaf=$(fsum pf.folded ";touch_pages$|;touch_pages ") &&
	echo "faulter samples $all, touch_pages leaf $leaf" &&
	[ "$all" -ge 1000 ] &&
	in_range $(ratio $leaf $all) 0.95 1.0
'

test_expect_success ROOT_BPF 'the header names a non-default event, bcc wording otherwise' '
	bg "$WORKLOADS/faulter" 4 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" -e faults -c 1 -p $pid 1 >plain 2>err &&
	head -1 plain >h &&
	echo "Sampling page-faults at every 1 events of PID $pid by user + kernel stack for 1 secs." >expect &&
	diff expect h &&
	"$PROFILE" -p $pid 1 >plain2 2>err &&
	head -1 plain2 | grep -q "^Sampling at 49 Hertz of PID $pid by user + kernel stack for 1 secs.$"
'

test_expect_success ROOT_BPF '--list-events: software supported, hardware marked as this machine allows' '
	"$PROFILE" --list-events >events &&
	grep -q "^  cpu-clock .*supported$" events &&
	grep -q "^  page-faults OR faults .*supported$" events &&
	grep -q "LLC-load-misses" events &&
	grep -q "rNNN" events &&
	if grep -q "not supported" events; then
		grep "^  cycles OR cpu-cycles" events | grep -q "not supported"
	fi
'

test_expect_success ROOT_BPF '--per-cpu: burn pinned to CPU 1 is under cpu_1 only' '
	[ "$(nproc)" -ge 2 ] || { echo "one CPU: nothing to tell apart"; exit 0; }
	bg taskset -c 1 "$WORKLOADS/burn" -d 5 -n pinburn &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" --per-cpu -F 499 -f -p $pid 2 >pc.folded 2>err &&
	on1=$(fsum pc.folded "^cpu_1;pinburn") &&
	other=$(fsum pc.folded "^cpu_0;") &&
	echo "cpu_1 $on1, cpu_0 $other" &&
	[ "$on1" -ge 500 ] && [ "$other" -le $((on1 / 50)) ] &&
	"$PROFILE" --per-cpu -F 499 -p $pid 1 >pc.plain 2>err &&
	grep -q "^    -                pinburn ($pid) CPU#1$" pc.plain
'

test_expect_success ROOT_BPF '--per-thread: burn -t 2 shows two thread ids' '
	bg "$WORKLOADS/burn" -t 2 -d 5 -n twoburn &&
	pid=$! && sleep 0.3 &&
	"$PROFILE" --per-thread -F 499 -f -p $pid 2 >pt.folded 2>err &&
	grep -o "^twoburn-$pid/[0-9]*" pt.folded | sort -u >tids &&
	cat tids &&
	[ "$(wc -l <tids)" -eq 2 ] &&
	for t in $(cut -d/ -f2 tids); do [ -d /proc/$pid/task/$t ]; done
'

test_expect_success ROOT_BPF '--report: func_b first with about 75% self' '
	bg "$WORKLOADS/burn" -t 2 -d 6 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" --report --limit 5 -F 999 -p $pid 4 >report 2>err &&
	cat report &&
	grep -q "^#  *Self  *Children  *Samples  *Command  *Shared Object  *Symbol$" report &&
	first=$(grep -v "^#" report | head -1) &&
	echo "$first" | grep -q " burn  *burn  *func_b$" &&
	self=$(echo "$first" | awk "{sub(\"%\", \"\", \$1); print \$1}") &&
	in_range "$self" 68 82 &&
	[ "$(grep -vc "^#" report)" -le 5 ]
'

test_expect_success ROOT_BPF '--report: a long Shared Object is cut with an ellipsis, the Symbol column lines up' '
	long=burn-with-a-long-executable-name-like-a-memfd-mapping &&
	cp "$WORKLOADS/burn" ./$long &&
	bg ./$long -d 5 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" --report -F 499 -p $pid 2 >report 2>err &&
	cat report &&
	head -1 report | grep -q "^# Samples: [0-9][0-9]*$" &&
	sed "s/$(printf "\342\200\246")/./g" report >flat &&
	col=$(awk "/^#  *Self  *Children/ { print index(\$0, \"Symbol\"); exit }" flat) &&
	echo "Symbol at column $col" &&
	[ "$col" -gt 0 ] &&
	grep -q " burn-with-a-lon  *burn-with-a-long-executable-name-like-a$(printf "\342\200\246") func_b$" report &&
	awk -v c=$col "!/^#/ && (substr(\$0, c - 1, 1) != \" \" || substr(\$0, c, 1) == \" \") { print \"misaligned: \" \$0; bad = 1 } END { exit bad }" flat &&
	grep -q " func_a$" report
'

test_expect_success ROOT_BPF '--format report -o FILE and with -i' '
	bg "$WORKLOADS/burn" -d 4 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" --format report -o rep.txt -F 499 -p $pid 1 2>err &&
	grep -q "func_b$" rep.txt &&
	"$PROFILE" --report -i 1 -F 499 -p $pid 2 >rep-i 2>err &&
	[ "$(grep -c "^# interval " rep-i)" -ge 2 ]
'

test_expect_success ROOT_BPF,tmux '--top under tmux: burn hot function on the first row, terminal restored' '
	bg "$WORKLOADS/burn" -t 2 -d 10 &&
	pid=$! && sleep 0.2 &&
	sess=ptop$$ &&
	tmux new-session -d -s $sess -x 140 -y 30 \
		"$(printf %q "$PROFILE") --top -F 499 -p $pid 5; echo TOP-EXIT=\$?; sleep 3" &&
	sleep 3 &&
	tmux capture-pane -p -t $sess >screen &&
	cat screen &&
	grep -q "^profile --top:" screen &&
	awk "seen && NF; /^ +Self +Children +Command/ { seen = 1 }" screen | head -1 | grep -q "func_b$" &&
	sleep 4 &&
	tmux capture-pane -p -t $sess >after &&
	tmux kill-session -t $sess 2>/dev/null || :
	grep -q "TOP-EXIT=0" after &&
	! grep -q "^profile --top:" after
'

test_expect_success ROOT_BPF '--top when stdout is not a terminal: plain snapshots' '
	bg "$WORKLOADS/burn" -d 4 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" --top -F 499 -p $pid 2 >snap 2>err &&
	[ "$(grep -c "^# interval " snap)" -ge 2 ] &&
	grep -q "func_b$" snap &&
	! grep -q "$(printf "\033")" snap
'

test_done
