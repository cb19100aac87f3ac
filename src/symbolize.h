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
struct knames;
struct usyms;

struct frame {
	const char *name;	/* NULL: [unknown] */
	const char *module;	/* kernel module, DSO path, or NULL */
	__u64 addr;		/* as sampled (return addresses not adjusted) */
	__u64 offset;		/* from the symbol's start */
	bool kernel;
};

/*
 * Frames are symbolized once per distinct (process, address) and shared by
 * every stack that holds them: a stack is an array of pointers.
 */
struct stack {
	__u32 nr;
	const struct frame *frames[];	/* leaf first */
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

struct sym_cache;

struct profile {
	struct record *recs;
	size_t nr;
	struct sym_cache *cache;	/* stacks, frames, and their memory */
	bool own_cache;
	__u64 missed_stacks;	/* stacks printed as [Missed ...] */
	bool missed_enomem;	/* one of them for lack of room */
};

struct symbolizer {
	struct session *session;
	/*
	 * Stacks and frames symbolized so far.  NULL: each profile gets its
	 * own.  Shared across reports only while stack ids stay valid, that
	 * is, without -i (which recycles them).
	 */
	struct sym_cache *cache;
	struct knames *knames;		/* NULL: kernel frames stay [unknown] */
	struct usyms *usyms;		/* NULL: user frames stay [unknown] */
};

int profile_build(struct profile *p, const struct symbolizer *sym,
		  const struct sample *samples, size_t nr);
void profile_free(struct profile *p);

struct sym_cache *sym_cache__new(void);
void sym_cache__free(struct sym_cache *c);

/*
 * Read and symbolize, ahead of the report, the stacks these samples refer
 * to, into sym->cache: stacks are immutable once stored, so the report at
 * the end has only the newest ones left to read.
 */
int symbolize_prefetch(const struct symbolizer *sym, const struct sample *samples,
		       size_t nr);

#endif /* SYMBOLIZE_H */
