#!/bin/bash
# PID reuse: nobody forks and exits as fast as it can, so that pids go
# round, while python3 victims (daemon) start and exit.  When the flood
# takes a victim's pid before the report, the victim's samples must still
# be named from the victim's own mappings (the sampler tells processes
# apart by start time), not from the flood's child under that pid, nor left
# [unknown].
. "$(dirname "$0")/lib.sh"

H=$(outside_dir /var/tmp)
chmod 755 "$H"
NV=4

setup() {
	[ -x "$H/hostile" ] ||
		cc -O2 -g -fno-omit-frame-pointer -o "$H/hostile" "$PROFILE_TOP/tests/e2e/helpers/hostile.c"
	cat >"$H/victim.py" <<-'EOF'
	import time
	def victim_spin(t):
	    end = time.time() + t
	    while time.time() < end:
	        pass
	victim_spin(2)
	EOF
	chmod 644 "$H/victim.py"
}

# Start NV victims at once; their pids (setpriv execs python3) in vpids.
victims() {
	local v=""
	for _ in $(seq $NV); do
		$VICTIM /usr/bin/python3.11 "$H/victim.py" &
		v="$v $!"
	done
	echo "$v" >vpids
	wait $v
}

# Wait until the kernel's last pid has gone round past every victim's pid:
# below the least, then up to the greatest.  At most 40 s.
wait_wrap() {
	local lo hi last wrapped=0
	lo=$(tr ' ' '\n' <vpids | sed '/^$/d' | sort -n | head -1)
	hi=$(tr ' ' '\n' <vpids | sed '/^$/d' | sort -n | tail -1)
	for _ in $(seq 800); do
		last=$(cat /proc/sys/kernel/ns_last_pid)
		[ "$last" -lt "$lo" ] && wrapped=1
		[ $wrapped = 1 ] && [ "$last" -gt "$hi" ] && return 0
		sleep 0.05
	done
	fail "pids did not go round past the victims ($lo-$hi) within 40 s"
}

# run OUT FLOOD: a whole-host profile by thread while the victims run; with
# FLOOD, two fork loops as nobody from before the victims start until their
# pids were all taken again.  Ended with SIGINT.  One interval (-i) so that
# nothing is named before the report: without -i, stacks are named ahead
# while the run goes on when the host makes many new ones, by chance
# before the victims' pids are taken.
run() {
	local out=$1 flood=$2 pp f1 f2
	bg "$PROFILE" -f -v -F 499 --per-thread -i 60 60 >"$out" 2>"$out.err"
	pp=$!
	wait_attached $pp
	if [ "$flood" = 1 ]; then
		bg $NOBODY "$H/hostile" forkloop 50 1 >h1.out 2>&1
		f1=$!
		bg $NOBODY "$H/hostile" forkloop 50 1 >h2.out 2>&1
		f2=$!
		wait_for h1.out "^hostile: 1 maps" 5
		wait_for h2.out "^hostile: 1 maps" 5
	fi
	victims
	if [ "$flood" = 1 ]; then
		wait_wrap
		kill -9 $f1 $f2
	fi
	kill -INT $pp
	wait $pp || fail "profile exited $?"
	grep -E "reused pids|processes:" "$out.err" || :
}

# Per victim (pids in vpids): "PID SAMPLES WHOLE" of its samples in
# victim_spin (not its start-up, whose share of its samples varies with the
# load), WHOLE those named from their leaf down to _start.
per_victim() {
	awk 'NR == FNR { for (i = 1; i <= NF; i++) v[$i] = 1; next }
	/;victim_spin \(victim\.py\)/ {
		split($1, a, ";"); pid = a[1]; sub(/^.*-/, "", pid); sub(/\/.*/, "", pid)
		if (!(pid in v)) next
		n[pid] += $NF
		if ($0 ~ /^[^;]*;_start;__libc_start_main;/ && $0 !~ /\[unknown\]/) w[pid] += $NF
	} END { for (p in v) print p, n[p] + 0, w[p] + 0 }' vpids "$1" | sort -n
}

t_pid_reuse() {
	setup
	run base.out 0
	per_victim base.out >base.v
	cat base.v
	base=$(awk '{ n += $2; w += $3 } END { print n ? w / n : 0 }' base.v)
	echo "baseline: $base of the victims' samples whole"
	in_range "$base" 0.5 1 || fail "baseline victims' stacks are not whole"
	run attack.out 1
	per_victim attack.out >attack.v
	cat attack.v
	# Each victim whole as a rule (a taken pid made all of one [unknown]),
	# and all of them together within 10% of the baseline.
	while read -r pid n w; do
		[ "$n" -ge 5 ] || fail "victim $pid: only $n samples"
		r=$(ratio "$w" "$n")
		in_range "$r" "$(awk -v b="$base" 'BEGIN { print 0.5 * b }')" 1 ||
			fail "victim $pid: $w of $n samples whole ($r), baseline $base"
	done <attack.v
	all=$(awk '{ n += $2; w += $3 } END { print n ? w / n : 0 }' attack.v)
	echo "under the flood: $all of the victims' samples whole"
	in_range "$all" "$(awk -v b="$base" 'BEGIN { print 0.9 * b }')" 1 ||
		fail "under the flood $all of the victims' samples whole, baseline $base"
}

test_expect_success ROOT_BPF,USERS,PY311,PY311_DEBUG_FILES,cc 'pids reused by a fork flood: victims still named and whole' t_pid_reuse

test_done
