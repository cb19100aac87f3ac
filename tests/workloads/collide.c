/*
 * collide: what a hostile process does to the spill map when it knows the
 * hash key.  Three threads, named coll-a, coll-b and coll-c, each spin on a
 * forged frame-pointer chain, so that their user stacks are
 *
 *	coll-a: coll_spin, mark_a, outer_a
 *	coll-b: coll_spin, mark_b, <forged>
 *	coll-c: coll_spin, mark_c, <forged>
 *
 * (leaf first; the frame after each mark is a return address into it) and
 * the forged outermost frames are chosen so that all three stacks have the
 * same spill hash (bpf/profile.h) under the key K0,K1: the hash is a chain
 * of bijections, so the last frame can be solved for.  Run the profiler
 * with PROFILE_TEST_SPILL_SEED=K0,K1 and --stack-storage-size 1 (one
 * bucket: every stack but the first collides in the STACK_TRACE map and is
 * spilled), and two different stacks meet under one spill key.
 *
 *	collide K0 K1 [SECONDS]
 *
 * Prints the three hashes, which must be equal.  x86_64 only.
 */
#define _GNU_SOURCE
#include <linux/types.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profile.h"

#define BPF_F_USER_STACK (1ULL << 8)	/* the flags the sampler hashes */
#define NR_FRAMES 3

/* Load the chain into rbp and spin there: the sampled ip is the jmp. */
__asm__(".text\n"
	".globl coll_spin\n"
	".type coll_spin, @function\n"
	"coll_spin:\n"
	"	mov %rdi, %rbp\n"
	"1:	jmp 1b\n"
	".size coll_spin, . - coll_spin\n");
void coll_spin(__u64 *chain);

#define MARK(name) \
	__attribute__((noinline, used)) void name(void) { __asm__ volatile("nop; nop; nop; nop"); }
MARK(mark_a) MARK(mark_b) MARK(mark_c) MARK(outer_a)

/* A return address into fn: the symbolizer names it at addr - 1. */
#define RET(fn) ((__u64)(unsigned long)(fn) + 1)

static __u64 key[SPILL_KEY_WORDS];

struct forged {
	const char *comm;
	__u64 frames[NR_FRAMES];	/* leaf first */
};

static __u64 hash_frames(const __u64 *frames, int nr)
{
	__u64 h = spill_hash_init(key);

	for (int i = 0; i < nr; i++)
		h = spill_hash_frame(key, h, frames[i]);
	return spill_hash_final(h, nr, BPF_F_USER_STACK);
}

/* The inverse of an odd number modulo 2^64, by Newton's iteration. */
static __u64 inverse(__u64 c)
{
	__u64 x = c;

	for (int i = 0; i < 6; i++)
		x *= 2 - c * x;
	return x;
}

/* spill_mix() backwards; x ^= x >> 33 is its own inverse. */
static __u64 unmix(__u64 x)
{
	x ^= x >> 33;
	x *= inverse(0xc4ceb9fe1a85ec53ULL);
	x ^= x >> 33;
	x *= inverse(0xff51afd7ed558ccdULL);
	x ^= x >> 33;
	return x;
}

/* The outermost frame that makes frames[] hash to want. */
static __u64 solve_last(const __u64 *frames, __u64 want)
{
	__u64 h = spill_hash_init(key), hf;

	for (int i = 0; i < NR_FRAMES - 1; i++)
		h = spill_hash_frame(key, h, frames[i]);
	/* want = mix(hf ^ (NR_FRAMES << 32) ^ flags), hf = mix(h ^ mix(last + key[0])) */
	hf = unmix(want) ^ ((__u64)NR_FRAMES << 32) ^ BPF_F_USER_STACK;
	return unmix(unmix(hf) ^ h) - key[0];
}

static void *spin(void *arg)
{
	const struct forged *f = arg;
	/* Two frame records, in the thread's own stack above coll_spin's. */
	__u64 chain[4] __attribute__((aligned(16)));

	pthread_setname_np(pthread_self(), f->comm);
	chain[0] = (__u64)(unsigned long)&chain[2];
	chain[1] = f->frames[1];
	chain[2] = 0;
	chain[3] = f->frames[2];
	coll_spin(chain);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct forged f[3] = { { "coll-a" }, { "coll-b" }, { "coll-c" } };
	__u64 ip, want;
	pthread_t t;

	if (argc < 3) {
		fprintf(stderr, "usage: collide K0 K1 [SECONDS]\n");
		return 2;
	}
	key[0] = strtoull(argv[1], NULL, 0);
	key[1] = strtoull(argv[2], NULL, 0);
	/* The jmp, 3 bytes into coll_spin (mov %rdi, %rbp is 48 89 fd). */
	ip = (__u64)(unsigned long)coll_spin + 3;
	f[0].frames[0] = f[1].frames[0] = f[2].frames[0] = ip;
	f[0].frames[1] = RET(mark_a);
	f[0].frames[2] = RET(outer_a);
	f[1].frames[1] = RET(mark_b);
	f[2].frames[1] = RET(mark_c);
	want = hash_frames(f[0].frames, NR_FRAMES);
	f[1].frames[2] = solve_last(f[1].frames, want);
	f[2].frames[2] = solve_last(f[2].frames, want);
	for (int i = 0; i < 3; i++)
		printf("%s: hash %016llx\n", f[i].comm,
		       (unsigned long long)hash_frames(f[i].frames, NR_FRAMES));
	fflush(stdout);
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&t, NULL, spin, &f[i])) {
			fprintf(stderr, "collide: cannot start a thread\n");
			return 1;
		}
	}
	sleep(argc > 3 ? atoi(argv[3]) : 10);
	return 0;
}
