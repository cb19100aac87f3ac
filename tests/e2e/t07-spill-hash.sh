#!/bin/bash
# The spill map is keyed by a hash of the frames, and a hostile process
# chooses its frames.  Stacks with equal hashes must not be merged: the
# frames are compared, a collision is counted and that stack reported as
# missed.  The key is secret and new for each run; PROFILE_TEST_SPILL_SEED
# fixes it here so that a process can forge a collision (collide.c), as an
# attacker who knew it could.  collide.c computes the hash of the kernel's
# frame-pointer walk (--unwind=fp); a walk from tables hashes its end
# reason too.
. "$(dirname "$0")/lib.sh"

KEY0=0x0123456789abcdef KEY1=0xfedcba9876543210

# spilled VALUE FILE: a number from the -v "spilled stacks:" line.
spilled() { sed -n "s/^profile: spilled stacks:.*[ ,]$1 \\([0-9]*\\).*/\\1/p" "$2"; }

# reads FILE: "BATCHED RUNS ONE" from the -v "spilled stacks read:" line.
reads() {
	sed -n "s/^profile: spilled stacks read: \\([0-9]*\\) in batches (\\([0-9]*\\) runs of the batch reader), \\([0-9]*\\) one by one\$/\\1 \\2 \\3/p" "$1"
}

# Below run, a manystacks stack is f0..f7 calls, maybe down to leaf, the
# stored ones too; a garbled one would show other frames there.
check_manystacks() {
	local all bad
	all=$(grep "^manystacks;" "$1" | grep -c ";run;f[0-7]" || :) &&
	bad=$(grep "^manystacks;" "$1" | grep ";run;f[0-7]" |
		grep -v -c -E ";run(;f[0-7])+(;leaf)? [0-9]+\$" || :) &&
	echo "$1: manystacks stacks below run: $all, with other frames: $bad" &&
	{ [ "$bad" -gt 0 ] && grep ";run;f[0-7]" "$1" | grep -v -E ";run(;f[0-7])+(;leaf)? [0-9]+\$" | head -5; true; } &&
	{ [ "$all" -ge 300 ] || fail "too few distinct stacks"; } &&
	{ [ "$bad" -le $((all / 100)) ] || fail "spilled stacks lost their frames"; }
}

# Each collide thread's lines show its own mark, or the stack as missed.
check_own_frames() {
	local t
	for t in a b c; do
		if grep "^coll-$t;" "$1" | grep -v -q -e ";mark_$t;" -e "^coll-$t;\\[Missed User Stack\\] "; then
			grep "^coll-$t;" "$1"
			fail "coll-$t samples shown under another stack's frames" || return 1
		fi
	done
}

test_expect_success ROOT_BPF,CAPS 'equal spill hashes from a process as nobody: not merged, counted, shown as missed' '
	bg $NOBODY "$WORKLOADS/collide" $KEY0 $KEY1 8 >hashes && pid=$! &&
	sleep 0.5 &&
	cat hashes &&
	{ [ "$(sort -u -k3 hashes | wc -l)" -eq 1 ] || fail "collide did not make equal hashes"; } &&
	PROFILE_TEST_SPILL_SEED=$KEY0,$KEY1 "$PROFILE" -U -F 999 -f -v -p $pid \
		--unwind=fp --stack-storage-size 1 3 >coll.folded 2>err &&
	cat coll.folded && grep -v "^profile: \\(processes\\|files\\|kernel symbols\\|first\\)" err &&
	n=$(spilled collisions err) && stored=$(spilled stored err) &&
	echo "spilled: stored $stored, hash collisions $n" &&
	{ grep -q "PROFILE_TEST_SPILL_SEED is set" err || fail "no warning that the key is fixed"; } &&
	{ [ -n "$n" ] && [ "$n" -ge 100 ] || fail "collisions not counted"; } &&
	check_own_frames coll.folded &&
	own=$(grep -c ";mark_[abc];coll_spin [0-9]*\$" coll.folded) &&
	missed=$(fsum coll.folded "^coll-[abc];\\[Missed User Stack\\] ") &&
	echo "stacks with their own frames: $own; samples shown as missed: $missed" &&
	{ [ "$own" -eq 1 ] || fail "expected one stack with its own frames, the one stored first"; } &&
	{ [ "$missed" -eq "$n" ] || fail "$missed samples shown as missed, $n collisions counted"; } &&
	{ grep -q "^WARNING: [1-9][0-9]* stack traces could not be displayed\\.\$" err ||
		fail "no WARNING, or one suggesting --stack-storage-size"; } &&
	grep -q -x "profile: counted + filtered + dropped == taken" err
'

test_expect_success ROOT_BPF 'the spill key is new for each run and never printed; spilled stacks keep their frames' '
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 8 >/dev/null && pid=$! &&
	sleep 0.3 &&
	"$PROFILE" -U -F 999 -f -vv -p $pid --stack-storage-size 1024 2 >a.folded 2>a.vv &&
	"$PROFILE" -U -F 99 -f -vv -p $pid 1 >/dev/null 2>b.vv &&
	fa=$(sed -n "s/^profile: spill hash key: fingerprint \\([0-9a-f]*\\)\$/\\1/p" a.vv) &&
	fb=$(sed -n "s/^profile: spill hash key: fingerprint \\([0-9a-f]*\\)\$/\\1/p" b.vv) &&
	echo "fingerprints: $fa $fb" &&
	{ [ -n "$fa" ] && [ -n "$fb" ] && [ "$fa" != "$fb" ] || fail "the key did not change between runs"; } &&
	{ ! grep -q "PROFILE_TEST_SPILL_SEED" a.vv || fail "a normal run says the key is fixed"; } &&
	grep "^profile: spilled stacks:" a.vv &&
	stored=$(spilled stored a.vv) && n=$(spilled collisions a.vv) &&
	{ [ "$stored" -ge 50 ] || fail "too few stacks spilled to check"; } &&
	{ [ "$n" -eq 0 ] || fail "$n hash collisions without a forged key"; } &&
	check_manystacks a.folded
'

# counted FILE.v FILE.folded: the folded counts add up to the counted
# samples (no reader took a prefetch's mark for a count), and a prefetch ran.
counted() {
	local c f p
	c=$(sed -n "s/^profile: samples: taken [0-9]*, counted \([0-9]*\),.*/\1/p" "$1") &&
	f=$(awk '{ s += $NF } END { print s + 0 }' "$2") &&
	p=$(sed -n "s/^profile: report: [0-9]* keys (\([0-9]*\) prefetches before).*/\1/p" "$1") &&
	echo "$2: counted $c, in the folded lines $f; $p prefetches" &&
	{ [ -n "$c" ] && [ "$c" -ge 1000 ] && [ "$f" -eq "$c" ] || fail "counts do not add up"; } &&
	{ [ -n "$p" ] && [ "$p" -ge 1 ] || fail "no prefetch ran"; }
}

# report_keys FILE.v: the keys the report read, all there were (-vv).
report_keys() { sed -n "s/^profile: report: \([0-9]*\) keys .*/\1/p" "$1"; }

# new_keys FILE.v: "KEYS RUNS" from the -v "prefetches:" line.
new_keys() {
	sed -n "s/^profile: prefetches: \([0-9]*\) new keys read in bulk, in \([0-9]*\) runs\$/\1 \2/p" "$1"
}

# Naming reads each new stored stack.  The bulk reader (bpf/bulk.bpf.c)
# reads 64 a call, and prefetches read only the count map's keys that no
# prefetch read before, in one run of up to 8192 keys (64 with
# PROFILE_TEST_BULK_KEYS=64: many runs, each going on past the keys the
# last one marked).  PROFILE_TEST_READ_ONE turns it off, as on a kernel
# without syscall programs: each stack is read with a call of its own,
# and each prefetch reads every key.
test_expect_success ROOT_BPF 'stored stacks read in batches, prefetches read new keys alone; without the bulk reader, one by one and every key' '
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 20 >/dev/null && pid=$! &&
	sleep 0.3 &&
	"$PROFILE" -U -F 999 -f -vv -p $pid 3 >batch.folded 2>batch.v &&
	PROFILE_TEST_BULK_KEYS=64 "$PROFILE" -U -F 999 -f -vv -p $pid 3 >small.folded 2>small.v &&
	PROFILE_TEST_READ_ONE=1 "$PROFILE" -U -F 999 -f -vv -p $pid 3 >one.folded 2>one.v &&
	grep "^profile: \(spilled stacks\|prefetches\|report\)" batch.v small.v one.v &&
	counted batch.v batch.folded && counted small.v small.folded && counted one.v one.folded &&
	set -- $(new_keys batch.v) && all=$(report_keys batch.v) &&
	{ [ $# -eq 2 ] && [ "$1" -ge 500 ] && [ "$1" -le "$all" ] ||
		fail "$1 keys read as new by prefetches, of $all"; } &&
	{ [ "$2" -le $(($(sed -n "s/^profile: report: [0-9]* keys (\([0-9]*\) prefetches.*/\1/p" batch.v) + 1)) ] ||
		fail "$2 runs: more than one a prefetch"; } &&
	set -- $(new_keys small.v) && all=$(report_keys small.v) &&
	{ [ $# -eq 2 ] && [ "$1" -ge 500 ] && [ "$1" -le "$all" ] && [ "$2" -ge $(($1 / 64)) ] ||
		fail "$1 keys read as new in $2 runs of 64 keys at most, of $all"; } &&
	check_manystacks small.folded &&
	{ grep -q "^profile: prefetches: 0 new keys read in bulk, in 0 runs" one.v ||
		fail "new keys read with PROFILE_TEST_READ_ONE"; } &&
	stored=$(spilled stored batch.v) &&
	set -- $(reads batch.v) &&
	{ [ $# -eq 3 ] || fail "no spilled stacks read line"; } &&
	{ [ "$stored" -ge 300 ] && [ "$1" -ge "$stored" ] ||
		fail "$1 stacks read in batches, $stored stored"; } &&
	{ [ "$3" -eq 0 ] || fail "$3 stacks read one by one beside the bulk reader"; } &&
	{ [ "$2" -le $(($1 / 16)) ] || fail "$2 runs for $1 stacks: batches of a few"; } &&
	check_manystacks batch.folded &&
	stored=$(spilled stored one.v) &&
	set -- $(reads one.v) &&
	{ [ "$1" -eq 0 ] && [ "$2" -eq 0 ] || fail "the bulk reader ran with PROFILE_TEST_READ_ONE"; } &&
	{ [ "$3" -ge "$stored" ] || fail "$3 stacks read one by one, $stored stored"; } &&
	check_manystacks one.folded
'

test_done
