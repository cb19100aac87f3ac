// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The labels of unnamed frames (frame__label()), known answers. */
#include <stdlib.h>
#include "unit.h"
#include "lib/htab.h"
#include "trace/trace.h"

static const char *label(const struct frame *f)
{
	static char buf[FRAME_LABEL_MAX];

	return frame__label(f, buf, sizeof(buf));
}

TEST(named_frame_is_its_name)
{
	struct frame f = { .name = "func_a", .module = "/usr/bin/burn", .kind = FRAME_NATIVE };

	CHECK(label(&f) == f.name);
}

TEST(module_base_name_in_brackets)
{
	struct frame exe = { .module = "/usr/bin/gzip", .kind = FRAME_NATIVE };
	struct frame lib = { .module = "/usr/lib/x86_64-linux-gnu/libc.so.6", .kind = FRAME_NATIVE };
	struct frame rel = { .module = "burn-stripped", .kind = FRAME_NATIVE };
	struct frame jit = { .module = "/tmp/perf-42.map", .kind = FRAME_JIT };

	CHECK_STR(label(&exe), "[gzip]");
	CHECK_STR(label(&lib), "[libc.so.6]");
	CHECK_STR(label(&rel), "[burn-stripped]");
	CHECK_STR(label(&jit), "[perf-42.map]");
}

TEST(bracketed_module_not_doubled)
{
	struct frame vdso = { .module = "[vdso]", .kind = FRAME_NATIVE };
	struct frame anon = { .module = "[anon]", .kind = FRAME_JIT };
	struct frame half = { .module = "/tmp/[x", .kind = FRAME_NATIVE };

	CHECK(label(&vdso) == vdso.module);
	CHECK_STR(label(&vdso), "[vdso]");
	CHECK_STR(label(&anon), "[anon]");
	CHECK_STR(label(&half), "[[x]");
}

TEST(no_module_is_unknown)
{
	struct frame none = { .addr = 0x7f0000, .kind = FRAME_NATIVE };
	struct frame empty = { .module = "", .kind = FRAME_NATIVE };
	struct frame dir = { .module = "/tmp/", .kind = FRAME_NATIVE };
	struct frame interp = { .module = "app.py", .kind = FRAME_INTERP };

	CHECK_STR(label(&none), "[unknown]");
	CHECK_STR(label(&empty), "[unknown]");
	CHECK_STR(label(&dir), "[unknown]");
	CHECK_STR(label(&interp), "[unknown]");
}

/* knames.c gives core kernel text no module, a module's text its name. */
TEST(kernel_frames)
{
	struct frame core = { .addr = 0xffffffff81000010, .kind = FRAME_KERNEL };
	struct frame mod = { .module = "ext4", .kind = FRAME_KERNEL };

	CHECK_STR(label(&core), "[kernel]");
	CHECK_STR(label(&mod), "[ext4]");
}

/* Markers keep their names; the delimiter is the writers' business. */
TEST(markers_unchanged)
{
	struct frame missed = { .name = "[Missed User Stack]", .kind = FRAME_NATIVE,
				.flags = FRAME_MISSED };

	CHECK_STR(label(&missed), "[Missed User Stack]");
	CHECK(!frame__has_file_offset(&missed));
}

/* A name longer than the buffer is cut at a character, and closed. */
TEST(long_base_name_cut)
{
	char path[600] = "/d/", buf[8];
	struct frame f = { .module = path, .kind = FRAME_NATIVE };

	memset(path + 3, 'a', 500);
	CHECK_INT(strlen(label(&f)), FRAME_LABEL_MAX - 1);
	CHECK(label(&f)[FRAME_LABEL_MAX - 2] == ']');
	f.module = "/d/ab\xc3\xa9z";		/* "abéz": é is 2 bytes */
	CHECK_STR(frame__label(&f, buf, sizeof(buf)), "[ab\xc3\xa9z]");
	CHECK_STR(frame__label(&f, buf, 7), "[ab\xc3\xa9]");
	CHECK_STR(frame__label(&f, buf, 6), "[ab]");
	CHECK_STR(frame__label(&f, buf, 3), "[unknown]");
}

TEST(file_offset_only_for_user_frames_in_a_module)
{
	struct frame user = { .module = "/usr/bin/gzip", .kind = FRAME_NATIVE };
	struct frame jit = { .module = "[anon]", .kind = FRAME_JIT };
	struct frame named = { .name = "main", .module = "/usr/bin/gzip", .kind = FRAME_NATIVE };
	struct frame none = { .kind = FRAME_NATIVE };
	struct frame kernel = { .module = "ext4", .kind = FRAME_KERNEL };

	CHECK(frame__has_file_offset(&user));
	CHECK(frame__has_file_offset(&jit));
	CHECK(!frame__has_file_offset(&named));
	CHECK(!frame__has_file_offset(&none));
	CHECK(!frame__has_file_offset(&kernel));
}

/* Kept labels outlive the call, once per distinct label. */
TEST(kept_labels_shared)
{
	struct strpool pool = {};
	struct frame a = { .module = "/usr/bin/gzip", .kind = FRAME_NATIVE };
	struct frame b = { .module = "/opt/gzip", .kind = FRAME_NATIVE };
	struct frame v = { .module = "[vdso]", .kind = FRAME_NATIVE };
	const char *la = frame__label_kept(&a, &pool);

	CHECK_STR(la, "[gzip]");
	CHECK(frame__label_kept(&b, &pool) == la);
	CHECK(frame__label_kept(&v, &pool) == v.module);
	strpool__free(&pool);
}

TEST(bracketed)
{
	CHECK(trace__is_bracketed("[vdso]"));
	CHECK(trace__is_bracketed("[]"));
	CHECK(!trace__is_bracketed("["));
	CHECK(!trace__is_bracketed("[anon"));
	CHECK(!trace__is_bracketed("/usr/bin/gzip"));
}

int main(void)
{
	RUN(named_frame_is_its_name);
	RUN(module_base_name_in_brackets);
	RUN(bracketed_module_not_doubled);
	RUN(no_module_is_unknown);
	RUN(kernel_frames);
	RUN(markers_unchanged);
	RUN(long_base_name_cut);
	RUN(file_offset_only_for_user_frames_in_a_module);
	RUN(kept_labels_shared);
	RUN(bracketed);
	return unit_summary();
}
