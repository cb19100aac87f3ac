#!/bin/bash
# The libFuzzer targets (fuzz/) still build against src/, and replay the
# inputs that once crashed a parser (fuzz/regress/) without a finding.  No
# fuzzing here: make fuzz does that, for a minute a target.
. "$(dirname "$0")/lib.sh"

test_expect_success clang 'fuzz targets build and replay fuzz/regress/ cleanly under ASan and UBSan' '
	make -s -C "$PROFILE_TOP/fuzz" OUT="$TRASH/fuzz" regress >regress.log 2>&1 ||
		{ tail -30 regress.log; false; } &&
	for t in elf minidebuginfo perfmap procmaps ehframe; do
		[ -x "$TRASH/fuzz/fuzz_$t" ] || fail "no fuzz_$t"
		n=$(ls "$PROFILE_TOP/fuzz/regress/$t" | wc -l)
		grep -q "Running: .*regress/$t/" regress.log || fail "fuzz_$t replayed nothing"
		echo "fuzz_$t: $n inputs"
	done &&
	! grep -E "ERROR: (AddressSanitizer|libFuzzer)|runtime error:" regress.log
'

test_done
