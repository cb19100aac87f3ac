/*
 * tlsburn: hot calls to ld.so's __tls_get_addr (through libtlsburn.so's
 * tls_bump()).  ld.so is mapped above every other object, so a walker
 * that cannot find the highest mapping stops each of these stacks at the
 * leaf (issue 28: pyenv's Pythons).  Known answer: every sample reads
 * main; tls_caller; then tls_bump, and __tls_get_addr under it in about
 * half of them, and reaches a root frame.
 *
 *   tlsburn [SECONDS]
 */
#include <stdio.h>
#include "spin.h"

unsigned long tls_bump(void);

static volatile unsigned long sink;

__attribute__((noinline)) void tls_caller(void)
{
	unsigned long x = 0;

	for (int i = 0; i < 100000; i++)
		x += tls_bump();
	sink += x;
}

int main(int argc, char **argv)
{
	unsigned long calls = 0;

	spin_start(argc, argv, 5);
	while (!expired()) {
		tls_caller();
		calls++;
	}
	printf("tlsburn: %lu rounds\n", calls);
	return 0;
}
