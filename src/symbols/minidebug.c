// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbols/minidebug.h"

#include <lzma.h>

/* The decoder's own memory; xz -9 needs 65 MiB, Fedora uses the default. */
#define DECODER_MEMLIMIT	(128u << 20)

/* Fuzzing gets past the stream's checksums to the decoder and the ELF. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define DECODER_FLAGS		LZMA_IGNORE_CHECK
#else
#define DECODER_FLAGS		0
#endif

static int lzma_err(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
		return -ENOMEM;
	case LZMA_MEMLIMIT_ERROR:
		return -EFBIG;
	default:
		return -EINVAL;
	}
}

int minidebug__decompress(const void *in, size_t len, size_t max,
			  void **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = len * 4 < 4096 ? 4096 : len * 4;
	uint8_t *buf = NULL, *tmp;
	lzma_ret ret;
	int err;

	if (cap > max)
		cap = max;
	ret = lzma_stream_decoder(&strm, DECODER_MEMLIMIT, DECODER_FLAGS);
	if (ret != LZMA_OK)
		return lzma_err(ret);
	buf = malloc(cap ? cap : 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	strm.next_in = in;
	strm.avail_in = len;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		/* All input is there: LZMA_FINISH, and a truncated stream fails. */
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
			err = lzma_err(ret);
			goto cleanup;
		}
		if (strm.avail_out) {
			err = -EINVAL;	/* no progress possible: truncated */
			goto cleanup;
		}
		if (cap >= max) {
			err = -EFBIG;
			goto cleanup;
		}
		cap = cap > max / 2 ? max : cap * 2;
		tmp = realloc(buf, cap);
		if (!tmp) {
			err = -ENOMEM;
			goto cleanup;
		}
		buf = tmp;
		strm.next_out = buf + strm.total_out;
		strm.avail_out = cap - strm.total_out;
	}
	*out = buf;
	*out_len = strm.total_out;
	buf = NULL;
	err = 0;

cleanup:
	free(buf);
	lzma_end(&strm);
	return err;
}
