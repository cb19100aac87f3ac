/*
 * libtlsburn.so: a thread-local counter read the way position-independent
 * code reads one (the global-dynamic model, as libpython does): every read
 * calls ld.so's __tls_get_addr, a function with no frame of its own.
 */
unsigned long tls_bump(void);

__attribute__((tls_model("global-dynamic"))) __thread unsigned long tls_counter;

__attribute__((noinline)) unsigned long tls_bump(void)
{
	return ++tls_counter;
}
