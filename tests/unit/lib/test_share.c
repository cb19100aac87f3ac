// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Fair shares of a host-wide table: a flood by one user leaves others room. */
#include "unit.h"
#include "lib/share.h"

#define ATTACKER 65534
#define VICTIM 1
#define THIRD 2

/* Take n one at a time, evicting one unit per SHARE_EVICT as an owner would. */
static __u64 take_each(struct share *s, __u32 uid, __u64 n, __u64 *evictions)
{
	__u64 got = 0;
	__u32 evict;

	for (__u64 i = 0; i < n; i++) {
		enum share_verdict v = share__take(s, uid, 1, &evict);

		if (v == SHARE_EVICT) {
			share__evicted(s, evict, 1);
			(*evictions)++;
			v = share__take(s, uid, 1, &evict);
		}
		got += v == SHARE_TAKEN;
	}
	return got;
}

/* A lone user may fill the whole table. */
TEST(lone_user_fills)
{
	struct share s;
	__u64 ev = 0;

	share__init(&s, "test table", "entries", 100);
	CHECK_INT(take_each(&s, ATTACKER, 150, &ev), 100);
	CHECK_INT(ev, 0);
	CHECK_INT(share__held(&s, ATTACKER), 100);
	CHECK_INT(share__refused(&s), 50);
	share__exit(&s);
}

/* After a flood, a newcomer gets its whole fair share back by eviction. */
TEST(newcomer_takes_back_its_share)
{
	struct share s;
	__u64 ev = 0;

	share__init(&s, "test table", "entries", 100);
	CHECK_INT(take_each(&s, ATTACKER, 1000, &ev), 100);
	CHECK_INT(take_each(&s, VICTIM, 50, &ev), 50);
	CHECK_INT(ev, 50);
	CHECK_INT(share__held(&s, ATTACKER), 50);
	CHECK_INT(share__held(&s, VICTIM), 50);
	/* Beyond its fair share the victim gets nothing more. */
	CHECK_INT(take_each(&s, VICTIM, 10, &ev), 0);
	CHECK_INT(share__held(&s, VICTIM), 50);
	share__exit(&s);
}

/* The attacker cannot take back from a user within its share. */
TEST(no_eviction_below_fair)
{
	struct share s;
	__u64 ev = 0;

	share__init(&s, "test table", "entries", 90);
	CHECK_INT(take_each(&s, VICTIM, 10, &ev), 10);
	CHECK_INT(take_each(&s, ATTACKER, 1000, &ev), 50); /* leaves 30 free */
	CHECK_INT(take_each(&s, THIRD, 30, &ev), 30);	   /* from free room */
	CHECK_INT(ev, 0);
	CHECK_INT(take_each(&s, ATTACKER, 100, &ev), 0);
	CHECK_INT(share__held(&s, VICTIM), 10);
	CHECK_INT(share__held(&s, THIRD), 30);
	share__exit(&s);
}

/* Giving back frees room and the holder count; over-giving is clamped. */
TEST(give_back)
{
	struct share s;
	__u32 evict = 0;

	share__init(&s, "test bytes", "bytes", 1 << 20);
	CHECK_INT(share__take(&s, VICTIM, 4096, &evict), SHARE_TAKEN);
	CHECK_INT(s.holders, 1);
	share__give(&s, VICTIM, 1 << 30);
	CHECK_INT(share__held(&s, VICTIM), 0);
	CHECK_INT(s.total, 0);
	CHECK_INT(s.holders, 0);
	share__give(&s, THIRD, 5);	/* never held: nothing happens */
	CHECK_INT(s.total, 0);
	share__exit(&s);
}

/* Many colluding users each end with their fair share at most. */
TEST(colluding_users)
{
	struct share s;
	__u64 ev = 0;

	share__init(&s, "test table", "entries", 1000);
	for (__u32 uid = 1000; uid < 1010; uid++)
		take_each(&s, uid, 1000, &ev);
	CHECK_INT(take_each(&s, VICTIM, 90, &ev), 90);
	CHECK_INT(share__held(&s, VICTIM), 90);
	CHECK(s.total <= 1000);
	share__exit(&s);
}

TEST(user_name)
{
	char buf[64];

	CHECK_STR(share__user_name(0, buf, sizeof(buf)), "root (uid 0)");
	CHECK_STR(share__user_name(4000000000u, buf, sizeof(buf)),
		  "uid 4000000000");
}

int main(void)
{
	RUN(lone_user_fills);
	RUN(newcomer_takes_back_its_share);
	RUN(no_eviction_below_fair);
	RUN(give_back);
	RUN(colluding_users);
	RUN(user_name);
	return unit_summary();
}
