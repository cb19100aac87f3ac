/*
 * libpltlib.so: the shared library pltburn calls through its PLT.  A short
 * body, so that the PLT entry in front of it gets a share of the samples.
 */
void lib_spin(unsigned long n);
int lib_nop(int x);

__attribute__((noinline)) void lib_spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
}

/* As short as a call can be: the PLT entry is a good share of its cost. */
__attribute__((noinline)) int lib_nop(int x)
{
	return x + 1;
}
