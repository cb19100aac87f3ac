#!/bin/bash
# --otlp: profiles sent to a real OpenTelemetry Collector (the one
# scripts/build-collector builds; its file exporter writes what it
# received, read back by tests/collector/otlp_read.py).  burn's known
# answer arrives named, with func_b/func_a 3.0 within 10%, and the collector
# holds exactly the samples profile counted itself in the -o files it wrote
# beside: every interval's, nothing more.  The resource says which host,
# service and process; the mapping carries burn's build-id.
# Prerequisites (tests/e2e/lib.sh): ROOT_BPF, COLLECTOR, openssl, readelf.
. "$(dirname "$0")/lib.sh"

# otlp_run: $TRASH/otlp/, burn -t 2 profiled 6 s at 4999 Hz with -i 1, sent
# to the collector and written to a folded file per interval beside it:
# out.jsonl (what the collector received), iv-*.folded, burn.pid, err,
# stdout.  At 4999 Hz a loaded host still leaves 15,000+ samples, where
# 10% of the ratio is several times sampling's spread (see t01).
otlp_run() {
	[ -s "$TRASH/otlp/done" ] && return 0
	rm -rf "$TRASH/otlp" && mkdir "$TRASH/otlp" &&
	collector_start &&
	bg "$WORKLOADS/burn" -t 2 -d 10 &&
	echo $! >"$TRASH/otlp/burn.pid" &&
	(cd "$TRASH/otlp" &&
	 OTEL_SERVICE_NAME=t93-svc OTEL_RESOURCE_ATTRIBUTES=deployment.environment=t93,team=profile \
	 "$PROFILE" -F 4999 -p "$(cat burn.pid)" -i 1 --otlp="$COLLECTOR_URL" --unknown module \
		-o "iv-%H%M%S.folded" 6 >stdout 2>err) &&
	collector_save "$TRASH/otlp" ||
	collector_why "$TRASH/otlp"
}

test_expect_success ROOT_BPF,COLLECTOR 'otlp: burn arrives named, func_b/func_a 3.0 within 10%' '
	otlp_run &&
	$OTLP_READ otlp/out.jsonl >got &&
	head -5 got &&
	a=$(fsum got ";func_a( |;|$)") && b=$(fsum got ";func_b( |;|$)") &&
	echo "func_a=$a func_b=$b" &&
	{ [ $((a + b)) -ge 5000 ] || fail "only $((a + b)) samples of func_a and func_b"; } &&
	r=$(ratio $b $a) && echo "ratio=$r" &&
	in_range $r 2.7 3.3 &&
	{ grep -q "main;.*func_b [0-9]*$" got || fail "no stack through main to func_b"; }
'

test_expect_success ROOT_BPF,COLLECTOR 'otlp: the collector received exactly the samples of the -o files, one request an interval' '
	otlp_run &&
	cat otlp/iv-*.folded >files &&
	nfiles=$(ls otlp/iv-*.folded | wc -l) &&
	$OTLP_READ --totals otlp/out.jsonl >totals && cat totals &&
	req=$(otlp_total totals requests) &&
	got=$(otlp_total totals samples) &&
	want=$(fsum files "") &&
	echo "files=$nfiles samples in files=$want, requests=$req samples received=$got" &&
	{ [ "$want" -gt 0 ] || fail "no samples in the -o files"; } &&
	{ [ "$got" -eq "$want" ] || fail "collector has $got samples, profile wrote $want"; } &&
	{ [ "$req" -eq "$nfiles" ] || fail "$req requests for $nfiles intervals"; } &&
	{ [ "$nfiles" -ge 5 ] || fail "$nfiles intervals in 6 s at -i 1"; }
'

# Stack for stack: the collector'"'"'s stacks, each under its thread'"'"'s
# name, are the folded lines profile wrote (--unknown module names unnamed
# frames by their file in both).
test_expect_success ROOT_BPF,COLLECTOR 'otlp: the same stacks and counts as the folded files, under thread.name' '
	otlp_run &&
	$OTLP_READ --root thread.name otlp/out.jsonl | sort >got &&
	cat otlp/iv-*.folded | awk "{ n = \$NF; sub(/ [0-9]+$/, \"\"); c[\$0] += n }
		END { for (s in c) print s, c[s] }" | sort >want &&
	{ diff want got >d || { head -20 d; fail "stacks differ ($(grep -c "^[<>]" d) lines)"; }; }
'

test_expect_success ROOT_BPF,COLLECTOR 'otlp: the sender'"'"'s summary counts what the collector received, and no drop' '
	otlp_run &&
	cat otlp/err &&
	$OTLP_READ --totals otlp/out.jsonl >totals &&
	req=$(otlp_total totals requests) &&
	got=$(otlp_total totals samples) &&
	grep -E "sent $req profiles? \($got samples\)" otlp/err &&
	grep -E "dropped 0 \(0 samples\)" otlp/err
'

test_expect_success ROOT_BPF,COLLECTOR 'otlp: resource attributes: host, service, OTEL_RESOURCE_ATTRIBUTES, process' '
	otlp_run &&
	pid=$(cat otlp/burn.pid) &&
	$OTLP_READ --resources --resource process.pid=$pid otlp/out.jsonl | sort -u >res &&
	cat res &&
	{ [ $(wc -l <res) -eq 1 ] || fail "burn'"'"'s resource differs between requests, or is missing"; } &&
	tr "\t" "\n" <res >attrs &&
	grep -x "host.name=$(uname -n)" attrs &&
	grep -x "service.name=t93-svc" attrs &&
	grep -x "deployment.environment=t93" attrs &&
	grep -x "team=profile" attrs &&
	grep -x "process.executable.name=burn" attrs &&
	grep -x "process.executable.path=$(readlink -f "$WORKLOADS/burn")" attrs
'

test_expect_success ROOT_BPF,COLLECTOR,readelf 'otlp: burn'"'"'s mapping carries its build-id; samples their thread' '
	otlp_run &&
	id=$(readelf -n "$WORKLOADS/burn" | sed -n "s/.*Build ID: *\([0-9a-f]*\).*/\1/p") &&
	echo "build-id $id" && [ -n "$id" ] &&
	$OTLP_READ --mappings otlp/out.jsonl >maps && cat maps &&
	grep -x "$(readlink -f "$WORKLOADS/burn") $id" maps &&
	$OTLP_READ --root thread.name otlp/out.jsonl >byname &&
	{ [ "$(fsum byname "^burn;")" -eq "$(fsum byname "")" ] || fail "samples without thread.name burn"; }
'

# Nothing on stdout with --otlp alone; the endpoint from the environment.
test_expect_success ROOT_BPF,COLLECTOR '--otlp alone: stdout empty, OTEL_EXPORTER_OTLP_ENDPOINT used' '
	collector_start &&
	bg "$WORKLOADS/burn" -d 5 &&
	OTEL_EXPORTER_OTLP_ENDPOINT=$COLLECTOR_URL "$PROFILE" -F 999 -p $! -i 1 --otlp 2 >out 2>err ||
		{ cat err; false; } &&
	collector_stop &&
	{ [ ! -s out ] || { head -3 out; fail "--otlp wrote to stdout"; }; } &&
	$OTLP_READ --totals "$COLLECTOR_OUT" >totals && cat totals &&
	{ [ "$(otlp_total totals samples)" -gt 500 ] || fail "too few samples received"; } &&
	$OTLP_READ "$COLLECTOR_OUT" | grep -q ";func_b [0-9]*$"
'

# TLS: a collector with a certificate of a CA of the test's own, trusted
# through OTEL_EXPORTER_OTLP_CERTIFICATE.
test_expect_success ROOT_BPF,COLLECTOR,openssl 'otlp over TLS: https to a collector whose CA is given' '
	collector_start --tls &&
	case $COLLECTOR_URL in https://*) ;; *) fail "not https: $COLLECTOR_URL" ;; esac &&
	bg "$WORKLOADS/burn" -d 5 &&
	OTEL_EXPORTER_OTLP_CERTIFICATE=$COLLECTOR_CA \
		"$PROFILE" -F 999 -p $! -i 1 --otlp="$COLLECTOR_URL" -o tls.folded 2 2>err ||
		{ cat err; false; } &&
	collector_stop &&
	$OTLP_READ --totals "$COLLECTOR_OUT" >totals && cat totals &&
	got=$(otlp_total totals samples) &&
	{ [ "$got" -gt 500 ] || fail "only $got samples over TLS"; } &&
	$OTLP_READ "$COLLECTOR_OUT" | grep -q ";func_b [0-9]*$"
'

# The source line each frame of FUNC was at, as the collector holds it:
# "FILE:LINE" per location (0 when it has none), from its JSON lines.
otlp_lines() {
	python3 - "$1" "$2" <<-'PY'
	import json, sys
	seen = set()
	for text in open(sys.argv[1]):
	    d = json.loads(text)["dictionary"]
	    strs, funcs = d["stringTable"], d["functionTable"]
	    for loc in d["locationTable"]:
	        for ln in loc.get("lines", []):
	            f = funcs[ln.get("functionIndex", 0)]
	            if strs[f.get("nameStrindex", 0)] == sys.argv[2]:
	                seen.add("%s:%s" % (strs[f.get("filenameStrindex", 0)], ln.get("line", 0)))
	print("\n".join(sorted(seen)))
	PY
}

test_expect_success ROOT_BPF,COLLECTOR 'otlp --lines: native frames carry their source file and line' '
	collector_start &&
	bg "$WORKLOADS/burn" -d 10 && burn=$! &&
	"$PROFILE" -F 999 -p $burn -i 1 --lines --otlp="$COLLECTOR_URL" 2 >out 2>err &&
	for _ in $(seq 50); do
		[ -s "$COLLECTOR_OUT" ] && [ "$(wc -l <"$COLLECTOR_OUT")" -ge 2 ] && break
		sleep 0.1
	done &&
	otlp_lines "$COLLECTOR_OUT" func_b >lines && cat lines &&
	grep -E "burn\.c:[1-9][0-9]*$" lines &&
	otlp_lines "$COLLECTOR_OUT" main | grep -E "burn\.c:[1-9][0-9]*$"
'

test_done
