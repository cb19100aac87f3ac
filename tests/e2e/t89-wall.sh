#!/bin/bash
# Wall-clock profiles (--wall): on-CPU samples and off-CPU time of one
# process in one unit (microseconds in folded output), off-CPU stacks
# ending with the marker frame [off-cpu].  tests/workloads/wallmix (no frame
# pointers) loops: func_cpu runs until it has used 30 ms of CPU, then
# func_sleep sleeps 70 ms.  So, of the time in the two:
#
#   func_cpu on the CPU (no marker)       30%, within 10% (27% to 33%)
#   func_sleep off the CPU (the marker)   70%, within 10% (63% to 77%)
#
# and all the thread's time adds up to the profile's duration, within 10%.
# Time func_cpu spends preempted on a busy host is off-CPU time of
# func_cpu, in neither share (wallmix counts its 30 ms by its CPU clock).
. "$(dirname "$0")/lib.sh"

WALLMIX=$WORKLOADS/wallmix
SECS=4
# go keeps a cache under $HOME; CI may run without one.
export HOME=${HOME:-$TRASH}

# wall_profile: $TRASH/wall.folded and wall.pprof, SECS s of a wallmix at
# 999 Hz with --wall -p.  Made by the first test to ask.
wall_profile() {
	local rc=0
	[ -s "$TRASH/wall.folded" ] && return 0
	bg "$WALLMIX" -d $((SECS + 10)) >"$TRASH/wallmix.out"
	wait_for "$TRASH/wallmix.out" "^wallmix: running" 10 || return 1
	"$PROFILE" --wall -F 999 -p $! -o "$TRASH/wall.tmp.folded" -o "$TRASH/wall.pprof" $SECS \
		2>"$TRASH/wall.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$TRASH/wall.err"; fail "profile --wall exited with status $rc"; return 1; }
	mv "$TRASH/wall.tmp.folded" "$TRASH/wall.folded"
}

# shares FILE: sets on (func_cpu, unmarked), off (func_sleep, marked), tot
# (every line), in microseconds, and checks both shares of on + off.
shares() {
	read -r on off tot < <(awk '{
		n = $NF; tot += n
		marked = ($0 ~ /;\[off-cpu\] [0-9]+$/)
		if (!marked && $0 ~ /;func_cpu( |;)/) on += n
		if (marked && $0 ~ /;func_sleep;/) off += n
	} END { printf "%d %d %d\n", on, off, tot }' "$1")
	echo "$1: func_cpu on-CPU $on us, func_sleep off-CPU $off us, all $tot us"
	[ $((on + off)) -gt 0 ] || { fail "nothing in func_cpu or func_sleep"; return 1; }
	s=$(ratio $on $((on + off))) && echo "on-CPU share $s"
	in_range $s 0.27 0.33 || { fail "on-CPU share $s, want 0.30 within 10%"; return 1; }
	s=$(ratio $off $((on + off))) && echo "off-CPU share $s"
	in_range $s 0.63 0.77 || { fail "off-CPU share $s, want 0.70 within 10%"; return 1; }
}

test_expect_success ROOT_BPF '--wall -p: func_cpu 30% on the CPU, func_sleep 70% off it, within 10%' '
	wall_profile &&
	shares wall.folded
'

test_expect_success ROOT_BPF '--wall -p: the thread'"'"'s time adds up to the duration within 10%' '
	wall_profile &&
	t=$(fsum wall.folded .) && echo "$t us in $SECS s" &&
	in_range $t $((SECS * 900000)) $((SECS * 1100000))
'

test_expect_success ROOT_BPF '--wall: [off-cpu] is the leaf frame of off-CPU stacks, never elsewhere' '
	wall_profile &&
	{ ! grep -F "[off-cpu];" wall.folded || fail "[off-cpu] not last"; } &&
	s=$(fsum wall.folded ";func_sleep;") &&
	m=$(fsum wall.folded ";func_sleep;.*;\[off-cpu\] [0-9]+$") &&
	echo "func_sleep: $m of $s us marked" &&
	in_range "$(ratio $m $s)" 0.99 1 &&
	{ [ -z "$(not_folded wall.folded)" ] || fail "lines that are not folded"; }
'

test_expect_success ROOT_BPF,GO '--wall pprof: wall = cpu + off_cpu, in nanoseconds, as the folded total' '
	wall_profile &&
	go tool pprof -raw wall.pprof >raw 2>raw.err &&
	types=$(sed -n "/^Samples:/{n;p;q}" raw) && echo "pprof sample types: $types" &&
	types=$(echo "$types" | sed "s/\[dflt\]//g") &&
	for t in wall cpu off_cpu; do
		echo "$types" | tr " " "\n" | grep -q -x "$t/nanoseconds" || echo "$t/nanoseconds"
	done >missing &&
	{ [ ! -s missing ] || fail "sample types missing: $(cat missing)"; } &&
	cols=$(echo "$types" | tr " " "\n" | awk "{ sub(/\\/.*/, \"\"); c[\$0] = NR } END { print c[\"wall\"], c[\"cpu\"], c[\"off_cpu\"] }") &&
	read -r cw cc co <<<"$cols" &&
	read -r w c o < <(awk -v cw=$cw -v cc=$cc -v co=$co "/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && /^ +[0-9]+:? / { w += \$cw; c += \$cc; o += \$co }
		END { printf \"%.0f %.0f %.0f\\n\", w / 1000, c / 1000, o / 1000 }" raw) &&
	f=$(fsum wall.folded .) && n=$(grep -c . wall.folded) &&
	echo "pprof: wall $w us = cpu $c + off_cpu $o; folded $f us ($n stacks)" &&
	d=$((w - c - o)) && { [ ${d#-} -le 2 ] || fail "wall $w != cpu $c + off_cpu $o"; } &&
	d=$((w - f)) && { [ ${d#-} -le $((n + f / 1000)) ] || fail "pprof wall $w us, folded $f us"; }
'

test_expect_success ROOT_BPF '--wall -- CMD: the same shares' '
	rc=0 &&
	"$PROFILE" --wall -F 999 -o cmd.folded -- "$WALLMIX" -d 3 >cmd.out 2>cmd.err || rc=$? &&
	{ [ $rc -eq 0 ] || { cat cmd.err; fail "exit status $rc"; }; } &&
	shares cmd.folded
'

test_expect_success ROOT_BPF '--wall without -p, -L or a command: one line on stderr, exit 2' '
	rc=0 &&
	"$PROFILE" --wall -f 1 >out 2>err || rc=$? &&
	cat err &&
	{ [ $rc -eq 2 ] || fail "exit status $rc"; } &&
	{ [ "$(wc -l <err)" -eq 1 ] || fail "not one line"; } &&
	grep -q -e "--wall" err &&
	[ ! -s out ]
'

test_done
