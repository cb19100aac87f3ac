#!/bin/bash
# Sampling any event without tuning: the rate without -F or -c, the header
# that says how, the line when a run ends with too few samples, and the
# -v counters that tell a sample in user mode from an error.
. "$(dirname "$0")/lib.sh"

test_expect_success ROOT_BPF '-e page-faults without -c: faulter gets over 100 samples a second' '
	bg "$WORKLOADS/faulter" 6 &&
	pid=$! && sleep 0.3 &&
	"$PROFILE" -e page-faults -f -p $pid 3 >pf.folded 2>err &&
	all=$(fsum pf.folded "^faulter") &&
	leaf=$(fsum pf.folded ";touch_pages$|;touch_pages ") &&
	echo "faulter samples $all, touch_pages leaf $leaf" &&
	[ "$all" -ge 300 ] &&
	in_range $(ratio $leaf $all) 0.9 1.0 &&
	! grep -q "only .* sample" err
'

test_expect_success ROOT_BPF 'the header says frequency mode for an event, bcc wording for the clock' '
	bg "$WORKLOADS/faulter" 4 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" -e page-faults -p $pid 1 >plain 2>err &&
	echo "Sampling page-faults at 999 Hertz (frequency mode) of PID $pid by user + kernel stack for 1 secs." >expect &&
	head -1 plain | diff expect - &&
	"$PROFILE" -e page-faults -F 200 -p $pid 1 >plain2 2>err &&
	head -1 plain2 | grep -qx "Sampling page-faults at 200 Hertz (frequency mode) of PID $pid by user + kernel stack for 1 secs." &&
	"$PROFILE" -e task-clock -p $pid 1 >plain3 2>err &&
	head -1 plain3 | grep -qx "Sampling task-clock at 49 Hertz of PID $pid by user + kernel stack for 1 secs."
'

test_expect_success ROOT_BPF 'too few samples for the run: one line that says what to change' '
	bg sleep 10 &&
	pid=$! &&
	{ "$PROFILE" -e page-faults -F 49 -f -p $pid 2 >few.folded 2>err || { cat err; false; }; } &&
	cat err &&
	[ ! -s few.folded ] &&
	[ "$(grep -c "^profile: only 0 sample(s) of page-faults in 2\.[0-9] s at -F 49: .*raise -F (-F 999) or give a period with -c$" err)" -eq 1 ] &&
	{ "$PROFILE" -e page-faults -c 100000000 -f -p $pid 2 >few2.folded 2>err2 || { cat err2; false; }; } &&
	cat err2 &&
	grep -q "^profile: only 0 sample(s) in 2\.[0-9] s, one every 100000000 page-faults: lower -c for more$" err2 &&
	bg "$WORKLOADS/faulter" 5 &&
	fpid=$! && sleep 0.3 &&
	"$PROFILE" -e page-faults -f -p $fpid 2 >many.folded 2>err3 &&
	! grep -q "only .* sample" err3
'

test_expect_success ROOT_BPF 'an idle target at the clock: the line gives its share of a CPU' '
	bg sleep 10 &&
	pid=$! &&
	"$PROFILE" -p $pid 2 >idle.out 2>err &&
	cat err &&
	grep -q "^profile: only 0 sample(s) in 2\.[0-9] s at 49 Hz: what was profiled was on a CPU 0\.0% of the time; the rest it slept or waited, which a CPU profile does not show$" err &&
	BURN=$WORKLOADS/burn "$PROFILE" -F 99 -f -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do \"\$BURN\" -d 0.01 >/dev/null; sleep 0.2; done" >some.folded 2>err1 &&
	cat err1 &&
	grep -q "^profile: only [0-9]* sample(s) in 2\.[0-9] s at 99 Hz: what was profiled was on a CPU [1-9]\.[0-9]% of the time; profile longer or raise -F$" err1 &&
	bg "$WORKLOADS/burn" -d 4 &&
	bpid=$! && sleep 0.2 &&
	"$PROFILE" -p $bpid 2 >busy.out 2>err2 &&
	! grep -q "only .* sample" err2
'

test_expect_success ROOT_BPF '-v: samples in user mode are counted as such, not as kernel-stack faults' '
	bg "$WORKLOADS/burn" -d 4 &&
	pid=$! && sleep 0.2 &&
	"$PROFILE" -v -F 499 -p $pid 2 >out 2>err &&
	line=$(grep "^profile: kernel stacks: " err) &&
	echo "$line" &&
	counted=$(sed -n "s/^profile: samples: taken [0-9]*, counted \([0-9]*\),.*/\1/p" err) &&
	umode=$(echo "$line" | sed -n "s/.*in user mode \([0-9]*\), eexist.*/\1/p") &&
	efault=$(echo "$line" | sed -n "s/.*efault \([0-9]*\),.*/\1/p") &&
	echo "counted $counted, user mode $umode, efault $efault" &&
	[ "$counted" -ge 500 ] &&
	[ "$umode" -ge $((counted * 9 / 10)) ] && [ "$umode" -le "$counted" ] &&
	[ "$efault" -eq 0 ]
'

test_expect_success ROOT_BPF,GO 'pprof at -F: event counts weigh each sample by the period the kernel chose' '
	bg sh -c "exec \"$WORKLOADS/faulter\" 4 >fl.out" &&
	pid=$! && sleep 1 &&
	"$PROFILE" -q -e page-faults -o pf.pb.gz -p $pid 2 2>err &&
	while kill -0 $pid 2>/dev/null; do sleep 0.2; done &&
	rounds=$(awk "/rounds/ { print \$2 }" fl.out) &&
	go tool pprof -raw pf.pb.gz >raw 2>/dev/null &&
	period=$(sed -n "s/^Period: //p" raw) &&
	samples=$(go tool pprof -top -sample_index=0 pf.pb.gz 2>/dev/null | sed -n "s/.*Total samples = \([0-9]*\).*/\1/p") &&
	faults=$(go tool pprof -top -sample_index=1 pf.pb.gz 2>/dev/null | sed -n "s/.*Total samples = \([0-9]*\).*/\1/p") &&
	# faulter touches 16384 pages a round: the faults it took in 2 of its 4 s.
	expect=$((rounds * 16384 / 2)) &&
	echo "period $period, samples $samples, faults $faults, faulter alone about $expect" &&
	[ "$period" -ge 50 ] &&
	[ "$faults" -eq $((samples * period)) ] &&
	in_range $(ratio $faults $expect) 0.75 1.25
'

test_expect_success ROOT_BPF '-F 0 names the real range, from the sysctl' '
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate) &&
	{ "$PROFILE" -F 0 1 >out 2>err; rc=$?; } || :
	[ "$rc" -eq 2 ] &&
	echo "profile: -F 0 is out of range [1, $max], the most kernel.perf_event_max_sample_rate allows (see --help)" >expect &&
	diff expect err &&
	[ ! -s out ]
'

test_done
