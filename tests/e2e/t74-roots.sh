#!/bin/bash
# Thread and runtime roots (issue 28): a walk ends at the first frame of a
# thread (clone3, start_thread) with no garbage beyond it; Go's roots count
# in the completeness figures; -p ends when its processes have exited.
# Prerequisites: ROOT_BPF; GO for the Go test.
. "$(dirname "$0")/lib.sh"

# The longest run of consecutive [unknown] frames in a folded FILE.
unknown_run() {
	awk '{ n = split($1, f, ";"); run = 0
	       for (i = 2; i <= n; i++) { run = f[i] == "[unknown]" ? run + 1 : 0; if (run > max) max = run } }
	     END { print max + 0 }' "$1"
}

# The most frames in one stack of a folded FILE.
max_depth() { awk '{ n = split($1, f, ";"); if (n - 1 > m) m = n - 1 } END { print m + 0 }' "$1"; }

# Threads made in a loop, from the start (samples before the process is
# synced too), with and without frame pointers: the new threads' stacks
# end at clone3 or start_thread; nothing runs on above a root.
t_spawn() {
	local w out run depth kids whole
	for w in threadspawn threadspawn-nofp; do
		out=$w.folded
		"$PROFILE" -F 999 -f -o $out -- "$WORKLOADS/$w" 3 >/dev/null 2>err || { cat err; fail "profile $w"; }
		run=$(unknown_run $out)
		depth=$(max_depth $out)
		kids=$(fsum $out ";spawned_work( |;)")
		whole=$(fsum $out "^[^;]*;clone3;start_thread;spawned;spawned_work( |;)")
		echo "$w: longest [unknown] run $run, deepest stack $depth, spawned_work $kids, from clone3 $whole"
		[ "$run" -le 1 ] || fail "$w: a run of $run [unknown] frames"
		[ "$depth" -le 60 ] || fail "$w: a stack of $depth frames (the true depth is under 40)"
		[ "$kids" -ge 20 ] || fail "$w: only $kids samples in spawned_work"
		[ $((whole * 100)) -ge $((kids * 95)) ] || fail "$w: $whole of $kids spawned_work samples under clone3;start_thread"
	done
}

test_expect_success ROOT_BPF 'threads made in a loop: stacks end at clone3/start_thread, no [unknown] run' t_spawn

# A Go program: its goroutines end in runtime.goexit (runtime.goexit.abi0
# since Go 1.17), its threads in runtime.mstart or rt0_go.
t_go() {
	local pct
	mkdir gob && cd gob
	cat >main.go <<'GO'
package main

import "time"

//go:noinline
func spin(n int) int { s := 0; for i := 0; i < n; i++ { s += i ^ (s >> 3) }; return s }

func main() {
	end := time.Now().Add(3 * time.Second)
	done := make(chan int)
	go func() { t := 0; for time.Now().Before(end) { t += spin(100000) }; done <- t }()
	t := 0
	for time.Now().Before(end) { t += spin(100000) }
	<-done
	_ = t
}
GO
	printf 'module gob\ngo 1.19\n' >go.mod
	HOME=$TRASH GOCACHE=$TRASH/gocache GOFLAGS= go build -o gob . || fail "go build"
	"$PROFILE" -F 499 -f -v -o go.folded -- ./gob >/dev/null 2>err || { cat err; fail "profile"; }
	pct=$(sed -n 's/^profile: user stack completeness: \([0-9.]*\)% .*/\1/p' err)
	echo "go: $pct% reach a root; $(fsum go.folded "^gob;runtime\\.goexit[^;]*;.*main\\.spin") samples under runtime.goexit in main.spin"
	grep "only .* reach their root" err && fail "a completeness warning for a Go program"
	in_range "$pct" 90 100 || fail "$pct% of Go stacks counted whole"
}

test_expect_success ROOT_BPF,GO 'Go: stacks ending in runtime.goexit/mstart/rt0_go count as whole, no warning' t_go

# -p with -i and no duration: the last interval is written when the
# process exits, and the run ends there.
t_p_interval() {
	local pid rc t0 t1
	bg "$WORKLOADS/burn" -n pint -d 2 >/dev/null
	pid=$!
	t0=$(date +%s%3N)
	rc=0; timeout 20 "$PROFILE" -F 199 -f -i 1 -p $pid >out 2>err || rc=$?
	t1=$(date +%s%3N)
	cat err
	echo "exit $rc after $((t1 - t0)) ms; $(grep -c "^# interval" out) intervals, func_b $(fsum out "^pint;.*;func_b [0-9]+$")"
	[ $rc -eq 0 ] || fail "exit $rc (124: still running 20 s later)"
	[ $((t1 - t0)) -le 5000 ] || fail "took $((t1 - t0)) ms after a 2 s target"
	grep -q "^profile: PID $pid has exited, the last of the -p processes: the profile ends$" err ||
		fail "no line saying the run ends"
	[ "$(grep -c "^# interval" out)" -ge 2 ] || fail "fewer than 2 intervals"
	[ "$(fsum out "^pint;.*;func_b [0-9]+$")" -ge 40 ] || fail "samples missing"
}

test_expect_success ROOT_BPF '-p with -i, no duration: ends when the process exits, intervals written' t_p_interval

test_done
