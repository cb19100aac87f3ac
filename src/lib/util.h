/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers shared by the parsers and tables. */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>

/*
 * Make room for need elements of elem bytes at *arr, growing *cap by half
 * (from 64), so that big arrays do not double their peak.  0 or -ENOMEM;
 * on failure *arr and *cap are unchanged.
 */
int util__grow_array(void **arr, size_t *cap, size_t need, size_t elem);

/* The value of a hexadecimal digit, or -1. */
int util__hex_digit(char c);

#endif /* UTIL_H */
