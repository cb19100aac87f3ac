#!/bin/bash
# Python names under hostile code objects (issue 27): the bytes of names
# and line indexes are one host-wide budget (64 MiB), shared max-min fair
# between users; every name a code entry holds, and every name the report
# gives a frame, is counted against its user and freed with it.
#
#   flood  nobody makes code objects with 1,000-byte names (and 3,000-byte
#          file names), anew every
#          round at the addresses of earlier rounds' (once, names replaced
#          this way stayed for good and filled the budget), then keeps
#          18,000 of them (more than its share).  A victim (daemon)
#          started afterwards keeps its Python names, root's memory stays
#          bounded, and the warning names nobody.
#   lines  --py-lines -i 1 on a 30,000-line function with a 1,000-byte
#          name: each interval's labels are freed with its report (peak RSS
#          flat), and the lines are the loop's.  (A line is a binary search
#          in the code object's index, not a walk of its table for every
#          instruction: test_pycode's index_big.)
#
# Prerequisites (tests/e2e/lib.sh): PY311, ROOT_BPF, USERS.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11

# A directory the users can read (TRASH is private), with the scripts.
H=$(outside_dir /var/tmp)
chmod 755 "$H"

# Bounds, KiB of peak RSS: before the report's output is written (the
# folded output is as big as the attacker's samples make it), names and
# indexes take 64 MiB at most, on top of what a whole-host run with the
# attacker's 100,000 keys takes here (40 to 60 MiB); between intervals of
# a -p run, nothing grows.
RSS_NAMES=163840
RSS_GROWTH=2048
# AddressSanitizer adds to RSS what the profiler does not keep: four times
# the room there (eight between intervals, its allocator reusing less),
# and freed memory is reused after 1 MiB of quarantine, not 256, for peak
# RSS to say what is kept.
LINES_ENV=
if grep -a -q __asan_init "$PROFILE" 2>/dev/null; then
	RSS_NAMES=$((RSS_NAMES * 4)) RSS_GROWTH=$((RSS_GROWTH * 8))
	LINES_ENV="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
fi

write_scripts() {
	[ -f "$H/attack.py" ] && return 0
	cat >"$H/attack.py" <<'EOF'
# attack.py DEPTH SPIN ROUNDS KEPT: code objects with 1,000-byte names
# and 3,000-byte file names, made anew every round from a template (no
# compiling) and called in a new order, so that each round's stack is new
# to the sampler.  A round is freed after the next 30 (the sampler's notes
# come in batches: a batch must find the objects of each of its rounds);
# its addresses are then reused.  The last KEPT rounds are kept.  After
# ROUNDS, it runs the last one now and then.
import os, random, sys, time, types
depth, spin, rounds, keep = (int(sys.argv[1]), float(sys.argv[2]),
                             int(sys.argv[3]), int(sys.argv[4]))
pad, fpad = "n" * 990, "f" * 2990

def step(i):
    if i + 1 < len(chain):
        return chain[i + 1](i + 1)
    t = time.process_time() + spin
    while time.process_time() < t:
        pass

chain, recent, kept, r = [], [], [], 0
print("attack: running", flush=True)
while r < rounds:
    r += 1
    names = [f"a{os.getpid()}_{r}_{i}_{pad}" for i in range(depth)]
    random.shuffle(names)
    chain = [types.FunctionType(step.__code__.replace(
                 co_name=n, co_qualname=n, co_filename=n[:20] + fpad,
                 co_firstlineno=r), globals()) for n in names]
    if r > rounds - keep:
        kept.append(chain)
    else:
        recent = recent[-29:] + [chain]
    chain[0](0)
print("attack: done", flush=True)
while True:
    chain[0](0)
    time.sleep(0.01)
EOF
	cat >"$H/victim.py" <<'EOF'
import sys, time
open("/proc/self/comm", "w").write("t82victim")
def victim_work(t):
    n = 0
    while time.perf_counter() < t:
        n += 1
    return n
def victim_outer(secs):
    return victim_work(time.perf_counter() + secs)
print("victim: running", flush=True)
victim_outer(float(sys.argv[1]))
EOF
	# mklong.py N FILE: a function of N lines (its loop, lines 6 to N + 5)
	# named by 1,000 bytes.
	cat >"$H/mklong.py" <<'EOF'
import sys
n = int(sys.argv[1])
name = "longfunc_" + "L" * 991
with open(sys.argv[2], "w") as f:
    f.write("import sys, time\nopen('/proc/self/comm', 'w').write('t82long')\n")
    f.write(f"def {name}(t):\n    x = 0\n    while time.perf_counter() < t:\n")
    for i in range(n):
        f.write(f"        x = {i}\n")
    f.write("print('long: running', flush=True)\n")
    f.write(f"{name}(time.perf_counter() + float(sys.argv[1]))\n")
EOF
	chmod 644 "$H"/*.py
}

# victim_run OUT [ATTACKERS]: a whole-host profile; ATTACKERS instances of
# attack.py as nobody, until done; the victim for 4 s; then SIGINT.
victim_run() {
	local out=$1 n=${2:-0} pid i
	"$PROFILE" -vv -F 999 --hash-storage-size 131072 -f 60 >"$out" 2>"$out.err" &
	pid=$!
	wait_attached $pid
	for i in $(seq "$n"); do
		bg $NOBODY $PY "$H/attack.py" 60 0.002 1150 150 >"a$i.out" 2>&1
	done
	for i in $(seq "$n"); do
		wait_for "a$i.out" "^attack: done" 50
	done
	# What they made, the reader has read (or refused).
	[ "$n" = 0 ] || sleep 2
	$VICTIM $PY "$H/victim.py" 4 >"$out.victim"
	kill -INT $pid
	wait $pid || { tail -5 "$out.err"; fail "profile exited with status $?"; }
}

# victim_named OUT: "NAMED ALL" samples of the victim, NAMED those with
# its function's name.
victim_named() {
	echo "$(fsum "$1" '^t82victim;.*;victim_outer \(victim\.py\);victim_work \(victim\.py\)') $(fsum "$1" '^t82victim;')"
}

t_flood() {
	local base all named peak
	write_scripts
	victim_run base
	read -r named all <<<"$(victim_named base)"
	echo "alone: $named of $all victim samples named"
	[ "$all" -ge 50 ] && [ $((named * 2)) -ge "$all" ] ||
		fail "the victim alone: $named of $all samples named"
	base=$(ratio "$named" "$all")

	victim_run out 2
	kill $(cat "$TRASH/bg.pids") 2>/dev/null || :
	grep -E "^profile: (report|python: [0-9]+ processes|Python names)" out.err | cut -c1-300
	read -r named all <<<"$(victim_named out)"
	echo "attacked: $named of $all victim samples named (alone: $base)"
	[ "$all" -ge 50 ] || fail "the victim has $all samples"
	in_range "$(ratio "$(ratio "$named" "$all")" "$base")" 0.9 2 ||
		fail "the victim's samples named: $named of $all, alone $base"
	peak=$(sed -n 's/^profile: report: .*peak RSS [0-9]*, [0-9]*, \([0-9]*\), [0-9]* KiB$/\1/p' out.err | tail -1)
	[ -n "$peak" ] && [ "$peak" -le $RSS_NAMES ] ||
		fail "peak RSS before the output ${peak:-?} KiB, over $RSS_NAMES"
	grep -q "^profile: Python names: user nobody (uid 65534) filled its share" out.err ||
		fail "no warning naming nobody"
}

t_lines() {
	local pids= i a b
	write_scripts
	for i in 1 2 3; do
		$PY "$H/mklong.py" 30000 "$H/long$i.py"
		chmod 644 "$H/long$i.py"
		bg $VICTIM $PY "$H/long$i.py" 20 >"long$i.out"
		pids=$pids${pids:+,}$!
	done
	for i in 1 2 3; do wait_for "long$i.out" "^long: running" 20; done
	env $LINES_ENV "$PROFILE" -vv --py-lines -i 1 -F 2999 -p "$pids" -f 10 >out 2>out.err ||
		{ tail -5 out.err; fail "profile exited with status $?"; }
	kill ${pids//,/ } 2>/dev/null || :
	grep "^profile: report:" out.err
	# Peak RSS once each report's names are made (after symbolizing): flat
	# over the second half (the first has seen the biggest interval, or
	# nearly: once, each interval added its labels, 1 to 4 MiB).
	a=$(sed -n 's/^profile: report: .*peak RSS [0-9]*, [0-9]*, \([0-9]*\), .*/\1/p' out.err | sed -n 5p)
	b=$(sed -n 's/^profile: report: .*peak RSS [0-9]*, [0-9]*, \([0-9]*\), .*/\1/p' out.err | tail -1)
	echo "peak RSS symbolizing the fifth report $a KiB, the last $b KiB"
	[ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -le $RSS_GROWTH ] ||
		fail "peak RSS grew from ${a:-?} to ${b:-?} KiB over the intervals"
	# Lines of the loop, many of them, and no other line of the function.
	awk '/^t82long;/ && match($0, /longfunc_L+ \(long[123]\.py:[0-9]+\)/) {
		s = substr($0, RSTART, RLENGTH); sub(/.*:/, "", s); sub(/\)/, "", s)
		all += $NF; if (s + 0 >= 5 && s + 0 <= 30005) { in_loop += $NF; seen[s] = 1 }
	} END { n = 0; for (l in seen) n++
		printf "%d of %d samples on the loop'"'"'s lines, %d lines\n", in_loop, all, n
		exit !(all >= 3000 && in_loop * 100 >= all * 99 && n >= 2000) }' out ||
		fail "too few samples, or the function's lines are not the loop's"
}

test_expect_success PY311,ROOT_BPF,USERS 'code objects renamed at reused addresses by nobody: the victim keeps its Python names, RSS bounded, nobody named' t_flood
test_expect_success PY311,ROOT_BPF,USERS '--py-lines -i 1 on a 30,000-line function: RSS flat over intervals, lines right' t_lines

test_done
