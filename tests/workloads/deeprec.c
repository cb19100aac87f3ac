/*
 * deeprec: a stack deeper than the profiler's depth limit (127 frames).
 *
 * main calls deep_rec() DEPTH times recursively (default 300), and the
 * innermost call spins in deep_leaf() until SECONDS have passed.  Known
 * answer: every sample's user stack is deep_leaf under a run of deep_rec
 * frames, cut at the depth limit, so none reaches main or a root frame (a
 * profiler that says such a stack is whole is wrong).  Built without frame
 * pointers and without sibling calls (the frames are real).
 *
 *   deeprec [SECONDS] [DEPTH]
 */
#include <stdio.h>
#include "spin.h"

static volatile unsigned long sink;

__attribute__((noinline)) void deep_leaf(void)
{
	while (!expired())
		spin(spin_len(SPIN));
}

__attribute__((noinline)) void deep_rec(int depth)
{
	if (depth > 1)
		deep_rec(depth - 1);
	else
		deep_leaf();
	sink++;	/* not a tail call */
}

int main(int argc, char **argv)
{
	int depth = argc > 2 ? atoi(argv[2]) : 300;

	spin_start(argc, argv, 5);
	deep_rec(depth);
	printf("deeprec: %d frames\n", depth);
	return 0;
}
