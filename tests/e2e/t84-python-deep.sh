#!/bin/bash
# Python stacks whole and named by the live code object (issue 28), on
# every CPython here: Debian's python3.11 and pyenv's 3.8 to 3.13 under
# /root/.pyenv/versions where present.  Workloads in tests/workloads/py/:
#
#   deep.py 3 100   every sample 100 Python frames deep (<module>, main,
#                   97 of down, burn): each comes out whole, <module> at
#                   the root.  Once 63 frames were kept, then
#                   "[python: more frames]".
#   deep.py 3 140   deeper than the walk (126 frames): the 126 innermost,
#                   then the marker.
#   remade.py 3     functions made anew at the freed one's address, with
#                   the freed one's name memory (code.replace()): alpha_K
#                   only ever under stage_a, beta_K under stage_b, and each
#                   turn's function named anew (a name kept by address
#                   alone showed beta under stage_a, one name for all).
#   hot.py 5 under python -X perf (pyenv's 3.12 and 3.13): each Python
#                   function called through a trampoline of its own, named
#                   "py::f:FILE" in /tmp/perf-PID.map and without a frame
#                   pointer: no "py::" frame (once every Python frame came
#                   twice), and the native root kept (once lost in 99%).
#
# Stacks are read with helpers/pydeep.  Prerequisites (tests/e2e/lib.sh):
# PY311, ROOT_BPF.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11
PYWL=$PROFILE_TOP/tests/workloads/py
PYDEEP=$PROFILE_TOP/tests/e2e/helpers/pydeep

# Debian's, then pyenv's 3.8 to 3.13 that are here.
pythons() {
	echo $PY
	for v in 8 9 10 11 12 13; do
		for p in /root/.pyenv/versions/3.$v.*/bin/python3.$v; do
			[ -x "$p" ] && echo "$p"
		done
	done
}

# check NAME ARGS...: run pydeep ARGS, print its line with NAME, and set its
# values as shell variables.
check() {
	local name=$1 st
	shift
	st=$("$PY" "$PYDEEP" "$@") || fail "pydeep $*"
	echo "$name: $st"
	eval "$st"
}

within() { in_range "$1" "$2" "$3" || fail "$4 is $1, want $2 to $3"; }
at_least() { within "$1" "$2" 1e9 "$3"; }
at_most() { within "$1" -1e9 "$2" "$3"; }

# run PYTHON OUT: deep.py 100 and remade.py under PYTHON, profiled together
# for 3 s into OUT.
run() {
	local py=$1 out=$2 p1 p2 rc=0
	bg "$py" "$PYWL/deep.py" 5 100 >/dev/null
	p1=$!
	bg "$py" "$PYWL/remade.py" 5 >"$out.remade"
	p2=$!
	wait_for "$out.remade" "^remade: running" 10
	sleep 0.3
	"$PROFILE" -F 499 -f -p $p1,$p2 3 >"$out" 2>"$out.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$out.err"; fail "profile exited with status $rc"; }
}

# $TRASH/vN.folded for the Nth of pythons(): the first test to ask makes
# them, the other reuses them.
all_folded() {
	local py n=0
	[ -s "$TRASH/done" ] && return 0
	for py in $(pythons); do
		n=$((n + 1))
		run "$py" "$TRASH/v$n.folded"
	done
	echo $n >"$TRASH/done"
}

t_deep() {
	local py n=0
	all_folded
	for py in $(pythons); do
		n=$((n + 1))
		check "$py deep.py 100" deep "v$n.folded" 100
		at_least $samples 50 "$py: samples of deep.py"
		at_least $whole $((samples * 95 / 100)) "$py: whole 100-frame stacks, <module> at the root"
	done
}

t_remade() {
	local py n=0
	all_folded
	for py in $(pythons); do
		n=$((n + 1))
		check "$py remade.py" remade "v$n.folded"
		at_least $samples 50 "$py: samples of remade.py"
		# None: a frame carries 48 bits of its code object's identity.
		# With 16, two of a run's ~200 objects at one address shared
		# one in 3 of 7 CPythons, and 5 samples showed the other's name.
		at_most $impossible 0 "$py: samples with an impossible path"
		# A turn is 10 ms of CPU, 5 samples; names kept by address
		# gave all of alpha's turns one name, all of beta's another.
		at_least $names 10 "$py: alpha_K and beta_K named"
		at_most $maxname $((samples / 5 > 25 ? samples / 5 : 25)) "$py: samples of one name"
	done
}

t_cut() {
	local pid
	bg $PY "$PYWL/deep.py" 4 140 >/dev/null
	pid=$!
	sleep 0.5
	"$PROFILE" -F 499 -f -p $pid 2 >cut.folded 2>cut.err || { cat cut.err; fail "profile failed"; }
	check "deep.py 140" cut cut.folded 140 126
	at_least $samples 50 "samples of deep.py"
	at_least $whole $((samples * 95 / 100)) "stacks: the marker, 125 down, burn"
}

# -X perf: stacks through the trampolines, each Python frame once.
t_xperf() {
	local py pid n=0 out rc
	for py in /root/.pyenv/versions/3.1[23].*/bin/python3.1[23]; do
		[ -x "$py" ] || continue
		n=$((n + 1)) rc=0 out=xperf$n
		bg "$py" -X perf "$PYWL/hot.py" 5 >$out.out
		pid=$!
		wait_for $out.out "^hot: running" 10
		"$PROFILE" -F 499 -f -p $pid 3 >$out.folded 2>$out.err || rc=$?
		[ $rc -eq 0 ] || { cat $out.err; fail "profile exited with status $rc"; }
		samples=$(fsum $out.folded '.') doubled=$(fsum $out.folded 'py::')
		rooted=$(fsum $out.folded ';Py_RunMain;.*<module> \(hot\.py\);(.*;)?main \(hot\.py\);(.*;)?hot_[ab] \(hot\.py\);(.*;)?spin \(hot\.py\)')
		echo "$py -X perf: samples=$samples doubled=$doubled rooted=$rooted"
		at_least $samples 100 "$py -X perf: samples"
		at_most $doubled 0 "$py -X perf: samples with a py:: trampoline frame"
		at_least $rooted $((samples * 85 / 100)) "$py -X perf: samples from Py_RunMain to spin"
	done
	echo "$n CPythons with -X perf here"
}

test_expect_success PY311,ROOT_BPF 'every CPython here: 100 frames deep, whole, <module> at the root' t_deep
test_expect_success PY311,ROOT_BPF 'every CPython here: functions made anew where one was freed, each named anew, never under the other path' t_remade
test_expect_success PY311,ROOT_BPF 'deeper than 126 frames: the innermost 126, then [python: more frames]' t_cut
test_expect_success ROOT_BPF 'python -X perf (3.12, 3.13 here): no py:: trampoline frames, the native root kept' t_xperf
test_done
