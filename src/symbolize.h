/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * From drained samples to symbolized records.  Each distinct stack (a
 * kernel stack by its reference, a user stack by process and reference) is
 * read and symbolized once, however many records share it.
 */
#ifndef SYMBOLIZE_H
#define SYMBOLIZE_H

#include <stdbool.h>
#include <linux/types.h>
#include "profile.h"

struct session;
struct sample;
struct ksyms;
struct usyms;

struct frame {
	const char *name;	/* NULL: [unknown] */
	const char *module;	/* kernel module, DSO path, or NULL */
	__u64 addr;		/* as sampled (return addresses not adjusted) */
	__u64 offset;		/* from the symbol's start */
	bool kernel;
};

struct stack {
	__u32 nr;
	struct frame frames[];	/* leaf first */
};

enum stack_state {
	STATE_NONE,		/* no such stack: print nothing */
	STATE_OK,
	STATE_MISSED,		/* lost: print [Missed ... Stack] */
};

struct record {
	__u32 pid, tid, cpu;
	char comm[TASK_COMM_LEN];
	__u64 count;
	const struct stack *user;	/* valid when user_state == STATE_OK */
	const struct stack *kern;
	__u8 user_state, kern_state;
	__s32 user_err, kern_err;	/* errno of a missed stack */
};

struct stack_cache;

struct profile {
	struct record *recs;
	size_t nr;
	struct stack_cache *cache;
	__u64 missed_stacks;	/* stacks printed as [Missed ...] */
	bool missed_enomem;	/* one of them for lack of room */
};

struct symbolizer {
	struct session *session;
	const struct ksyms *ksyms;	/* NULL: kernel frames stay [unknown] */
	struct usyms *usyms;		/* NULL: user frames stay [unknown] */
};

int profile_build(struct profile *p, const struct symbolizer *sym,
		  const struct sample *samples, size_t nr);
void profile_free(struct profile *p);

#endif /* SYMBOLIZE_H */
