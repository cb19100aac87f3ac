#!/bin/bash
# Off-CPU time of Python code: tests/workloads/py/sleeper.py blocks its main
# thread in slow_io (time.sleep 30 ms), fast_io (10 ms) and pipe_wait (a
# pipe another thread writes to 20 ms later), in a loop, on every CPython
# present (Debian's 3.11, pyenv's 3.8 to 3.13 under /root/.pyenv/versions).
# The off-CPU stacks must name those Python functions, under main
# (sleeper.py), and weigh them by the time they blocked:
#
#   slow_io / fast_io = 3.0 and pipe_wait / fast_io = 2.0, within 15%
#
# One profile (--off-cpu --per-thread, 4 s) takes every version's process
# at once, so that the file runs in seconds; each test reads its own
# process's main thread (COMM-PID/PID) from it.
. "$(dirname "$0")/lib.sh"

PYWL=$PROFILE_TOP/tests/workloads/py
SECS=4

# The CPythons: "label path" lines.  Debian's always (its test needs PY311),
# pyenv's where present.
pythons() {
	echo "debian-3.11 /usr/bin/python3.11"
	for py in /root/.pyenv/versions/3.{8,9,10,11,12,13}.*/bin/python3; do
		[ -x "$py" ] || continue
		echo "pyenv-$(basename "$(dirname "$(dirname "$py")")") $py"
	done
}

# sleepers_folded: $TRASH/all.folded, a sleeper.py per CPython, profiled
# together; $TRASH/LABEL.pid each one's pid.  Made by the first test to ask.
sleepers_folded() {
	local label py pids= rc=0
	[ -s "$TRASH/all.folded" ] && return 0
	while read -r label py; do
		[ -x "$py" ] || continue
		bg "$py" "$PYWL/sleeper.py" $((SECS + 12)) >"$TRASH/$label.wl"
		echo $! >"$TRASH/$label.pid"
		pids=${pids:+$pids,}$!
	done < <(pythons)
	while read -r label py; do
		[ -x "$py" ] || continue
		wait_for "$TRASH/$label.wl" "^sleeper: running" 10 || return 1
	done < <(pythons)
	"$PROFILE" --off-cpu -f --per-thread -p "$pids" $SECS >"$TRASH/all.tmp" 2>"$TRASH/all.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$TRASH/all.err"; fail "profile exited with status $rc"; return 1; }
	mv "$TRASH/all.tmp" "$TRASH/all.folded"
}

# A frame of sleeper.py, for regular expressions: sf NAME.
sf() { printf '%s \\(sleeper\\.py\\)' "$1"; }

# sleeper_check LABEL: the answer for one version's main thread.
sleeper_check() {
	local pid slow fast pipe ordered named tot
	sleepers_folded || return 1
	pid=$(cat "$TRASH/$1.pid")
	grep -E "^[^;]*-$pid/$pid;" "$TRASH/all.folded" >"$1.folded" ||
		{ fail "$1: no stacks of its main thread ($pid)"; return 1; }
	tot=$(fsum "$1.folded" .)
	named=$(fsum "$1.folded" "$(sf main)")
	slow=$(fsum "$1.folded" ";$(sf slow_io)( |;)")
	fast=$(fsum "$1.folded" ";$(sf fast_io)( |;)")
	pipe=$(fsum "$1.folded" ";$(sf pipe_wait)( |;)")
	# 3.8 to 3.10 call through C between Python frames (function_code_fastcall).
	ordered=$(fsum "$1.folded" ";$(sf main);([^;(]+;)*($(sf slow_io)|$(sf fast_io)|$(sf pipe_wait));")
	echo "$1: $tot us blocked, $named under main (sleeper.py); slow_io=$slow fast_io=$fast" \
		"pipe_wait=$pipe us, $ordered of them under main (sleeper.py)"
	[ $((slow + fast)) -ge 1500000 ] || { fail "$1: $((slow + fast)) us in slow_io and fast_io, want 1.5 s+"; return 1; }
	r=$(ratio $slow $fast) && echo "slow_io/fast_io=$r"
	in_range $r 2.55 3.45 || { fail "$1: slow_io/fast_io is $r, want 3.0 within 15%"; return 1; }
	r=$(ratio $pipe $fast) && echo "pipe_wait/fast_io=$r"
	in_range $r 1.7 2.3 || { fail "$1: pipe_wait/fast_io is $r, want 2.0 within 15%"; return 1; }
	in_range "$(ratio $ordered $((slow + fast + pipe)))" 0.99 1 ||
		{ fail "$1: $ordered of $((slow + fast + pipe)) us under main (sleeper.py)"; return 1; }
	in_range "$(ratio $named $tot)" 0.9 1 || { fail "$1: $named of $tot us under main (sleeper.py)"; return 1; }
}

while read -r label py; do
	prereq=ROOT_BPF
	[ "$label" != debian-3.11 ] || prereq=ROOT_BPF,PY311
	test_expect_success $prereq "$label: slow_io/fast_io 3.0, pipe_wait/fast_io 2.0 within 15%, named in off-CPU stacks" "
		sleeper_check $label
	"
done < <(pythons)

# The GIL: three threads spinning in Python wait for it in turn, off the
# CPU.  Their off-CPU time is marked [GIL released] on every version (the
# holder's own preemptions are the rest): at least 90% of it.
gil_check() {
	local py=$1 label=$2 rc=0 tot marked
	bg "$py" "$PYWL/gilwait.py" 8 >"$label.gil.wl"
	wait_for "$label.gil.wl" "^gilwait: running" 10 || return 1
	"$PROFILE" --off-cpu -f -p $! 2 >"$label.gil" 2>"$label.gil.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$label.gil.err"; fail "$label: profile exited with status $rc"; return 1; }
	tot=$(fsum "$label.gil" ";worker \\(gilwait\\.py\\);")
	marked=$(fsum "$label.gil" ";worker \\(gilwait\\.py\\);.*\\[GIL released\\];")
	echo "$label: $marked of $tot us of the workers off-CPU marked [GIL released]"
	[ "$tot" -gt 500000 ] || { fail "$label: $tot us of the workers off-CPU"; return 1; }
	in_range "$(ratio $marked $tot)" 0.9 1 || { fail "$label: $marked of $tot us marked"; return 1; }
}

while read -r label py; do
	prereq=ROOT_BPF
	[ "$label" != debian-3.11 ] || prereq=ROOT_BPF,PY311
	test_expect_success $prereq "$label: threads waiting for the GIL marked in off-CPU stacks" "
		gil_check $py $label
	"
done < <(pythons)

test_done
