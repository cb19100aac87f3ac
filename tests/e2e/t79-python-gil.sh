#!/bin/bash
# [GIL released] on every CPython here: Debian's python3.11 and pyenv's 3.8
# to 3.13 under /root/.pyenv/versions where present.  Until 3.11 the
# holder is the runtime's current thread state; from 3.12 the GIL is the
# interpreter's (interp->ceval.gil: last_holder while locked).
#
# tests/workloads/py/gil.py: py-hold spins in pure Python (it holds the
# GIL), py-free hashes 32 MiB at a time in C with the GIL released, both
# on a CPU of their own; py-idle sleeps.  The answer, by the workload's
# design: >= 90% of py-free's samples in hash_chunk are marked, <= 5% of
# py-hold's are, and py-idle has almost none (off the CPU).
#
# Stacks are read with helpers/pystacks.  Prerequisites (tests/e2e/lib.sh):
# PY311, ROOT_BPF.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11
PYWL=$PROFILE_TOP/tests/workloads/py
PYSTACKS=$PROFILE_TOP/tests/e2e/helpers/pystacks

# stats TAG ARGS...: run pystacks ARGS, print its line with TAG, and set its
# values as shell variables.
stats() {
	local tag=$1 st
	shift
	st=$("$PY" "$PYSTACKS" "$@") || { echo "$st"; fail "pystacks $*: no samples"; return 1; }
	echo "$tag: $st"
	eval "$st"
}

# gil_check PYTHON: gil.py profiled for 3 s at 999 Hz; its answer.
gil_check() {
	local py=$1 tag pid rc=0 idle
	tag=$("$py" -c 'import platform; print(platform.python_version())')
	bg "$py" "$PYWL/gil.py" 8 >"gil-$tag.out"
	pid=$!
	wait_for "gil-$tag.out" "^gil: running" 10
	"$PROFILE" -F 999 -f -p $pid 3 >"gil-$tag.folded" 2>"gil-$tag.err" || rc=$?
	[ $rc -eq 0 ] || { cat "gil-$tag.err"; fail "profile of $py exited with status $rc"; return 1; }

	# Both marked and in hash_chunk, wherever the mark sits.
	stats "$tag py-free" -c py-free --count h="hash_chunk \(gil\.py\)" \
		--count hg="^(?=.*\[GIL released\])(?=.*hash_chunk \(gil\.py\))" "gil-$tag.folded"
	echo "$tag py-free: $(ratio $hg $h) of the samples in hash_chunk marked"
	at_least $h 300 "$tag: py-free's samples in hash_chunk"
	at_least "$(ratio $hg $h)" 0.90 "$tag: share of py-free's samples in hash_chunk marked [GIL released]"

	stats "$tag py-hold" -c py-hold --count spin="hold_spin \(gil\.py\)" "gil-$tag.folded"
	at_least $spin 300 "$tag: py-hold's samples in hold_spin"
	at_most $gil 5 "$tag: py-hold's samples marked [GIL released] (%)"

	# Asleep: a few samples at most, as it wakes every 50 ms.
	idle=$(fsum "gil-$tag.folded" "^py-idle;")
	echo "$tag py-idle: $idle samples"
	at_most $idle $((h / 20)) "$tag: py-idle's samples (asleep)"
}

test_expect_success PY311,ROOT_BPF 'Debian 3.11: [GIL released] on the thread hashing, not on the one spinning' '
	gil_check $PY
'

for py in /root/.pyenv/versions/3.{8,9,10,11,12,13}.*/bin/python3; do
	[ -x "$py" ] || continue
	v=$(basename "$(dirname "$(dirname "$py")")")
	test_expect_success PY311,ROOT_BPF "pyenv $v: [GIL released] on the thread hashing, not on the one spinning" "
		gil_check $py
	"
done

test_done
