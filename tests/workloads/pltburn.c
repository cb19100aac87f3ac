/*
 * pltburn: a hot call through the PLT into a shared library, bound lazily
 * (-Wl,-z,lazy, no -fno-plt).  plt_caller() calls lib_spin() of
 * libpltlib.so, a short call, millions of times a second, so a share of
 * the samples is in the PLT entry lib_spin@plt itself.  Known answer:
 * every sample reads main; plt_caller; then lib_spin, or the PLT entry
 * (a jump: it has no frame, and its caller is plt_caller), and reaches a
 * root frame.
 *
 *   pltburn [SECONDS]
 */
#include <stdio.h>
#include "spin.h"

void lib_spin(unsigned long n);

static volatile unsigned long sink;

__attribute__((noinline)) void plt_caller(void)
{
	for (int i = 0; i < 10000; i++)
		lib_spin(spin_len(16));
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long calls = 0;

	spin_start(argc, argv, 5);
	while (!expired()) {
		plt_caller();
		calls++;
	}
	printf("pltburn: %lu rounds\n", calls);
	return 0;
}
