#!/bin/bash
# An authenticated collector (bearer token): without the header the run is
# told why every profile is refused, keeps its -o file, and counts the drops;
# with OTEL_EXPORTER_OTLP_HEADERS (percent-encoded, as the OpenTelemetry
# SDKs take it) every sample arrives.
. "$(dirname "$0")/lib.sh"

TOKEN=s3cret-profile-token

test_expect_success ROOT_BPF,COLLECTOR 'otlp: no token: 401 said once, -o written, every profile dropped and counted' '
	collector_start --auth $TOKEN &&
	bg "$WORKLOADS/burn" -d 30 &&
	"$PROFILE" -F 499 -i 1 --otlp=$COLLECTOR_URL -o noauth.folded 3 >out 2>err &&
	cat err &&
	[ ! -s out ] &&
	[ "$(grep -c "refused a profile: HTTP 401" err)" = 1 ] &&
	! grep -q "$TOKEN" err &&
	want=$(fsum noauth.folded "") && [ "$want" -gt 0 ] &&
	grep -E "otlp: sent 0 profiles \(0 samples\) to .*; dropped [0-9]+ \($want samples\)" err &&
	! grep -q "\"samples\|sampleType" "$COLLECTOR_OUT" 2>/dev/null
'

test_expect_success ROOT_BPF,COLLECTOR 'otlp: OTEL_EXPORTER_OTLP_HEADERS with the token: every sample arrives, the token never printed' '
	collector_start --auth $TOKEN &&
	bg "$WORKLOADS/burn" -d 30 &&
	OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20$TOKEN" \
		"$PROFILE" -F 499 -i 1 -v --otlp=$COLLECTOR_URL -o auth.folded 3 >out 2>err &&
	! grep -q "$TOKEN" err &&
	want=$(fsum auth.folded "") && [ "$want" -gt 0 ] &&
	grep -E "otlp: sent [0-9]+ profiles \($want samples\) to .*; dropped 0 \(0 samples\)" err &&
	for _ in $(seq 50); do
		got=$($OTLP_READ --totals "$COLLECTOR_OUT" 2>/dev/null | awk "\$1 == \"samples\" { print \$2 }")
		[ "$got" = "$want" ] && break
		sleep 0.1
	done &&
	echo "wrote $want, the collector has $got" &&
	[ "$got" = "$want" ] &&
	$OTLP_READ "$COLLECTOR_OUT" | grep -q "func_b"
'

test_done
