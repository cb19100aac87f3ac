#!/bin/bash
# --otlp through a collector outage: the collector stopped for several
# intervals and started again on the same port.  Within --otlp-queue's bound
# nothing is lost: the collector ends up with every sample of the -o files
# profile wrote beside it.  Beyond the bound the oldest profiles are
# dropped, and the summary says how many and how many samples: what the
# collector got plus what was dropped is what profile counted.
# Prerequisites (tests/e2e/lib.sh): ROOT_BPF, COLLECTOR.
. "$(dirname "$0")/lib.sh"

# A number in the summary or -v lines of FILE: summary FILE REGEX prints
# the regex's first group, from the last line that matches.
summary() {
	sed -n -E "s/.*$2.*/\\1/p" "$1" | tail -1
}

# outage DIR QUEUE: in DIR, burn profiled at 999 Hz with -i 1 for 12 s,
# --otlp-queue QUEUE; the collector is stopped 2 s in, for 5 s, then
# started again on its port.  DIR/out.jsonl is what it received,
# DIR/iv-*.folded profile's own intervals, DIR/err its stderr.
outage() {
	local d=$TRASH/$1 prof
	[ -s "$d/done" ] && return 0
	rm -rf "$d" && mkdir "$d" && collector_start || return 1
	bg "$WORKLOADS/burn" -d 16
	(cd "$d" && exec "$PROFILE" -v -F 999 -p $! -i 1 --otlp="$COLLECTOR_URL" \
		--otlp-queue "$2" -o "iv-%H%M%S.folded" 12 >stdout 2>err) &
	prof=$!
	echo $prof >>"$TRASH/bg.pids"
	sleep 2 &&
	collector_stop &&
	echo "collector stopped at $(date +%T.%N)" >"$d/times" &&
	sleep 5 &&
	collector_restart &&
	echo "collector started at $(date +%T.%N)" >>"$d/times" &&
	{ wait $prof || fail "profile exited with status $?"; } &&
	collector_save "$d" ||
	collector_why "$d"
}

# received DIR: shows the outage run in DIR (its times, profile's otlp
# lines) and sets want, the samples of its -o files, and got, the
# collector's; ./totals holds what the collector received.
received() {
	cat "$1/times" && grep -i otlp "$1/err" &&
	cat "$1"/iv-*.folded >files &&
	want=$(fsum files "") &&
	$OTLP_READ --totals "$1/out.jsonl" >totals && cat totals &&
	got=$(otlp_total totals samples)
}

# Within the bound: 5-6 intervals queued during the outage, 30 allowed.
test_expect_success ROOT_BPF,COLLECTOR 'otlp outage within --otlp-queue: nothing lost, no drop reported' '
	outage in 30 &&
	received in &&
	echo "samples: profile wrote $want, the collector received $got" &&
	{ [ "$want" -gt 2000 ] || fail "only $want samples in the -o files"; } &&
	{ [ "$got" -eq "$want" ] || fail "collector has $got samples of $want"; } &&
	{ grep -E -q "dropped 0 \(0 samples\)" in/err || fail "no \"dropped 0 (0 samples)\""; } &&
	r=$(summary in/err "[;,] ([0-9]+) retries") &&
	{ [ "${r:-0}" -ge 1 ] || fail "no retry counted through a 5 s outage"; }
'

test_expect_success ROOT_BPF,COLLECTOR 'otlp outage: the outage and the recovery are each one message' '
	outage in 30 &&
	grep -E "otlp: cannot send to .*retrying" in/err >down &&
	grep -E "otlp: .* reachable again" in/err >up &&
	cat down up &&
	{ [ $(wc -l <down) -eq 1 ] || fail "$(wc -l <down) messages for one outage"; } &&
	{ [ $(wc -l <up) -eq 1 ] || fail "$(wc -l <up) recovery messages"; }
'

# Beyond the bound: a queue of 2 through 5 intervals of outage drops the
# oldest; the collector'"'"'s samples plus the dropped ones are profile'"'"'s.
test_expect_success ROOT_BPF,COLLECTOR 'otlp outage beyond --otlp-queue 2: drops counted and reported, the rest received' '
	outage over 2 &&
	received over &&
	req=$(otlp_total totals requests) &&
	line=$(grep -E "dropped [0-9]+ \([0-9]+ samples\)" over/err | tail -1) &&
	echo "summary: $line" &&
	dp=$(echo "$line" | sed -E "s/.*dropped ([0-9]+) \(([0-9]+) samples\).*/\1/") &&
	ds=$(echo "$line" | sed -E "s/.*dropped ([0-9]+) \(([0-9]+) samples\).*/\2/") &&
	sp=$(echo "$line" | sed -E -n "s/.*sent ([0-9]+) profiles?.*/\1/p") &&
	nfiles=$(ls over/iv-*.folded | wc -l) &&
	echo "intervals=$nfiles sent=$sp requests=$req dropped=$dp ($ds samples); wrote $want, received $got" &&
	{ [ "$dp" -ge 2 ] || fail "$dp dropped through 5 intervals with a queue of 2"; } &&
	{ [ "$ds" -gt 0 ] || fail "dropped profiles of no samples"; } &&
	{ [ $((got + ds)) -eq "$want" ] || fail "received $got + dropped $ds != $want written"; } &&
	{ [ "$sp" = "$req" ] || fail "sent $sp, the collector has $req requests"; } &&
	{ [ $((req + dp)) -eq "$nfiles" ] || fail "$req sent + $dp dropped != $nfiles intervals"; } &&
	{ grep -E -q "^profile: wrote .*OTLP to .* \([0-9]+ of [0-9]+ profiles dropped: see above\)" over/err ||
	  fail "the summary line does not say profiles were dropped"; } &&
	{ ! grep -q "profiles dropped" in/err || fail "drops said of a run without any"; }
'

test_done
