// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The root-first view of a record's trace that every writer reads. */
#include "trace.h"

static const struct frame missed_frames[NR_PARTS] = {
	[PART_KERNEL] = { .name = "[Missed Kernel Stack]", .kind = FRAME_KERNEL,
			  .flags = FRAME_MISSED },
	[PART_USER] = { .name = "[Missed User Stack]", .kind = FRAME_NATIVE,
			.flags = FRAME_MISSED },
};

static const struct frame delimiter = { .name = "-", .kind = FRAME_NONE,
					.flags = FRAME_DELIMITER };

static void add_seg(struct trace_iter *it, const struct stack *st,
		    const struct frame *marker, __u32 len)
{
	if (!len)
		return;
	it->segs[it->nr_segs++] = (struct trace_seg){ st, marker, len };
	it->len += len;
}

/*
 * Parts from the root end (user) to the leaf end (kernel); a delimiter
 * between two shown parts when both were read (bcc's rule for -d).
 */
void trace_iter__init(struct trace_iter *it, const struct record *r,
		      const struct trace_view *v)
{
	const struct part *prev = NULL;

	it->nr_segs = 0;
	it->len = 0;
	for (int i = NR_PARTS - 1; i >= 0; i--) {
		const struct part *p = &r->parts[i];

		if (!v->parts[i])
			continue;
		if (v->delimited && prev && prev->state == PART_OK && p->state == PART_OK)
			add_seg(it, NULL, &delimiter, 1);
		if (p->state == PART_MISSED)
			add_seg(it, NULL, &missed_frames[i], 1);
		else if (p->state == PART_OK)
			add_seg(it, p->stack, NULL, p->stack->nr);
		prev = p;
	}
}

const struct frame *trace_iter__frame(const struct trace_iter *it, __u32 i)
{
	for (__u32 s = 0; s < it->nr_segs; s++) {
		const struct trace_seg *seg = &it->segs[s];

		if (i < seg->len)
			return seg->stack ? seg->stack->frames[seg->len - 1 - i] : seg->marker;
		i -= seg->len;
	}
	return NULL;
}

__u64 records__total(const struct records *rs)
{
	__u64 n = 0;

	for (size_t i = 0; i < rs->nr; i++)
		n += rs->recs[i].count;
	return n;
}
