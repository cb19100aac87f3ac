#!/bin/bash
# debuginfod between users (issue 27): with DEBUGINFOD_URLS set by root,
# nobody chooses the build-ids of its binaries and so what root's profile
# asks the servers for.  Its lookups must not go ahead of another user's
# (the queue is fair between users), its debug files must not cost root
# more than its share of bytes (a cap per user and per run, files parsed
# only when a sample needs them), and it must leave no "not found" marks
# in root's cache.  The victim is burn-stripped run as daemon: func_a and
# func_b are named only through its debug file, burn-dbg.debug.
. "$(dirname "$0")/debuginfod-lib.sh"

SECS=3			# each profile: -d SECS --debuginfod-wait=WAIT
WAIT=2
SLACK_MS=1000		# the bound: duration + wait + 1 s
BIG=16			# (a): binaries whose debug files are ...
BIG_BYTES=27262976	# ... 26 MiB of symbols each: 416 MiB in all
UNKNOWN=400		# (b): build-ids no server knows, ...
MISS_S=0.05		# ... each a 404 after 50 ms (a server that asks
			# upstream first): 5 s of lookups for 4 threads
# Peak RSS, KiB.  AddressSanitizer's shadow and quarantine: four times the
# memory; and parsing the 26 MiB of symbols nobody may have (about 0.3 s
# here) takes four times as long.
RSS_BOUND=204800
if grep -a -q "__asan_init" "$PROFILE" 2>/dev/null; then
	RSS_BOUND=$((RSS_BOUND * 4)) SLACK_MS=$((SLACK_MS * 4))
fi

unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_MAXSIZE \
	DEBUGINFOD_MAXTIME DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
export DEBUGINFOD_CACHE_PATH=$TRASH/cache.default
ID=$(readelf -n "$WORKLOADS/burn-stripped" 2>/dev/null | awk '/Build ID:/ { print $3 }')

# Where nobody and daemon can run what they run (TRASH is private).
H=$(outside_dir /var/tmp)
chmod 755 "$H"
cp "$WORKLOADS/burn-stripped" "$H/"

# victim_bg: burn-stripped as daemon for 15 s, its pid in VICTIM_PID.
victim_bg() { bg $VICTIM "$H/burn-stripped" -d 15 >/dev/null; VICTIM_PID=$!; }

# profile_run NAME URL: a whole-host profile, -vv, SECS at 999 Hz, user
# stacks: NAME.folded, NAME.err, wall time in ms in $ms; runs $BEFORE_VICTIM
# (if set), then victim_bg, once it samples.
profile_run() {
	local name=$1 url=$2 t0 prof rc=0
	t0=$(date +%s%N)
	DEBUGINFOD_URLS=$url "$PROFILE" -vv -F 999 -f -U --debuginfod-wait=$WAIT $SECS \
		>"$name.folded" 2>"$name.err" &
	prof=$!
	wait_attached $prof
	sleep 0.3
	${BEFORE_VICTIM:-}
	victim_bg
	wait $prof || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	grep -E "^profile: (debuginfod|report)" "$name.err" | cut -c1-400
	[ "$rc" = 0 ] || fail "$name: profile exited with status $rc"
}

peak_kib() { sed -n 's/^profile: report: .*peak RSS .*, \([0-9]*\) KiB$/\1/p' "$1" | tail -1; }

# named NAME: the victim's samples, and those named func_a or func_b, in
# $all and $named.
named() {
	all=$(fsum "$1.folded" "^burn-stripped;")
	named=$(fsum "$1.folded" "^burn-stripped;.*func_[ab]( |;)")
	echo "$1: the victim's samples: $named named of $all"
}

# nobody_maps_victim: once nobody's bytes are spent, nobody maps the
# victim's binary before the victim runs: its lookup is asked for nobody.
nobody_maps_victim() {
	sleep 1.5
	bg $NOBODY "$H/hostile" map 15 "$H/burn-stripped" >h.out 2>&1
	wait_for h.out "^hostile: mapped" 5
}

# Empty "debuginfo" files in the cache: libdebuginfod's "not found" marks.
misses() { find "$DEBUGINFOD_CACHE_PATH" -name debuginfo -type f -size 0 | wc -l; }

test_expect_success ROOT_BPF,LOOPBACK_ONLY,USERS "$BIG debug files of 26 MiB for nobody, which maps the victim too: bytes and RSS bounded, on time, the victim named, nobody warned about" '
	cc -O2 -g -fno-omit-frame-pointer -o "$H/hostile" "$PROFILE_TOP/tests/e2e/helpers/hostile.c" &&
	cc -O2 -s -Wl,--build-id=sha1 -o "$H/spinner" "$PROFILE_TOP/tests/e2e/helpers/spinner.c" &&
	mkdir -m 755 "$H/big" &&
	python3 "$PROFILE_TOP/tests/e2e/helpers/mkelf.py" buildids "$H/spinner" $BIG "$H/big" $BIG_BYTES &&
	cp "$WORKLOADS/burn-dbg.debug" "$H/big/$ID.debug" &&
	fake ok "$H/big" &&
	new_cache &&
	for i in $(seq 0 $((BIG - 1))); do bg $NOBODY "$H/big/bin.$i" 15; done &&
	BEFORE_VICTIM=nobody_maps_victim profile_run big "$URL" &&
	named big && peak=$(peak_kib big.err) &&
	got=$(du -sk "$DEBUGINFOD_CACHE_PATH" | cut -f1) &&
	mib=$(sed -n "s/^profile: debuginfod: .*; \([0-9.]*\) MiB of debug files;.*/\1/p" big.err) &&
	echo "wall $ms ms; peak RSS $peak KiB (bound $RSS_BOUND); $(requests) requests; ${mib:-?} MiB downloaded; $got KiB in the cache" &&
	{ [ -n "$mib" ] && in_range "$mib" 0 $((2 * 32)) || fail "${mib:-?} MiB downloaded, over twice the 32 MiB of a user"; } &&
	{ [ "$ms" -le $(((SECS + WAIT) * 1000 + SLACK_MS)) ] || fail "took $ms ms"; } &&
	{ [ -n "$peak" ] && [ "$peak" -le $RSS_BOUND ] || fail "peak RSS ${peak:-?} KiB"; } &&
	{ [ "$got" -le $((33 * 1024)) ] || fail "$got KiB of debug files kept"; } &&
	{ [ "$all" -ge 100 ] || fail "too few samples of the victim"; } &&
	{ [ $((named * 10)) -ge $((all * 9)) ] || fail "the victim is not named"; } &&
	{ grep -E -q "^profile: debuginfod bytes: user nobody \(uid [0-9]+\) .*refused" big.err ||
		fail "no warning naming nobody"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY,USERS "$UNKNOWN build-ids no server knows, asked first: the victim as named as alone, no new not-found marks in the cache" '
	cc -O2 -g -fno-omit-frame-pointer -o "$H/hostile" "$PROFILE_TOP/tests/e2e/helpers/hostile.c" &&
	cc -O2 -s -Wl,--build-id=sha1 -o "$H/spinner" "$PROFILE_TOP/tests/e2e/helpers/spinner.c" &&
	mkdir -m 755 "$H/unknown" srv &&
	python3 "$PROFILE_TOP/tests/e2e/helpers/mkelf.py" buildids "$H/spinner" $UNKNOWN "$H/unknown" &&
	cp "$WORKLOADS/burn-dbg.debug" "srv/$ID.debug" &&
	fake ok "$TRASH/srv" $MISS_S &&
	new_cache &&
	profile_run alone "$URL" &&
	named alone && base_all=$all base_named=$named &&
	kill $VICTIM_PID &&
	bg $NOBODY "$H/hostile" map 15 "$H"/unknown/bin.* >h.out 2>&1 &&
	wait_for h.out "^hostile: mapped" 5 &&
	new_cache &&
	profile_run flood "$URL" &&
	named flood && left=$(misses) &&
	echo "alone: $base_named of $base_all named; with the lookups of nobody: $named of $all; not-found marks left: $left" &&
	{ [ "$base_all" -ge 100 ] && [ $((base_named * 10)) -ge $((base_all * 9)) ] || fail "the baseline is not named"; } &&
	{ [ "$all" -ge 100 ] || fail "too few samples of the victim"; } &&
	{ [ $((named * base_all * 10)) -ge $((base_named * all * 9)) ] || fail "named $named of $all, alone $base_named of $base_all"; } &&
	{ [ "$left" -eq 0 ] || fail "$left not-found marks left in the cache"; } &&
	# The lookups still under way are warned about per user: nobody named.
	{ grep -q "^profile: debuginfod: cannot fetch .* mapped by user nobody (uid [0-9]*)" flood.err ||
		fail "no warning naming nobody"; }
'

test_done
