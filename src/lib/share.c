// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/share.h"
#include "lib/log.h"

/* Users named in the end-of-run warning, at most. */
#define REPORT_USERS 5

void share__init(struct share *s, const char *what, const char *unit,
		 __u64 capacity)
{
	memset(s, 0, sizeof(*s));
	s->what = what;
	s->unit = unit;
	s->capacity = capacity;
}

void share__exit(struct share *s)
{
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&s->users, &pos));)
		free(e->val);
	htab__free(&s->users);
	memset(s, 0, sizeof(*s));
}

static struct share_user *user_of(const struct share *s, __u32 uid)
{
	return htab__get(&s->users, uid, 0);
}

static struct share_user *user_make(struct share *s, __u32 uid)
{
	struct share_user *u = user_of(s, uid);

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	if (htab__put(&s->users, uid, 0, u)) {
		free(u);
		return NULL;
	}
	return u;
}

/* The user holding most other than uid; NULL if nobody else holds any. */
static struct share_user *largest_other(const struct share *s, __u32 uid)
{
	struct share_user *best = NULL;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&s->users, &pos));) {
		struct share_user *u = e->val;

		if (u->uid != uid && u->held && (!best || u->held > best->held))
			best = u;
	}
	return best;
}

static void hold(struct share *s, struct share_user *u, __u64 n)
{
	if (!u->held && n)
		s->holders++;
	u->held += n;
	s->total += n;
	if (u->held > u->peak)
		u->peak = u->held;
}

enum share_verdict share__take(struct share *s, __u32 uid, __u64 n,
			       __u32 *evict)
{
	struct share_user *u = user_make(s, uid), *big;
	__u64 users, fair, room, newcomer;

	if (!u)
		return SHARE_REFUSED;
	users = s->holders + !u->held;
	fair = s->capacity / users;
	room = s->capacity - s->total;
	newcomer = s->capacity / (users + 1);

	if (u->held + n <= fair) {
		if (n <= room) {
			hold(s, u, n);
			return SHARE_TAKEN;
		}
		big = largest_other(s, uid);
		if (big && big->held > fair) {
			*evict = big->uid;
			return SHARE_EVICT;
		}
	} else if (n <= room && room - n >= newcomer) {
		hold(s, u, n);
		return SHARE_TAKEN;
	}
	u->refused++;
	return SHARE_REFUSED;
}

static void release(struct share *s, struct share_user *u, __u64 n)
{
	if (n > u->held)
		n = u->held;	/* the owner's bug: never go below zero */
	u->held -= n;
	s->total -= n;
	if (!u->held && n)
		s->holders--;
}

void share__give(struct share *s, __u32 uid, __u64 n)
{
	struct share_user *u = user_of(s, uid);

	if (u)
		release(s, u, n);
}

void share__evicted(struct share *s, __u32 uid, __u64 n)
{
	struct share_user *u = user_of(s, uid);

	if (!u)
		return;
	release(s, u, n);
	u->evicted += n;
}

void share__refuse(struct share *s, __u32 uid)
{
	struct share_user *u = user_make(s, uid);

	if (u)
		u->refused++;
}

__u64 share__held(const struct share *s, __u32 uid)
{
	struct share_user *u = user_of(s, uid);

	return u ? u->held : 0;
}

__u64 share__refused(const struct share *s)
{
	struct hent *e;
	__u64 n = 0;

	for (size_t pos = 0; (e = htab__next(&s->users, &pos));) {
		struct share_user *u = e->val;

		n += u->refused + u->evicted;
	}
	return n;
}

const char *share__user_name(__u32 uid, char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	if (!getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) && res)
		snprintf(buf, size, "%s (uid %u)", res->pw_name, uid);
	else
		snprintf(buf, size, "uid %u", uid);
	return buf;
}

/* "n of capacity unit", as the user reads it: bytes in MiB. */
static void amount(const struct share *s, __u64 n, char *buf, size_t size)
{
	if (!strcmp(s->unit, "bytes"))
		snprintf(buf, size, "%.1f of %.1f MiB", n / 1048576.0,
			 s->capacity / 1048576.0);
	else
		snprintf(buf, size, "%llu of %llu %s", (unsigned long long)n,
			 (unsigned long long)s->capacity, s->unit);
}

static int by_refusals(const void *a, const void *b)
{
	const struct share_user *x = *(struct share_user *const *)a;
	const struct share_user *y = *(struct share_user *const *)b;
	__u64 nx = x->refused + x->evicted, ny = y->refused + y->evicted;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* The users refused or evicted, most first; NULL when out of memory. */
static struct share_user **refused_users(const struct share *s, size_t *nr)
{
	struct share_user **v = calloc(s->users.nr + 1, sizeof(*v));
	struct hent *e;

	*nr = 0;
	if (!v)
		return NULL;
	for (size_t pos = 0; (e = htab__next(&s->users, &pos));) {
		struct share_user *u = e->val;

		if (u->refused || u->evicted)
			v[(*nr)++] = u;
	}
	qsort(v, *nr, sizeof(*v), by_refusals);
	return v;
}

static void warn_user(const struct share *s, const struct share_user *u,
		      const char *advice)
{
	char name[300], peak[96], back[64];

	amount(s, u->peak, peak, sizeof(peak));
	if (!strcmp(s->unit, "bytes"))
		snprintf(back, sizeof(back), "%.1f MiB", u->evicted / 1048576.0);
	else
		snprintf(back, sizeof(back), "%llu", (unsigned long long)u->evicted);
	pr_warn("%s: user %s filled its share (held up to %s): %llu requests refused, %s taken back for other users%s%s",
		s->what, share__user_name(u->uid, name, sizeof(name)), peak,
		(unsigned long long)u->refused, back, advice ? "; " : "",
		advice ? advice : "");
}

void share__report(const struct share *s, const char *advice,
		   enum report_pass pass)
{
	struct share_user **v;
	char total[96];
	size_t nr;

	if (pass == REPORT_STATS) {
		amount(s, s->total, total, sizeof(total));
		pr_info("%s: %s held by %zu users at the end", s->what, total,
			s->holders);
		return;
	}
	if (!share__refused(s))
		return;
	v = refused_users(s, &nr);
	if (!v) {
		pr_warn("%s: some users filled their share", s->what);
		return;
	}
	for (size_t i = 0; i < nr && i < REPORT_USERS; i++)
		warn_user(s, v[i], advice);
	if (nr > REPORT_USERS)
		pr_warn("%s: and %zu more users filled their share", s->what,
			nr - REPORT_USERS);
	free(v);
}
