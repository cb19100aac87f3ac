// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>

#include "lib/util.h"

int util__grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *tmp;

	if (need <= *cap)
		return 0;
	while (n < need)
		n += n / 2;
	tmp = realloc(*arr, n * elem);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = n;
	return 0;
}

int util__hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
