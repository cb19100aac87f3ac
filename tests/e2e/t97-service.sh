#!/bin/bash
# The agent as a service: debian/profile.service passes systemd-analyze
# verify and says what the man page says; the Debian package ships it and
# /etc/default/profile (a conffile) and does not enable or start it; and
# under journald (JOURNAL_STREAM naming stderr) profile's lines carry
# sd-daemon's priorities instead of "profile: ".
. "$(dirname "$0")/lib.sh"

UNIT=$PROFILE_TOP/debian/profile.service
DEFAULTS=$PROFILE_TOP/debian/profile.default
MAN=$PROFILE_TOP/man/profile.8

# The value of KEY in the unit (the last assignment wins, as in systemd).
unit_get() { sed -n "s/^$1=//p" "$UNIT" | tail -1; }

# A root for systemd-analyze: this system's units, the unit, the binary
# under test as /usr/sbin/profile and the page (verify runs man on it).
verify_root() {
	mkdir -p root/lib/systemd/system root/usr/sbin root/usr/share/man/man8 &&
	cp -a /lib/systemd/system/. root/lib/systemd/system/ &&
	cp "$UNIT" root/lib/systemd/system/profile.service &&
	cp "$PROFILE" root/usr/sbin/profile &&
	gzip -c "$MAN" >root/usr/share/man/man8/profile.8.gz
}

test_expect_success systemd-analyze 'systemd-analyze verify: the unit is clean (not one warning)' '
	verify_root &&
	MANPATH=$TRASH/root/usr/share/man systemd-analyze verify --root="$TRASH/root" \
		profile.service >out 2>&1 || { cat out; fail "systemd-analyze verify failed"; } &&
	{ test ! -s out || { cat out; fail "systemd-analyze verify warned"; }; }
'

# The check above would pass a unit with a typo'd key (a warning, exit 0)
# if it only looked at the exit status.
test_expect_success systemd-analyze 'systemd-analyze verify: a misspelt key is caught' '
	verify_root &&
	sed -i "s/^KillSignal=/KilSignal=/" root/lib/systemd/system/profile.service &&
	MANPATH=$TRASH/root/usr/share/man systemd-analyze verify --root="$TRASH/root" \
		profile.service >out 2>&1 || : &&
	grep -q "KilSignal" out
'

test_expect_success 'the unit: the command, its settings file and stop signal the man page gives' '
	test "$(unit_get Type)" = simple &&
	test "$(unit_get ExecStart)" = "/usr/sbin/profile --otlp \$PROFILE_OPTS" &&
	test "$(unit_get EnvironmentFile)" = "-/etc/default/profile" &&
	test "$(unit_get KillSignal)" = SIGINT &&
	test "$(unit_get Restart)" = on-failure &&
	{ test "$(unit_get RestartPreventExitStatus)" = 2 ||
		fail "a configuration error (exit 2) would restart for ever"; } &&
	t=$(unit_get TimeoutStopSec) &&
	{ test "$t" -gt 10 || fail "TimeoutStopSec=$t is not above the 10 s flush"; } &&
	sed -n "/^\.SH CONTINUOUS PROFILING/,/^\.SH /p" "$MAN" | sed "s/\\\\-/-/g" >section &&
	grep -q "/usr/sbin/profile --otlp \\\$PROFILE_OPTS" section &&
	grep -q "/etc/default/profile" section &&
	grep -q "SIGINT" section &&
	grep -q "TimeoutStopSec=$t" section &&
	grep -q "neither enabled nor started" section
'

# Each of these would hide what a whole-host profiler reads: other
# processes in /proc, /proc/kallsyms, JIT perf maps in /tmp.
test_expect_success 'the unit: no hardening that blinds the profiler' '
	for k in ProtectProc ProcSubset PrivateTmp ProtectKernelTunables ProtectKernelLogs \
		 PrivatePIDs PrivateUsers DynamicUser User; do
		! grep -q "^$k=" "$UNIT" || fail "$k= in the unit"
	done &&
	caps=$(unit_get CapabilityBoundingSet) &&
	for c in CAP_BPF CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_SYSLOG CAP_DAC_READ_SEARCH; do
		case " $caps " in *" $c "*) ;; *) fail "$c not in CapabilityBoundingSet" ;; esac
	done
'

test_expect_success '/etc/default/profile: every variable the man page names, all commented out' '
	for v in PROFILE_OPTS OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_HEADERS \
		 OTEL_SERVICE_NAME OTEL_RESOURCE_ATTRIBUTES OTEL_EXPORTER_OTLP_CERTIFICATE; do
		grep -q "^#$v=" "$DEFAULTS" || fail "no #$v= line"
		sed -n "/^\.SH CONTINUOUS PROFILING/,/^\.SH /p" "$MAN" | grep -q "$v" ||
			fail "$v not in the man page"
	done &&
	{ ! grep -v "^#" "$DEFAULTS" | grep -q . || fail "an active line: $(grep -v "^#" "$DEFAULTS" | grep .)"; }
'

# The package, built once from the last commit (as t50 does).
deb_build() {
	[ -f "$TRASH/deb.ok" ] && return 0
	TMPDIR=$TRASH "$PROFILE_TOP/scripts/build-deb" "$TRASH/deb" >"$TRASH/build.out" 2>&1 ||
		{ cat "$TRASH/build.out"; fail "scripts/build-deb failed"; } &&
	touch "$TRASH/deb.ok"
}

test_expect_success DPKG_BUILDPACKAGE,LINTIAN 'the package: the unit and /etc/default/profile (a conffile) as committed; lintian clean' '
	deb_build &&
	deb=$(ls "$TRASH"/deb/profile_*_amd64.deb) &&
	mkdir x && dpkg-deb -x "$deb" x &&
	unit=$(ls x/lib/systemd/system/profile.service x/usr/lib/systemd/system/profile.service 2>/dev/null | head -1) &&
	{ test -n "$unit" || fail "no profile.service in the package"; } &&
	git -C "$PROFILE_TOP" show HEAD:debian/profile.service | cmp - "$unit" &&
	git -C "$PROFILE_TOP" show HEAD:debian/profile.default | cmp - x/etc/default/profile &&
	dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >conffiles &&
	grep -x /etc/default/profile conffiles &&
	{ ! grep -E "^[EW]: " "$TRASH/deb/lintian.txt" || fail "lintian: $(cat "$TRASH/deb/lintian.txt")"; }
'

# The maintainer scripts run with deb-systemd-helper, deb-systemd-invoke
# and systemctl that log their arguments and answer as on a system that
# never had the package (was-enabled is true there: debhelper's default
# scripts enable a new unit on that answer).  The same fakes run
# debhelper's own enabling snippet first, to show they would see it.
fake_systemd() {
	mkdir -p fake &&
	for t in deb-systemd-helper deb-systemd-invoke systemctl; do
		cat >fake/$t <<-FAKE || return 1
		#!/bin/sh
		echo "$t \$*" >>$TRASH/calls
		case "\$*" in
		*debian-installed*|*is-enabled*|*is-active*) exit 1 ;;
		esac
		exit 0
		FAKE
		chmod +x fake/$t || return 1
	done
}

test_expect_success DPKG_BUILDPACKAGE,LINTIAN 'the package: installing it neither enables nor starts the service' '
	deb_build &&
	deb=$(ls "$TRASH"/deb/profile_*_amd64.deb) &&
	fake_systemd &&
	sed "s/#UNITFILE#/profile.service/g" /usr/share/debhelper/autoscripts/postinst-systemd-enable >stock &&
	: >calls && PATH=$TRASH/fake:$PATH sh stock configure &&
	{ grep -q "^deb-systemd-helper enable profile.service" calls ||
	  fail "the fakes do not see debhelper enabling a unit: $(cat calls)"; } &&
	mkdir ctl && dpkg-deb -e "$deb" ctl &&
	: >calls &&
	{ [ ! -f ctl/preinst ] || PATH=$TRASH/fake:$PATH sh ctl/preinst install || fail "preinst failed"; } &&
	PATH=$TRASH/fake:$PATH sh ctl/postinst configure || fail "postinst configure failed" &&
	cat calls &&
	grep -q "profile.service" calls &&
	{ ! grep -E " enable | start |restart" calls || fail "the service was enabled or started"; }
'

# stderr is a file here; JOURNAL_STREAM names it as systemd names the
# journal's socket.
test_expect_success 'journald: priorities and no "profile: " when stderr is the journal; plain otherwise' '
	: >err && s=$(stat -c %d:%i err) &&
	{ JOURNAL_STREAM=$s "$PROFILE" --frequncy 9 2>>err; test $? = 2; } &&
	cat err &&
	grep -qx "<3>unknown option .--frequncy.; did you mean .--frequency.? (see --help)" err &&
	: >plain &&
	{ "$PROFILE" --frequncy 9 2>>plain; test $? = 2; } &&
	grep -qx "profile: unknown option .--frequncy.; did you mean .--frequency.? (see --help)" plain &&
	: >other &&
	{ JOURNAL_STREAM=$s "$PROFILE" --frequncy 9 2>>other; test $? = 2; } &&
	cmp plain other
'

test_expect_success ROOT_BPF 'journald: a real run at -v: every line a priority, info at <6>, the summary without "profile: "' '
	bg "$WORKLOADS/burn" -t 1 -d 10 &&
	: >err && s=$(stat -c %d:%i err) &&
	JOURNAL_STREAM=$s "$PROFILE" -v -F 99 -o out.folded 1 2>>err &&
	cat err &&
	test -s out.folded &&
	{ ! grep -v "^<[3467]>" err || fail "lines without a priority"; } &&
	grep -q "^<6>samples: taken [0-9]" err &&
	grep -q "^<6>wrote out.folded" err &&
	{ ! grep -q "profile: " err || fail "a line names the program"; }
'

test_done
