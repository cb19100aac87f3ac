/*
 * sigburn: a busy signal handler.  setitimer(ITIMER_PROF) asks for SIGPROF
 * every millisecond of CPU time (the kernel rounds that up to its tick);
 * the handler, on_sigprof(), spins in handler_burn() for as long as the
 * main loop ran since the handler last returned, so about half the samples
 * are in the handler whatever the tick.  Known answer: a sample in the
 * handler reads, root first,
 *
 *	main; main_loop; [main_burn]; <signal frame: __restore_rt>; on_sigprof; handler_burn
 *
 * (the interrupted function, main_burn or main_loop, under the kernel's
 * signal frame), and every sample reaches main and a root frame.
 *
 *   sigburn [SECONDS]
 */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include "spin.h"

#define CHUNK (SPIN / 4)

static volatile unsigned long handled, sink;
static double returned;	/* when the handler last returned */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Spins until `until`, in chunks of random length. */
__attribute__((noinline)) void handler_burn(double until)
{
	/* its own generator: the handler must not race the main loop's */
	static unsigned long rng = 0x2545f4914f6cdd1dUL;

	do {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		spin(CHUNK / 2 + rng % CHUNK);
	} while (now() < until);
}

__attribute__((noinline)) void on_sigprof(int sig)
{
	double t = now();

	handler_burn(t + (returned ? t - returned : 0));
	returned = now();
	handled++;
}

__attribute__((noinline)) void main_burn(void)
{
	spin(spin_len(CHUNK));
	sink++;
}

__attribute__((noinline)) void main_loop(void)
{
	while (!expired())
		main_burn();
	sink++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigprof, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	spin_start(argc, argv, 5);
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	main_loop();
	signal(SIGPROF, SIG_IGN);
	printf("sigburn: %lu signals handled\n", handled);
	return 0;
}
