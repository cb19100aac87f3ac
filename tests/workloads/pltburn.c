/*
 * pltburn: hot calls through the PLT into a shared library, bound lazily
 * (-Wl,-z,lazy, no -fno-plt).  plt_caller() calls lib_spin() of
 * libpltlib.so, a short spin, then lib_nop(), which only returns, eight
 * times, so that about a tenth of the samples are in the PLT entries
 * themselves (lib_nop@plt: a jump, with no frame of its own).  Known
 * answer: every sample reads main; plt_caller; then lib_spin, lib_nop or a
 * PLT entry (whose caller is plt_caller), and reaches a root frame.
 *
 *   pltburn [SECONDS]
 */
#include <stdio.h>
#include "spin.h"

void lib_spin(unsigned long n);
int lib_nop(int x);

static volatile unsigned long sink;

__attribute__((noinline)) void plt_caller(void)
{
	int x = 0;

	for (int i = 0; i < 10000; i++) {
		lib_spin(spin_len(16));
		for (int j = 0; j < 8; j++)
			x = lib_nop(x);
	}
	sink += x;
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
