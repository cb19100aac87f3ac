#!/bin/bash
# Every first sample whole (issue 31): a process's samples taken before
# the unwinder has its mapping list (a new process, an exec, a -p target
# at the start, a command) were walked by frame pointer alone, which in
# code built without them stops after the leaf.  burn-nofp's stacks reach
# _start only from tables; each run here is short, so that its first
# milliseconds are much of it, and counted per process (--per-thread).
#
#   whole host, 15 fresh 100 ms processes one after another: before, the
#   side band's delays (the main thread reads it between other work) left
#   a process in three with 15-100 of its first samples cut, 80-340 in
#   all; now most lose 0-2 (the first sample, taken before the walker
#   asked, and one at exit, when its memory is gone), and under load a
#   process at times 10-40 (the sync thread compiling another's table)
#   -- CMD: 13-18 samples cut before, 0-2 now (libc's table compiled
#   before the command runs, its list asked for at its exec)
#   -p: the list before the first sample (as before)
. "$(dirname "$0")/lib.sh"

HZ=999

# cut_per_process FILE COMM: "cut/samples" of each COMM-PID process of a
# --per-thread folded FILE, a line each; a sample is cut when none of its
# three outermost user frames is a root (as stackstats counts them).
cut_per_process() {
	awk -v comm="$2" '
	index($0, comm "-") == 1 {
		n = split($0, f, ";"); p = f[1]; c = $NF; sub(/ [0-9]+$/, "", f[n])
		user = 0
		for (i = 2; i <= n && f[i] !~ /_\[k\]$/; i++)
			user = i
		whole = 0
		for (i = 2; i <= user && i <= 4; i++)
			if (f[i] ~ /^(_start|__libc_start_main|__libc_start_call_main|start_thread|clone3|__clone|clone)$/)
				whole = 1
		total[p] += c
		if (!whole)
			cut[p] += c
	}
	END { for (p in total) printf "%s %d/%d\n", p, cut[p], total[p] }' "$1"
}

test_expect_success ROOT_BPF 'fresh no-FP processes under a whole-host profile: whole from their first milliseconds' '
	# Named by exec, so that ld.so'"'"'s first samples count; one file (a
	# link), so that its table is compiled once, at the warm-up run.
	cp "$WORKLOADS/burn-nofp" fwfirst &&
	ln -f fwfirst fwwarm &&
	# A busy host: new stacks all the time, which the main thread reads
	# and names while the run goes on.
	bg "$WORKLOADS/manystacks" -D 6 -t 1 -d 12 >/dev/null &&
	busy=$! &&
	bg "$PROFILE" -a -F $HZ -f --per-thread 9 >host.folded 2>host.err &&
	prof=$! &&
	wait_attached $prof &&
	sleep 1 &&
	./fwwarm -d 0.1 >/dev/null &&
	sleep 0.3 &&
	for i in $(seq 15); do
		./fwfirst -d 0.1 >/dev/null || return 1
	done &&
	wait $prof &&
	kill $busy &&
	sed -E "s/^(fwfirst)-[0-9]+\/[0-9]+;/\1;/" host.folded >first.folded &&
	stats -c fwfirst first.folded &&
	cut_per_process host.folded fwfirst >cut.txt &&
	cat cut.txt &&
	procs=$(wc -l <cut.txt) &&
	cut=$(awk "{ split(\$2, a, \"/\"); n += a[1] } END { print n + 0 }" cut.txt) &&
	few=$(awk "{ split(\$2, a, \"/\"); if (a[1] <= 5) n++ } END { print n + 0 }" cut.txt) &&
	echo "$cut samples cut; $few of $procs processes with at most 5" &&
	within $procs 15 15 "fwfirst processes sampled" &&
	within $samples 300 1e9 "samples of fwfirst" &&
	within $cut 0 60 "samples cut" &&
	within $few 13 15 "processes with at most 5 samples cut"
'

test_expect_success ROOT_BPF 'profile -- burn-nofp: whole from its first sample' '
	"$PROFILE" -F $HZ -f -- "$WORKLOADS/burn-nofp" -d 1 -n fwcmd >cmd.folded 2>cmd.err ||
		{ cat cmd.err; fail "profile -- burn-nofp exited with status $?"; return 1; } &&
	stats -c fwcmd cmd.folded &&
	cut=$(awk "/^fwcmd;/ && !/;(_start|__libc_start_call_main);/ { n += \$NF } END { print n + 0 }" cmd.folded) &&
	echo "$cut of $samples samples cut" &&
	within $samples 300 1e9 samples &&
	within $cut 0 10 "samples cut"
'

test_expect_success ROOT_BPF '-p of a burn-nofp just started: every sample whole' '
	bg "$WORKLOADS/burn-nofp" -d 5 -n fwp >/dev/null &&
	pid=$! &&
	"$PROFILE" -F $HZ -f -p $pid 2 >p.folded 2>p.err ||
		{ cat p.err; fail "profile -p exited with status $?"; return 1; } &&
	stats -c fwp p.folded &&
	within $samples 500 1e9 samples &&
	within $complete 100 100 "whole samples (%)"
'

test_done
