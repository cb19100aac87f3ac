#!/bin/bash
# No lost samples: with ~19k distinct stacks on a whole-host profile, the -v
# counters add up and nearly every sample keeps a real stack.  With a tiny
# stack store the identity still holds and the losses are shown.  And the
# bcc-style --cgroupmap filter, with a map pinned by bpftool.
. "$(dirname "$0")/lib.sh"

reap() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	true
}

# A -v counter: counter NAME FILE (taken, counted, filtered, dropped).
counter() { sed -n "s/^profile: samples:.*[ ,]$1 \\([0-9]*\\).*/\\1/p" "$2"; }

# check_identity FILE: counted + filtered + dropped == taken, both as printed
# by the profiler and as recomputed here.
check_identity() {
	local t c f d
	t=$(counter taken "$1") c=$(counter counted "$1")
	f=$(counter filtered "$1") d=$(counter dropped "$1")
	echo "taken $t, counted $c, filtered $f, dropped $d"
	[ -n "$t" ] && [ -n "$c" ] && [ -n "$f" ] && [ -n "$d" ] ||
		fail "no counters line on stderr" || return 1
	[ $((c + f + d)) -eq "$t" ] || fail "counted + filtered + dropped != taken" || return 1
	grep -q -x "profile: counted + filtered + dropped == taken" "$1" ||
		fail "the profiler does not say == taken" || return 1
}

# Show a test's numbers as TAP comments, pass or fail.
show_numbers() {
	[ -f "$TRASH/numbers" ] && sed "s/^/# /" "$TRASH/numbers" && rm -f "$TRASH/numbers"
	true
}

CG2=$(findmnt -n -o TARGET -t cgroup2 2>/dev/null | head -1)
CGDIR=${CG2:+$CG2/profile-t06-$$}
BPFFS=$TRASH/bpffs		# a private bpffs, mounted when /sys/fs/bpf is not one
PIN=
teardown() {
	[ -n "$PIN" ] && rm -f "$PIN"
	mountpoint -q "$BPFFS" 2>/dev/null && umount "$BPFFS"
	if [ -n "$CGDIR" ] && [ -d "$CGDIR" ]; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$CGDIR" 2>/dev/null && break
			sleep 0.2
		done
	fi
	return 0
}
trap 'teardown; cleanup' EXIT

test_expect_success ROOT_BPF 'no loss: 19k stacks at 999 Hz, >= 99.5% of samples keep real stacks' '
	trap reap EXIT &&
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 12 >/dev/null &&
	sleep 0.5 &&
	"$PROFILE" -F 999 -f -vv 10 >ms.folded 2>err.vv &&
	grep -v "^libbpf" err.vv >err &&
	cat err &&
	check_identity err &&
	prefetches=$(sed -n "s/^profile: report: [0-9]* keys (\([0-9]*\) prefetches before).*/\1/p" err) &&
	echo "prefetches while sampling: $prefetches" &&
	{ [ -n "$prefetches" ] && [ "$prefetches" -ge 1 ] && [ "$prefetches" -le 8 ] ||
		fail "expected 1-8 prefetches while 19k keys grow (each reads the whole map), saw ${prefetches:-none}"; } &&
	t=$(counter taken err) && f=$(counter filtered err) &&
	real=$(awk "!/\\[Missed/ { n += \$NF } END { print n + 0 }" ms.folded) &&
	missed=$(awk "/\\[Missed/ { n += \$NF } END { print n + 0 }" ms.folded) &&
	stacks=$(grep -c "^manystacks;" ms.folded) && mss=$(fsum ms.folded "^manystacks;") &&
	stored=$(sed -n "s/^profile: spilled stacks: stored \([0-9]*\),.*/\1/p" err) &&
	pct=$(awk -v r=$real -v w=$((t - f)) "BEGIN { printf \"%.3f\", w ? 100 * r / w : 0 }") &&
	echo "manystacks: $mss samples, $stacks distinct stacks, $stored stacks stored by content" &&
	echo "samples with real stacks: $real of $((t - f)) wanted ($pct%), with [Missed: $missed" &&
	{ grep "^profile: samples:" err; echo "manystacks: $mss samples, $stacks distinct stacks, $stored stored by content; real stacks: $real of $((t - f)) ($pct%)"; } >numbers &&
	{ [ "$stacks" -ge 5000 ] && [ "${stored:-0}" -ge 5000 ] ||
		fail "too few distinct stacks stored: the test did not stress the maps"; } &&
	{ [ $((t - f)) -ge 15000 ] || fail "too few samples taken"; } &&
	{ [ $((real * 1000)) -ge $(((t - f) * 995)) ] || fail "only $pct% of samples have real stacks"; } &&
	{ ! grep -q "^WARNING" err || fail "a WARNING was printed"; }
'
show_numbers

test_expect_success ROOT_BPF 'a stable count map is not read again while sampling' '
	trap reap EXIT &&
	bg "$WORKLOADS/burn" -t 1 -d 6 >/dev/null &&
	"$PROFILE" -F 999 -f -vv -p "$(tail -1 "$TRASH/bg.pids")" 4 >burn.folded 2>err.vv &&
	grep "^profile: report:" err.vv &&
	grep -q "^profile: report: [0-9]* keys (0 prefetches before)" err.vv ||
		fail "a few dozen keys should never be prefetched"
'

test_expect_success ROOT_BPF '--stack-storage-size 4: identity holds, WARNING, [Missed ...] stacks' '
	trap reap EXIT &&
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 5 >/dev/null &&
	sleep 0.3 &&
	"$PROFILE" -F 999 -f -v --stack-storage-size 4 3 >small.folded 2>err &&
	cat err &&
	check_identity err &&
	missed=$(fsum small.folded "\\[Missed (User|Kernel) Stack\\]") &&
	mu=$(fsum small.folded "^manystacks;\\[Missed User Stack\\]") &&
	echo "samples shown as [Missed ...]: $missed (manystacks user stacks: $mu)" &&
	{ grep "^profile: samples:" err; echo "--stack-storage-size 4: $missed samples shown as [Missed ...]"; } >numbers &&
	{ grep -E -q "^WARNING: [1-9][0-9]* stack traces could not be displayed\\. Consider increasing --stack-storage-size\\.\$" err ||
		fail "no WARNING line"; } &&
	{ [ "$mu" -ge 1000 ] || fail "manystacks stacks were not shown as [Missed User Stack]"; } &&
	c=$(counter counted err) && all=$(fsum small.folded "") &&
	{ [ "$all" -eq "$c" ] || fail "folded output sums to $all, counted says $c"; }
'
show_numbers

test_expect_success ROOT_BPF '--cgroupmap: only the cgroup whose id is in the pinned map' '
	trap reap EXIT &&
	{ [ -n "$CG2" ] || fail "no cgroup2 mount"; } &&
	if [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ]; then
		PIN=/sys/fs/bpf/profile-t06-$$
	else
		mkdir -p "$BPFFS" && mount -t bpf bpf "$BPFFS" && PIN=$BPFFS/cgmap
	fi &&
	echo "$PIN" >"$TRASH/pin" &&
	bpftool map create "$PIN" type hash key 8 value 8 entries 16 name cgmap &&
	mkdir "$CGDIR" &&
	id=$(stat -c %i "$CGDIR") &&
	key=$(printf "%016x" $id | sed "s/../& /g" | awk "{ for (i = 8; i >= 1; i--) printf \"%s \", \$i }") &&
	echo "cgroup $CGDIR id $id, key $key" &&
	bpftool map update pinned "$PIN" key hex $key value hex 01 00 00 00 00 00 00 00 &&
	bpftool map dump pinned "$PIN" &&
	bg "$WORKLOADS/burn" -n cgmapin -d 5 >/dev/null && in=$! &&
	echo $in >"$CGDIR/cgroup.procs" &&
	bg "$WORKLOADS/burn" -n cgmapout -d 5 >/dev/null &&
	sleep 0.3 &&
	"$PROFILE" -F 199 -f -v --cgroupmap "$PIN" 2 >cgm.folded 2>err &&
	cat err &&
	check_identity err &&
	n=$(fsum cgm.folded "^cgmapin;") && t=$(fsum cgm.folded "") &&
	echo "cgmapin=$n total=$t, comms: $(cut -d";" -f1 cgm.folded | sed "s/ [0-9]*\$//" | sort -u | tr "\n" " ")" &&
	{ [ "$n" -ge 100 ] || fail "too few samples from the cgroup in the map"; } &&
	{ [ "$n" -eq "$t" ] || fail "samples from outside the cgroup"; } &&
	{ grep -q "^cgmapin;.*;func_b [0-9]*\$" cgm.folded || fail "no cgmapin;...;func_b"; } &&
	{ [ "$(counter filtered err)" -ge 100 ] || fail "cgmapout was not counted as filtered"; } &&
	reap && rm -f "$PIN" && ! [ -e "$PIN" ]
'

# "stacks cut at --perf-max-stack-depth N: in M samples"
cut_samples() { sed -n "s/^profile: stacks cut at --perf-max-stack-depth [0-9]*: in \\([0-9]*\\) samples\$/\\1/p" "$1"; }

test_expect_success ROOT_BPF '--perf-max-stack-depth 3: every burn stack is cut there, and -v counts its samples' '
	bg "$WORKLOADS/burn" -d 5 >/dev/null && pid=$! &&
	sleep 0.3 &&
	"$PROFILE" -F 199 -f -v -U -p $pid --perf-max-stack-depth 3 2 >cut.folded 2>err &&
	"$PROFILE" -F 199 -f -v -U -p $pid 1 >whole.folded 2>err2 &&
	cat err err2 &&
	n=$(cut_samples err) && all=$(fsum cut.folded "") &&
	# comm and 3 frames: the stacks at the depth limit, which are the cut ones.
	at3=$(awk "split(\$1, f, \";\") == 4 { n += \$NF } END { print n + 0 }" cut.folded) &&
	echo "cut: $n of $all samples; $at3 with 3 frames" &&
	{ [ "$all" -ge 100 ] || fail "too few samples"; } &&
	{ [ "$n" -eq "$at3" ] || fail "$n samples counted as cut, $at3 printed with 3 frames"; } &&
	{ [ $((at3 * 100)) -ge $((all * 99)) ] || fail "burn stacks shorter than 3 frames: $((all - at3)) of $all"; } &&
	{ [ "$(cut_samples err2)" -eq 0 ] || fail "stacks cut at the default depth"; }
'

# The pin was made in the test body's subshell; remove it here too on failure.
[ -f "$TRASH/pin" ] && PIN=$(cat "$TRASH/pin")

test_done
