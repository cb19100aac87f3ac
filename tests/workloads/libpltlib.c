/*
 * libpltlib.so: the shared library pltburn calls through its PLT.  A short
 * body, so that the PLT entry in front of it gets a share of the samples.
 */
void lib_spin(unsigned long n);

__attribute__((noinline)) void lib_spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
}
