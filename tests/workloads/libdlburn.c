/*
 * libdlburn.so: loaded by dlburn with dlopen() after it has started.
 */
void dl_spin(unsigned long n);

__attribute__((noinline)) void dl_spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
}
