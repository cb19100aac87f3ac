#!/bin/bash
# OTLP export reads what other users control: a process's executable path
# (/proc/PID/exe) and its threads' names.  nobody runs burn from a file
# whose name is not UTF-8 and names its thread likewise; a victim (daemon)
# runs burn beside it, and a whole-host profile sends to the collector.
# Protobuf strings must be UTF-8: a decoder that checks refuses the whole
# request over one bad string, with the victim's samples in it, and this
# collector passes the bytes on into its JSON, which its readers then
# refuse (without the sanitizer, tests/collector/otlp_read.py fails on
# the file).  So every request of the run arrives (the collector holds
# the samples of the -o files), the victim's resource and thread name are
# its own, and nobody's names arrive with each bad byte as "?".
# Prerequisites (tests/e2e/lib.sh): USERS, ROOT_BPF, COLLECTOR.
. "$(dirname "$0")/lib.sh"

# A directory daemon and nobody can reach (TRASH is private).
H=$(outside_dir /var/tmp)
chmod 755 "$H"
BAD=$(printf 'b\377\376x')
cp "$WORKLOADS/burn" "$H/burn"
cp "$WORKLOADS/burn" "$H/$BAD"
chmod 755 "$H/burn" "$H/$BAD"

test_expect_success USERS,ROOT_BPF,COLLECTOR 'otlp: names that are not UTF-8 from nobody: every request arrives, the victim keeps its own, nobody gets ?' '
	mkdir c && collector_start &&
	bg $NOBODY "$H/$BAD" -d 8 -n "$BAD" && nob=$! &&
	bg $VICTIM "$H/burn" -d 8 -n t112victim && vic=$! &&
	sleep 0.5 &&
	(cd c && "$PROFILE" -F 499 -i 1 --otlp="$COLLECTOR_URL" -o "iv-%H%M%S.folded" 4 \
		>stdout 2>err) || { cat c/err; false; } &&
	collector_save c &&
	cat c/iv-*.folded >files &&
	nfiles=$(ls c/iv-*.folded | wc -l) &&
	$OTLP_READ --totals c/out.jsonl >totals && cat totals &&
	req=$(otlp_total totals requests) && got=$(otlp_total totals samples) &&
	want=$(fsum files "") &&
	echo "intervals=$nfiles requests=$req samples: files $want, collector $got" &&
	{ [ "$req" -eq "$nfiles" ] || fail "$req requests arrived for $nfiles intervals"; } &&
	{ [ "$got" -eq "$want" ] || fail "the collector has $got samples, profile wrote $want"; } &&
	$OTLP_READ --resources --resource process.pid=$vic c/out.jsonl | sort -u >vres &&
	$OTLP_READ --resources --resource process.pid=$nob c/out.jsonl | sort -u >nres &&
	cat vres nres | tr "\t" "\n" | grep "^process.executable" &&
	{ grep -q "process.executable.name=burn	" vres || fail "the victim is not named burn"; } &&
	{ grep -q "process.executable.name=b??x	" nres || fail "nobody s name is not b??x"; } &&
	$OTLP_READ --root thread.name --resource process.pid=$vic c/out.jsonl >vstacks &&
	$OTLP_READ --root thread.name --resource process.pid=$nob c/out.jsonl >nstacks &&
	v=$(fsum vstacks "^t112victim;.*func_[ab]") && n=$(fsum nstacks "^b[?][?]x;.*func_[ab]") &&
	echo "victim: $v samples under t112victim in func_a|b; nobody: $n under b??x" &&
	{ [ "$v" -ge 500 ] || fail "the victim has $v samples under its own thread name"; } &&
	{ [ "$n" -ge 500 ] || fail "nobody has $n samples under b??x"; } &&
	{ [ "$(fsum nstacks "^b[?][?]x;")" -eq "$(fsum nstacks "")" ] || fail "a thread name of nobody not as b??x"; }
'

test_done
