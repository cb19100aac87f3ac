#!/bin/bash
# profile -- CMD: the command and every process it starts are profiled from
# their first instruction to their exit, no other process is, and profile
# exits with the command status, as a shell would.
. "$(dirname "$0")/lib.sh"

# Counts of samples are checked against the CPU time a workload could have
# had, with room for a machine that other work keeps busy.
#
# Exported: the scripts the tests run as the command name it too.
export BURN=$WORKLOADS/burn

# folded_comms FILE: "comm total" for each comm of a folded profile, sorted.
folded_comms() {
	awk '{ c = $1; sub(/;.*/, "", c); n[c] += $NF } END { for (c in n) print c, n[c] }' "$1" | sort
}

# burn_ratio FILE COMM: func_b/func_a over the stacks of COMM.
burn_ratio() {
	local a b
	a=$(fsum "$1" "^$2;.*;func_a( |;)")
	b=$(fsum "$1" "^$2;.*;func_b( |;)")
	echo "$2: func_a=$a func_b=$b" >&2
	ratio "$b" "$a"
}

test_expect_success ROOT_BPF 'burn as the command: the burn ratio, its stacks only, its exit status' '
	{ "$PROFILE" -F 999 -f -- "$BURN" -t 2 -d 4 >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 0 ] || fail "exit status $rc, burn exits 0"; } &&
	grep "^burn: [0-9]* [0-9]*$" out >burn.line &&
	grep -v "^burn: " out >prof.folded &&
	{ [ -z "$(not_folded prof.folded)" ] || fail "lines that are not folded"; } &&
	folded_comms prof.folded >comms && cat comms &&
	{ [ "$(cut -d" " -f1 comms)" = burn ] || fail "stacks of another process than burn"; } &&
	n=$(fsum prof.folded "") && echo "samples=$n" &&
	{ [ "$n" -ge 2000 ] || fail "expected up to 8000 samples (2 threads, 4 s, 999 Hz)"; } &&
	r=$(burn_ratio prof.folded burn) && echo "ratio=$r" &&
	in_range "$r" 2.7 3.3
'

test_expect_success ROOT_BPF 'the exit status passes through: 7, SIGKILL 137, SIGTERM 143' '
	{ "$PROFILE" -q -o p.folded -- sh -c "exit 7" 2>err; rc=$?; true; } &&
	{ [ $rc -eq 7 ] || fail "exit 7 gave $rc"; } &&
	{ [ ! -s err ] || { cat err; fail "stderr is not empty"; }; } &&
	{ "$PROFILE" -o p.folded -- sh -c "kill -KILL \$\$" 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 137 ] || fail "SIGKILL gave $rc"; } &&
	grep -q "^profile: .sh. was killed by signal 9 (Killed)$" err &&
	{ "$PROFILE" -o p.folded -- sh -c "kill -TERM \$\$" 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 143 ] || fail "SIGTERM gave $rc"; } &&
	{ grep -q "^profile: .sh. was killed by signal 15 (Terminated)$" err || fail "no line for signal 15"; } &&
	{ grep -q "^profile: wrote p.folded: " err || fail "no summary line"; } &&
	{ [ $(wc -l <err) -eq 2 ] || fail "more than the two lines on stderr"; } &&
	# A command that exits at once, before profile waits for it: its exit
	# must wake the wait (a pidfd), not the next tick a second later, which
	# made CI warn of "only 0 sample(s) in 1.0 s" twice.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		{ "$PROFILE" -o p.folded -- sh -c "kill -TERM \$\$" 2>err; rc=$?; true; } &&
		{ [ $rc -eq 143 ] && [ $(wc -l <err) -eq 2 ] || { cat err; fail "run $i: status $rc"; }; } || return 1
	done
'

test_expect_success ROOT_BPF 'children and grandchildren are profiled, another process is not' '
	bg "$BURN" -n outsider -d 6 >/dev/null &&
	"$PROFILE" -F 999 -o kids.folded -- sh -c "\"\$BURN\" -n kid -d 2 & \"\$BURN\" -n kid2 -d 2; sh -c \"\\\"\\\$BURN\\\" -n grandkid -d 1\"; wait" >out 2>err &&
	cat err && folded_comms kids.folded | tee comms &&
	for c in kid kid2 grandkid; do
		n=$(fsum kids.folded "^$c;.*;func_[ab]( |;)") && echo "$c: $n in func_a and func_b" &&
		{ [ "$n" -ge 100 ] || fail "$c: too few samples, or its functions not named"; }
	done &&
	r=$(burn_ratio kids.folded "(kid|kid2|grandkid)") && echo "all kids: ratio=$r" &&
	in_range "$r" 2.7 3.3 &&
	{ ! grep -q "^outsider " comms || fail "the outsider burn, not started by the command, was profiled"; } &&
	{ [ $(grep -c "^burn: " out) -eq 3 ] || fail "the command output is not on stdout"; }
'

test_expect_success ROOT_BPF 'sampled from the exec: a 0.3 s command keeps its samples' '
	"$PROFILE" -F 999 -o short.folded -- "$BURN" -d 0.3 >out 2>err &&
	cat err &&
	n=$(fsum short.folded "^burn;") && echo "burn samples=$n of about 300" &&
	{ [ "$n" -ge 100 ] || fail "lost samples at the start or the end"; } &&
	{ ! grep -v "^burn;" short.folded || fail "samples of another comm (profile before the exec)"; }
'

# exitbig touches 1 GiB, renames itself exitbig-x and exits: its exit
# unmaps the memory for tens of ms, after the exit tracepoint that takes
# it out of the followed set (EXIT_MM: on 6.1 the unmapping comes before
# the tracepoint).  That time is the command's (perf record -- CMD counts
# it) and was dropped before: 0 samples, against 66 after, here.
test_expect_success ROOT_BPF,EXIT_MM 'the command exit unmapping its memory: profiled to its end' '
	{ "$PROFILE" -v -F 999 -f -d -o exit.folded -- "$WORKLOADS/exitbig" 1024 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 0 ] || fail "exit status $rc"; } &&
	n=$(fsum exit.folded "^exitbig-x;") &&
	m=$(fsum exit.folded "^exitbig-x;.*;do_exit;.*exit_mmap") &&
	echo "exitbig-x: $n samples, $m in exit_mmap under do_exit" &&
	within "$n" 20 1e9 "samples after the rename, nearly all in the exit" &&
	within "$(ratio "$m" "$n")" 0.8 1 "share of them unmapping in the exit" &&
	! grep "found no kernel memory to mark them" err
'

test_expect_success ROOT_BPF 'a command that cannot be run: 127 or 126, one line, nothing on stdout' '
	{ "$PROFILE" -o nf.folded -- no-such-command-t36 arg >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 127 ] || fail "not found gave $rc"; } &&
	printf "profile: cannot run \047no-such-command-t36\047: No such file or directory\n" >expect &&
	diff expect err &&
	{ [ ! -s out ] || fail "stdout is not empty"; } &&
	{ [ ! -e nf.folded ] || fail "a report was written"; } &&
	printf "#!/bin/sh\necho ran\n" >notexec.sh && chmod 644 notexec.sh &&
	{ "$PROFILE" -- ./notexec.sh >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 126 ] || fail "EACCES gave $rc"; } &&
	printf "profile: cannot run \047./notexec.sh\047: Permission denied\n" >expect &&
	diff expect err &&
	[ ! -s out ]
'

# The largest stack trace map (16 GiB, preallocated) in a cgroup held to
# 64 MiB: the load fails, for want of memory.
test_expect_success ROOT_BPF 'profile fails to load: the held command never runs, exit 1' '
	mem_cgroup t36 &&
	echo $((64 << 20)) >"$MEMCG/$MEM_LIMIT" &&
	{ sh -c "echo \$\$ >\"$MEMCG/cgroup.procs\" && exec \"$PROFILE\" --stack-storage-size 16777216 -o big.folded -- sh -c \"echo RAN\"" >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 1 ] || fail "exit status $rc"; } &&
	grep -q "^profile: cannot load the BPF program: Cannot allocate memory; not enough memory for the maps" err &&
	{ [ ! -s out ] || fail "the command ran"; } &&
	[ ! -e big.folded ]
'

test_expect_success ROOT_BPF '-o: the file holds the report, stdout the command output only' '
	echo "from stdin" | "$PROFILE" -F 999 -o r.folded -- sh -c "cat; exec \"\$BURN\" -d 1" >out 2>err &&
	cat err out &&
	{ [ "$(head -1 out)" = "from stdin" ] || fail "the command did not read its stdin"; } &&
	{ [ $(wc -l <out) -eq 2 ] && grep -q "^burn: [0-9]* [0-9]*$" out || fail "stdout holds more than the command output"; } &&
	{ [ -z "$(not_folded r.folded)" ] || fail "the file holds more than folded lines"; } &&
	n=$(fsum r.folded "^burn;.*func_b") && echo "func_b=$n" &&
	[ "$n" -ge 500 ]
'

test_expect_success ROOT_BPF 'plain on stdout: the command output first, then the header and the report' '
	"$PROFILE" -F 999 -- "$BURN" -d 1 >out 2>err &&
	cat err &&
	head -1 out | grep -q "^burn: [0-9]* [0-9]*$" &&
	sed -n 2p out >header &&
	printf "Sampling at 999 Hertz of \047%s\047 and its children by user + kernel stack until it exits.\n" "$BURN" >expect &&
	diff expect header &&
	grep -q "^    func_b$" out
'

# A background job of a script starts with SIGINT ignored, and so would the
# command: env gives it back its default action, as in a terminal.
test_expect_success ROOT_BPF,setsid 'Ctrl-C (SIGINT to the process group): the command gets it, profile reports, exits 130' '
	{ env --default-signal=INT setsid "$PROFILE" -q -F 199 -o int.folded -- "$BURN" -n ctrlcburn -d 20 >out 2>err & prof=$!; } &&
	wait_attached $prof && sleep 1.5 &&
	pgid=$(ps -o pgid= -p $prof | tr -d " ") &&
	{ [ "$pgid" = "$prof" ] || fail "profile does not lead its process group"; } &&
	burn=$(pgrep -x ctrlcburn) &&
	{ [ "$(ps -o pgid= -p $burn | tr -d " ")" = "$pgid" ] || fail "the command left the process group"; } &&
	t0=$(date +%s%N) && kill -INT -- -$pgid &&
	{ wait $prof; rc=$?; true; } && t1=$(date +%s%N) &&
	cat err && echo "exit $rc after $(((t1 - t0) / 1000000)) ms" &&
	{ [ $rc -eq 130 ] || fail "exit status $rc, burn died of SIGINT: 130"; } &&
	{ [ $((t1 - t0)) -lt 2000000000 ] || fail "took over 2 s"; } &&
	{ ! pgrep -x ctrlcburn || fail "burn still runs"; } &&
	{ [ ! -s err ] || fail "a line on stderr: shells say nothing of SIGINT"; } &&
	n=$(fsum int.folded "^ctrlcburn;") && echo "samples=$n" &&
	[ "$n" -ge 100 ]
'

test_expect_success ROOT_BPF 'SIGTERM to profile alone is passed to the command: exit 143, report written' '
	{ "$PROFILE" -F 199 -o term.folded -- "$BURN" -n termburn -d 20 >out 2>err & prof=$!; } &&
	wait_attached $prof && sleep 1.5 &&
	kill -TERM $prof &&
	{ wait $prof; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 143 ] || fail "exit status $rc"; } &&
	{ ! pgrep -x termburn || fail "the command did not get the SIGTERM"; } &&
	grep -q "killed by signal 15 (Terminated)$" err &&
	n=$(fsum term.folded "^termburn;") && echo "samples=$n" &&
	[ "$n" -ge 100 ]
'

test_expect_success ROOT_BPF 'a second signal stops profile at once, leaving a command that ignores it' '
	trap "pkill -x stubborn || :" EXIT &&
	{ (trap "" INT; exec "$PROFILE" -F 199 -o stub.folded -- "$BURN" -n stubborn -d 20 >out 2>err) & prof=$!; } &&
	wait_attached $prof && sleep 1 &&
	kill -INT $prof && sleep 0.5 &&
	{ kill -0 $prof || fail "profile stopped at the first SIGINT"; } &&
	pgrep -x stubborn >/dev/null &&
	kill -INT $prof &&
	{ wait $prof; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 130 ] || fail "exit status $rc"; } &&
	{ pgrep -x stubborn >/dev/null || fail "the command did not inherit the ignored SIGINT"; } &&
	grep -q "still running: profile stopped before it exited$" err &&
	n=$(fsum stub.folded "^stubborn;") && echo "samples=$n" &&
	[ "$n" -ge 100 ]
'

test_expect_success ROOT_BPF 'a duration before --: the report after it, then the command status' '
	t0=$(date +%s%N) &&
	{ "$PROFILE" -F 999 -o dur.folded 1 -- sh -c "\"\$BURN\" -d 3 >/dev/null; exit 3" 2>err; rc=$?; true; } &&
	t1=$(date +%s%N) && cat err &&
	{ [ $rc -eq 3 ] || fail "exit status $rc"; } &&
	{ [ $((t1 - t0)) -ge 2800000000 ] || fail "did not wait for the command"; } &&
	grep -q "sampling ended after 1 s; waiting for .sh. (PID [0-9]*) to exit$" err &&
	n=$(fsum dur.folded "^burn;") && echo "samples=$n, at most 1 s of one CPU" &&
	in_range "$n" 300 1100
'

test_expect_success ROOT_BPF '-i 1 with a 3 s command: an interval report each second' '
	"$PROFILE" -F 999 -f -i 1 -- "$BURN" -d 3.2 >out 2>err &&
	cat err &&
	grep -c "^# interval" out >n && cat n &&
	{ [ $(cat n) -ge 3 ] || fail "fewer than 3 interval reports"; } &&
	awk "/^# interval/ { i++ } /func_b/ { b[i] += \$NF } END { print b[1], b[2] }" out >perint &&
	cat perint && read b1 b2 <perint &&
	in_range "$b1" 200 900 && in_range "$b2" 200 900
'

test_expect_success ROOT_BPF 'none of profile files reaches the command' '
	sh -c "ls /proc/self/fd" >plain.fds &&
	"$PROFILE" -o fd.folded -- sh -c "ls /proc/self/fd" >cmd.fds 2>err &&
	cat err && cat cmd.fds | tr "\n" " " && echo &&
	diff plain.fds cmd.fds
'

test_expect_success ROOT_BPF 'more processes at once than the map holds: counted and said' '
	PROFILE_TEST_FOLLOW_SET=4 "$PROFILE" -v -o many.folded -- sh -c "for i in 1 2 3 4 5 6; do sleep 0.5 & done; wait" 2>err &&
	grep "follow" err &&
	grep -q "^profile: followed processes: 4 (the command and those it started), 3 found no room$" err &&
	grep -q "^profile: 3 processes started by .sh. were not profiled" err &&
	PROFILE_TEST_FOLLOW_SET=4 "$PROFILE" -v -o seq.folded -- sh -c "for i in 1 2 3 4 5 6 7 8; do /bin/true; done" 2>err &&
	grep -q "^profile: followed processes: 9 (the command and those it started), 0 found no room$" err
'

test_expect_success 'usage: a command with -p or -L, and a command without --' '
	{ "$PROFILE" -p 1 -- true >out 2>err; rc=$?; true; } &&
	{ [ $rc -eq 2 ] || fail "-p with a command gave $rc"; } &&
	echo "profile: conflicting options: -p and a command after -- cannot be used together (see --help)" >expect &&
	diff expect err && [ ! -s out ] &&
	{ "$PROFILE" -L 1 -- true 2>err; rc=$?; true; } &&
	[ $rc -eq 2 ] && [ $(wc -l <err) -eq 1 ] && grep -q -- "-L and a command" err &&
	{ "$PROFILE" ls / 2>err; rc=$?; true; } &&
	cat err && [ $rc -eq 2 ] && [ $(wc -l <err) -eq 1 ] &&
	grep -q "to profile a command, put it after --: profile \[OPTIONS\] -- ls" err &&
	{ "$PROFILE" make -j8 2>err; rc=$?; true; } &&
	cat err && [ $rc -eq 2 ] &&
	grep -q "^profile: unknown option .-j.; to profile a command, put it after --" err
'

# The command's identity as it sees it: uid, groups, effective and
# permitted capabilities, one per line; then it burns under COMM, and the
# last line is the CPU time burn had (the shell's "times").
IDENT='id -u; id -G; sed -n "s/^Cap\(Eff\|Prm\):\t//p" /proc/self/status; "$BURN" -n "$COMM" -d 2; times'

# cpu_s FILE: the seconds of user and system time on FILE's last line.
cpu_s() { tail -1 "$1" | awk '{ s = 0; for (i = 1; i <= NF; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } print s }'; }

test_expect_success ROOT_BPF,USERS 'without --user the command runs as profile does: root, under sudo too' '
	SUDO_USER=nobody SUDO_UID=65534 SUDO_GID=65534 COMM=t36root \
		"$PROFILE" -F 999 -o root.folded -- sh -c "$IDENT" >out 2>err &&
	cat out err &&
	{ [ "$(sed -n 1p out)" = 0 ] || fail "the command is not root"; } &&
	{ [ "$(sed -n 3p out)" != 0000000000000000 ] || fail "the command has no capabilities"; }
'

test_expect_success ROOT_BPF,USERS '--user nobody: its uid, groups, no capabilities, and its samples profiled' '
	export SUDO_USER=nobody &&
	COMM=t36nobody "$PROFILE" -F 999 -o nobody.folded --user "$SUDO_USER" -- sh -c "$IDENT" >out 2>err &&
	cat out err &&
	printf "%s\n" $(id -u nobody) "$(id -G nobody)" 0000000000000000 0000000000000000 >expect &&
	sed -n 1,4p out >got &&
	diff expect got &&
	grep -q "^burn: [0-9]* [0-9]*$" out &&
	n=$(fsum nobody.folded "^t36nobody;.*;func_[ab]( |;)") && all=$(fsum nobody.folded "") &&
	cpu=$(cpu_s out) && r=$(ratio $n "$(awk -v c=$cpu "BEGIN { print c * 999 }")") &&
	echo "t36nobody: $n in func_a and func_b of $all; $cpu s of CPU: $r of 999 Hz" &&
	{ in_range "$r" 0.8 1.1 || fail "the command as nobody is not all profiled"; } &&
	# By uid, with the user'"'"'s supplementary groups (initgroups).
	COMM=t36daemon "$PROFILE" -o daemon.folded --user $(id -u daemon) -- sh -c "$IDENT" >out 2>err &&
	printf "%s\n" $(id -u daemon) "$(id -G daemon)" >expect &&
	sed -n 1,2p out >got &&
	diff expect got
'

test_expect_success ROOT_BPF '--user: no such user, or no command: one line, exit 2, nothing run' '
	{ "$PROFILE" -o bad.folded --user no-such-user-t36 -- touch ran >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 2 ] || fail "no such user gave $rc"; } &&
	printf "profile: --user \047no-such-user-t36\047: no such user in the passwd database (see --help)\n" >expect &&
	diff expect err && [ ! -s out ] && [ ! -e ran ] && [ ! -e bad.folded ] &&
	{ "$PROFILE" --user nobody 1 >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 2 ] || fail "--user without a command gave $rc"; } &&
	[ $(wc -l <err) -eq 1 ] && grep -q "^profile: --user is who runs a command" err
'

test_expect_success ROOT_BPF,CAPS,USERS '--user that profile cannot become: one line, 126, the command never runs' '
	{ $NOBODY --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon \
		"$PROFILE" --user daemon -- touch "$TRASH/ran" >out 2>err; rc=$?; true; } &&
	cat err &&
	{ [ $rc -eq 126 ] || fail "exit status $rc"; } &&
	printf "profile: cannot run \047touch\047 as daemon: setgroups: Operation not permitted\n" >expect &&
	diff expect err && [ ! -s out ] && [ ! -e ran ]
'

test_done
