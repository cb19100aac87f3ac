#!/bin/bash
# --otlp when the collector cannot take the profiles: nothing listening,
# a malformed URL, TLS that fails (https to a plain HTTP port; a
# certificate no CA we trust signed, then the same collector trusted
# through OTEL_EXPORTER_OTLP_CERTIFICATE), a 4xx (a wrong path on the real
# collector: 404) and a 5xx (python's http.server refuses POST: 501).
# Each gives one clear line saying what failed and what to do, exits 0,
# still writes the -o file whole, and its summary line counts as dropped
# every interval and every sample the file holds.
# Prerequisites (tests/e2e/lib.sh): ROOT_BPF, COLLECTOR, openssl.
. "$(dirname "$0")/lib.sh"

# A port nothing listens on (it is closed again at once).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait until something listens on 127.0.0.1:PORT.
wait_port() {
	for _ in $(seq 100); do
		python3 -c "import socket, sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 0.2)" \
			"$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "nothing listens on 127.0.0.1:$1"
}

# python's http.server on 127.0.0.1:PORT, which answers POST with 501.
http_server() {
	bg python3 -m http.server --bind 127.0.0.1 "$1" >/dev/null 2>&1 &&
	wait_port "$1"
}

# otlp_try URL [ENV=VALUE...]: burn profiled 3 s at 999 Hz with -i 1, to
# --otlp=URL and -o out.folded; stdout in ./stdout, stderr in ./err, the
# exit status in ./rc.
otlp_try() {
	local url=$1
	shift
	bg "$WORKLOADS/burn" -t 1 -d 8 &&
	rc=0 &&
	env "$@" "$PROFILE" -F 999 -p $! -i 1 --otlp="$url" -o out.folded 3 >stdout 2>err || rc=$?
	echo $rc >rc
	echo "--- stderr:" && cat err
}

# The summary line's numbers: "SENT SENT_SAMPLES DROPPED DROPPED_SAMPLES".
otlp_counts() {
	sed -n "s/^profile: otlp: sent \([0-9]*\) profiles* (\([0-9]*\) samples) to .*; dropped \([0-9]*\) (\([0-9]*\) samples); [0-9]* retries$/\1 \2 \3 \4/p" err
}

# Exit 0, nothing on stdout, the -o file written with its samples, and
# every interval and sample dropped (none sent): the summary says so.
all_dropped() {
	{ [ "$(cat rc)" -eq 0 ] || fail "exit $(cat rc)"; } &&
	{ ! grep -qiE "sanitizer|segmentation|assert" err || fail "a crash"; } &&
	{ [ ! -s stdout ] || fail "$(wc -c <stdout) bytes on stdout"; } &&
	intervals=$(grep -c "^# interval" out.folded) &&
	samples=$(fsum out.folded "") &&
	echo "out.folded: $intervals intervals, $samples samples; summary: $(otlp_counts)" &&
	{ [ "$samples" -gt 100 ] || fail "only $samples samples in out.folded"; } &&
	{ [ "$intervals" -ge 3 ] || fail "$intervals intervals in out.folded"; } &&
	{ [ "$(otlp_counts)" = "0 0 $intervals $samples" ] ||
		fail "summary says '$(otlp_counts)', want '0 0 $intervals $samples'"; }
}

# exactly one line matching REGEX (the message is said once, not per retry).
one_line() {
	n=$(grep -cE "$1" err) &&
	{ [ "$n" -eq 1 ] || fail "$n lines matching '$1', want 1"; }
}

test_expect_success ROOT_BPF 'otlp: nothing listening: one line, retried, all counted as dropped' '
	port=$(free_port) &&
	otlp_try "http://127.0.0.1:$port" &&
	all_dropped &&
	one_line "^profile: otlp: cannot send to http://127.0.0.1:$port/v1development/profiles: .*connect.*is the collector running.*; retrying" &&
	grep -E "retries$" err | grep -vE " 0 retries$"
'

test_expect_success 'otlp: a malformed URL is a usage error, before anything runs' '
	rc=0 && "$PROFILE" --otlp=http//127.0.0.1:4318 -o never.folded 1 >stdout 2>err || rc=$? &&
	cat err &&
	{ [ $rc -eq 2 ] || fail "exit $rc, want 2"; } &&
	{ [ "$(wc -l <err)" -eq 1 ] || fail "$(wc -l <err) lines on stderr"; } &&
	grep -q "^profile: --otlp .http//127.0.0.1:4318. is not an http:// or https:// URL" err &&
	{ [ ! -e never.folded ] && [ ! -s stdout ] || fail "output written"; } &&
	rc=0 && OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1:4318 "$PROFILE" --otlp 1 >stdout 2>err || rc=$? &&
	cat err && [ $rc -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] &&
	grep -q "^profile: OTEL_EXPORTER_OTLP_ENDPOINT .127.0.0.1:4318. is not an http" err &&
	rc=0 && OTEL_EXPORTER_OTLP_HEADERS="Authorization=Basic%zz" "$PROFILE" --otlp 1 >stdout 2>err || rc=$? &&
	cat err && [ $rc -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] &&
	grep -q "^profile: OTEL_EXPORTER_OTLP_HEADERS: .* broken %XX escape" err
'

test_expect_success ROOT_BPF 'otlp: https to a plain HTTP port: a TLS line saying to use http://' '
	port=$(free_port) &&
	http_server "$port" &&
	otlp_try "https://127.0.0.1:$port" &&
	all_dropped &&
	one_line "^profile: otlp: cannot send to https://127.0.0.1:$port/.*: TLS: .*use http://.*; retrying"
'

test_expect_success ROOT_BPF,COLLECTOR,openssl 'otlp: an untrusted certificate: a TLS line naming OTEL_EXPORTER_OTLP_CERTIFICATE; trusted through it, all sent' '
	collector_start --tls &&
	otlp_try "$COLLECTOR_URL" &&
	all_dropped &&
	one_line "^profile: otlp: cannot send to $COLLECTOR_URL/.*: TLS: .*certificate.*set OTEL_EXPORTER_OTLP_CERTIFICATE" &&
	otlp_try "$COLLECTOR_URL" OTEL_EXPORTER_OTLP_CERTIFICATE="$COLLECTOR_CA" &&
	intervals=$(grep -c "^# interval" out.folded) &&
	samples=$(fsum out.folded "") &&
	{ [ "$(otlp_counts)" = "$intervals $samples 0 0" ] ||
		fail "summary says $(otlp_counts), want $intervals $samples 0 0"; } &&
	{ ! grep -q "cannot send" err || fail "a failure reported"; }
'

test_expect_success ROOT_BPF,COLLECTOR 'otlp: a wrong path on the collector: 404 said once, with the path to use' '
	collector_start &&
	otlp_try "$COLLECTOR_URL/v1/wrong" &&
	all_dropped &&
	one_line "^profile: otlp: $COLLECTOR_URL/v1/wrong refused a profile: HTTP 404.*; dropped it \(check the URL.s path: .*/v1development/profiles\)$" &&
	{ ! grep -q "retrying" err || fail "a 404 retried"; }
'

test_expect_success ROOT_BPF 'otlp: a server that refuses POST: 501 said once, nothing retried' '
	port=$(free_port) &&
	http_server "$port" &&
	otlp_try "http://127.0.0.1:$port" &&
	all_dropped &&
	one_line "^profile: otlp: http://127.0.0.1:$port/v1development/profiles refused a profile: HTTP 501 " &&
	grep -E " 0 retries$" err
'

# answer_server PORT MODE: a server on 127.0.0.1:PORT answering every POST
# as MODE says (retry0: 503 with Retry-After: 0; hostile: 400 whose reason
# has an escape and whose body is a Status with its message a varint;
# partial: 200 whose body has partial_success as a varint), one line in
# ./posts per request.
answer_server() {
	cat >answer.py <<-'PY'
	import http.server, sys
	mode = sys.argv[2]
	class H(http.server.BaseHTTPRequestHandler):
	    def do_POST(self):
	        self.rfile.read(int(self.headers.get("Content-Length", 0)))
	        with open("posts", "a") as f:
	            f.write("post\n")
	        if mode == "retry0":
	            self.send_response(503)
	            self.send_header("Retry-After", "0")
	            body = b""
	        elif mode == "hostile":
	            self.send_response(400, "Bad\x1b[31mRequest")
	            body = b"\x10\x05"
	        else:
	            self.send_response(200)
	            body = b"\x08\x05"
	        self.send_header("Content-Length", str(len(body)))
	        self.end_headers()
	        self.wfile.write(body)
	    def log_message(self, *a):
	        pass
	http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
	PY
	: >posts &&
	bg python3 answer.py "$1" "$2" >/dev/null 2>&1 &&
	wait_port "$1"
}

test_expect_success ROOT_BPF 'otlp: a 503 with Retry-After: 0 waits the backoff, not a busy loop' '
	port=$(free_port) &&
	answer_server "$port" retry0 &&
	otlp_try "http://127.0.0.1:$port" &&
	all_dropped &&
	n=$(wc -l <posts) && echo "$n requests" &&
	{ [ "$n" -ge 2 ] && [ "$n" -le 12 ] || fail "$n requests in a 3-s run, want a handful"; } &&
	one_line "^profile: otlp: cannot send to http://127.0.0.1:$port/v1development/profiles: HTTP 503 .*; retrying"
'

test_expect_success ROOT_BPF 'otlp: a hostile 400 (an escape in its reason, a Status of the wrong wire types): no crash, no escape printed' '
	port=$(free_port) &&
	answer_server "$port" hostile &&
	otlp_try "http://127.0.0.1:$port" &&
	all_dropped &&
	{ [ "$(wc -l <posts)" -ge 3 ] || fail "$(wc -l <posts) requests"; } &&
	one_line "^profile: otlp: http://127.0.0.1:$port/v1development/profiles refused a profile: HTTP 400 Bad.\[31mRequest; dropped it" &&
	{ ! grep -q "$(printf "\033")" err || fail "an escape on stderr"; }
'

test_expect_success ROOT_BPF 'otlp: a 200 whose partial success is of the wrong wire type: all sent, nothing said' '
	port=$(free_port) &&
	answer_server "$port" partial &&
	otlp_try "http://127.0.0.1:$port" &&
	intervals=$(grep -c "^# interval" out.folded) &&
	samples=$(fsum out.folded "") &&
	{ [ "$(otlp_counts)" = "$intervals $samples 0 0" ] ||
		fail "summary says $(otlp_counts), want $intervals $samples 0 0"; } &&
	{ ! grep -q "rejected" err || fail "a rejection reported"; }
'

test_expect_success 'otlp: grpc or http/json is refused at start; a malformed header list is not echoed' '
	for proto in grpc http/json; do
		rc=0 && OTEL_EXPORTER_OTLP_PROTOCOL=$proto "$PROFILE" --otlp 1 >stdout 2>err || rc=$?
		cat err
		{ [ $rc -eq 2 ] || fail "exit $rc, want 2"; } &&
		{ [ "$(wc -l <err)" -eq 1 ] || fail "$(wc -l <err) lines on stderr"; } &&
		grep -q "^profile: OTEL_EXPORTER_OTLP_PROTOCOL is $proto: .*http/protobuf" err || return 1
	done &&
	rc=0 && OTEL_EXPORTER_OTLP_HEADERS="x-team=a,Authorization: Bearer s3cr3t" "$PROFILE" --otlp 1 >stdout 2>err || rc=$? &&
	cat err && [ $rc -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] &&
	grep -q "^profile: OTEL_EXPORTER_OTLP_HEADERS: item 2 (key .Authorization.) is not KEY=VALUE" err &&
	{ ! grep -q "s3cr3t\|Bearer" err || fail "the secret was printed"; }
'


# hole_server PORT: accepts connections on 127.0.0.1:PORT and never answers.
hole_server() {
	cat >hole.py <<-'PY'
	import socket, sys, time
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("127.0.0.1", int(sys.argv[1])))
	s.listen(64)
	held = []
	while True:
	    held.append(s.accept()[0])
	PY
	bg python3 hole.py "$1" >/dev/null 2>&1 &&
	wait_port "$1"
}

test_expect_success ROOT_BPF 'otlp: a collector that never answers: the timeouts said once, with what to do, not once per retry' '
	port=$(free_port) &&
	hole_server "$port" &&
	bg "$WORKLOADS/burn" -t 1 -d 10 &&
	rc=0 &&
	OTEL_EXPORTER_OTLP_TIMEOUT=1000 "$PROFILE" -F 99 -p $! -i 1 \
		--otlp="http://127.0.0.1:$port" 4 >stdout 2>err || rc=$? &&
	cat err &&
	{ [ $rc -eq 0 ] || fail "exit $rc"; } &&
	one_line "^profile: otlp: cannot send to http://127.0.0.1:$port/v1development/profiles: .*[Tt]imed out.*firewall.*; retrying, " &&
	grep -E "retries$" err | grep -vE " [01] retries$" &&
	grep -E "^profile: sent OTLP to http://127.0.0.1:$port/v1development/profiles \(([0-9]+) of \1 profiles dropped: see above\)" err
'

test_expect_success ROOT_BPF 'otlp: a token in the URL query is never printed' '
	port=$(free_port) &&
	otlp_try "http://127.0.0.1:$port/v1development/profiles?key=s3cr3t" &&
	all_dropped &&
	one_line "^profile: otlp: cannot send to http://127.0.0.1:$port/v1development/profiles\?\*\*\*: .*; retrying" &&
	grep -q "^profile: otlp: sent 0 profiles .* to http://127.0.0.1:$port/v1development/profiles?\*\*\*;" err &&
	{ ! grep -q s3cr3t err || fail "the token was printed"; }
'

test_expect_success 'otlp: a user and password in the URL: refused at start, naming OTEL_EXPORTER_OTLP_HEADERS, not echoed' '
	rc=0 && "$PROFILE" --otlp=https://user:s3cr3t@127.0.0.1:4318 -o never.folded 1 >stdout 2>err || rc=$? &&
	cat err &&
	{ [ $rc -eq 2 ] || fail "exit $rc, want 2"; } &&
	{ [ "$(wc -l <err)" -eq 1 ] || fail "$(wc -l <err) lines on stderr"; } &&
	grep -q "^profile: --otlp .https://\*\*\*@127.0.0.1:4318.: a user or password in the URL is not supported; give credentials in OTEL_EXPORTER_OTLP_HEADERS" err &&
	{ ! grep -q s3cr3t err || fail "the password was printed"; }
'

test_done
