/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stacks for unit tests.  A test writes its frames inline with STACK(name,
 * n) and fills name.frames[i]; as_stack() turns that into the struct stack
 * the code reads (an array of pointers to shared frames), with the kind and
 * flags the symbolizer would have given them: native unless set, and every
 * frame but the leaf a return address.  The wrappers are freed at exit, so
 * LeakSanitizer stays quiet.  folded() prints records as the folded
 * writer does, for the tests that read what a user would.
 */
#ifndef TEST_STACKS_H
#define TEST_STACKS_H

#include <stdio.h>
#include <stdlib.h>
#include "trace/trace.h"
#include "output/output.h"

#define STACK(name, n) \
	struct { __u32 nr; struct frame frames[n]; } name = { .nr = n }

struct inline_stack {
	__u32 nr;
	struct frame frames[];
};

struct stack_wrap {
	struct stack_wrap *next;
	struct stack st;	/* last: its pointer array follows */
};

static struct stack_wrap *test_stack_wraps;

static void free_test_stacks(void)
{
	while (test_stack_wraps) {
		struct stack_wrap *next = test_stack_wraps->next;

		free(test_stack_wraps);
		test_stack_wraps = next;
	}
}

static inline const struct stack *as_stack(const void *p)
{
	struct inline_stack *in = (struct inline_stack *)p;
	struct stack_wrap *w;

	if (!in)
		return NULL;
	w = malloc(sizeof(*w) + in->nr * sizeof(w->st.frames[0]));
	if (!w)
		abort();
	if (!test_stack_wraps)
		atexit(free_test_stacks);
	w->next = test_stack_wraps;
	test_stack_wraps = w;
	w->st.nr = in->nr;
	for (__u32 i = 0; i < in->nr; i++) {
		if (in->frames[i].kind == FRAME_NONE)
			in->frames[i].kind = FRAME_NATIVE;
		if (i)
			in->frames[i].flags |= FRAME_RETADDR;
		w->st.frames[i] = &in->frames[i];
	}
	return &w->st;
}

/* A record of comm, pid and count, with a user and a kernel part. */
static inline struct record test_record(const char *comm, __u32 pid, __u64 count,
					const void *user, __u8 us,
					const void *kern, __u8 ks)
{
	struct record r = { .pid = pid, .count = count };

	r.parts[PART_USER] = (struct part){ .stack = as_stack(user), .state = us };
	r.parts[PART_KERNEL] = (struct part){ .stack = as_stack(kern), .state = ks };
	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	return r;
}

/* The folded writer's output of rs in view v (malloc'ed), NULL if it failed. */
static inline char *folded(const struct records *rs, const struct trace_view *v)
{
	struct output_opts oo = { .view = *v, .folded = true };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		abort();
	err = output__write(f, rs, &oo);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

#endif /* TEST_STACKS_H */
