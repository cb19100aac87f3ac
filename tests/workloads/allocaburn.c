/*
 * allocaburn: burn's answer (func_b on-CPU three times as often as func_a)
 * in functions whose frames have a variable size: each spins over a VLA
 * and an alloca() block.  GCC then addresses the frame from rbp even
 * without frame pointers, so the CFA of func_a and func_b is rbp-based
 * while the rest of the program's is rsp-based.  Known answer: func_b/func_a
 * = 3.0, and every sample reaches main and a root frame.
 *
 *   allocaburn [SECONDS]
 */
#include <alloca.h>
#include <stdio.h>
#include "spin.h"

#define RATIO 3

static volatile unsigned long sink;

/* Identical bodies, as in burn: the same cost per iteration. */
__attribute__((noinline, aligned(64))) void func_a(unsigned long n, int len)
{
	volatile char vla[len];
	volatile char *extra = alloca(len);

	for (volatile unsigned long i = 0; i < n; i++)
		vla[i % len] = extra[i % len];
	sink += vla[0];
}

__attribute__((noinline, aligned(64))) void func_b(unsigned long n, int len)
{
	volatile char vla[len];
	volatile char *extra = alloca(len);

	for (volatile unsigned long i = 0; i < n; i++)
		vla[i % len] = extra[i % len];
	sink += vla[0];
}

int main(int argc, char **argv)
{
	unsigned long a = 0, b = 0;

	spin_start(argc, argv, 5);
	while (!expired()) {
		func_a(spin_len(SPIN / 4), 16 + (int)(spin_rng % 512));
		a++;
		for (int i = 0; i < RATIO; i++) {
			func_b(spin_len(SPIN / 4), 16 + (int)(spin_rng % 512));
			b++;
		}
	}
	printf("allocaburn: %lu %lu\n", a, b);
	return 0;
}
