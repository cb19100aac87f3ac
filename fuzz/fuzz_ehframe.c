// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer entry point: see targets.h. */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_ehframe_one(data, size);
}
