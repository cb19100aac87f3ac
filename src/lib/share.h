/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fair shares of one host-wide table or budget between users.
 *
 * Root's profile keeps tables that every process on the host can fill: the
 * Python processes followed, the unwinder's processes and table memory,
 * the bytes of Python names, debuginfod's queue and downloads.  One
 * unprivileged user must not take any of them from the others.  A share
 * counts what each user (procfs_status.charged: the real uid, the user
 * who started the process) holds of one such table and decides every
 * request max-min fair:
 *
 *  - fair share = capacity / the users holding something (the asker
 *    counted);
 *  - a request that keeps the user within its fair share is served from
 *    free room; when there is none, the user holding most is named, and
 *    the owner takes some of that user's entries back (SHARE_EVICT), then
 *    asks again;
 *  - a request beyond the fair share is served only from free room, and
 *    only while it leaves a newcomer's share (capacity / (users + 1))
 *    free, so that a newcomer rarely has to evict.
 *
 * A lone user may fill the whole table; the first request of another
 * user then takes back its share.  The share only counts: the owner keeps
 * its entries, knows each entry's user, and calls share__give() when an
 * entry goes.  Not thread-safe: the owner calls it under its own lock.
 */
#ifndef SHARE_H
#define SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "lib/htab.h"
#include "lib/report_pass.h"

enum share_verdict {
	SHARE_TAKEN,		/* counted against the user: go on */
	SHARE_EVICT,		/* take back from *evict's entries, then ask again */
	SHARE_REFUSED,		/* over its share: counted as refused */
};

struct share_user {
	__u32 uid;
	__u64 held;		/* units now held */
	__u64 peak;		/* most ever held */
	__u64 refused;		/* requests refused */
	__u64 evicted;		/* units taken back from it for others */
};

struct share {
	const char *what;	/* the table, for messages: "Python process table" */
	const char *unit;	/* "processes", "bytes" (printed in MiB) */
	__u64 capacity;
	__u64 total;		/* held by all users */
	size_t holders;		/* users holding more than 0 */
	struct htab users;	/* uid -> struct share_user */
};

/* An empty share of capacity units; what and unit are kept, not copied. */
void share__init(struct share *s, const char *what, const char *unit,
		__u64 capacity);
void share__exit(struct share *s);

/*
 * May uid hold n more units?  SHARE_TAKEN: counted.  SHARE_EVICT: *evict
 * is the user holding most; the owner frees some of its entries (giving
 * them back with share__evicted()) and asks again, or treats it as
 * refused.  SHARE_REFUSED: counted against uid, for share__report()
 * (also when the user's record cannot be made: out of memory).
 */
enum share_verdict share__take(struct share *s, __u32 uid, __u64 n,
			       __u32 *evict);

/* uid gives back n units it held (its entry went). */
void share__give(struct share *s, __u32 uid, __u64 n);

/* As share__give(), for units taken back from uid for another user. */
void share__evicted(struct share *s, __u32 uid, __u64 n);

/* Count a refusal the owner decided itself (e.g. out of memory). */
void share__refuse(struct share *s, __u32 uid);

/* What uid holds now. */
__u64 share__held(const struct share *s, __u32 uid);

/* Units refused or taken back, over all users: whether to warn. */
__u64 share__refused(const struct share *s);

/*
 * "nobody (uid 65534)", or "uid 1234" for a uid without a passwd entry.
 * Returns buf.
 */
const char *share__user_name(__u32 uid, char *buf, size_t size);

/*
 * REPORT_WARN: one line per user that was refused or evicted, naming the
 * user, most refused first (five at most, then how many more), with what
 * the owner says to do (advice, may be NULL).  REPORT_STATS: one -v line
 * with the table's holders and peak.
 */
void share__report(const struct share *s, const char *advice,
		   enum report_pass pass);

#endif /* SHARE_H */
