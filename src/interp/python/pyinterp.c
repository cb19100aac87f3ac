// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython, plugged into the interpreter interface (src/interp/interp.h):
 * its BPF maps, how its stored stacks read as frames, its marks, the
 * native frame its frames replace, and its lines in the report.  The
 * reading of processes is python.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "interp/interp.h"
#include "interp/python/python.h"
#include "loader/kbtf.h"
#include "bpf/interp/python/pyframe.h"
#include "trace/trace.h"
#include "lib/log.h"
#include "profile.skel.h"

/*
 * The thread pointer's offset is read here, from the start's one parse of
 * the kernel's BTF, although most runs never see a Python process: a parse
 * when the first one comes would cost another 11 MiB of peak RSS then.
 * Left 0 when not found: python.c warns at the first Python process.
 */
static int py_configure(struct profile_bpf *skel, const struct kbtf *kb, bool on)
{
	__u32 off;

	if (!on)
		return bpf_map__set_max_entries(skel->maps.py_threads, 1);
	if (!kbtf__fsbase_offset(kb, &off))
		skel->bss->py_fsbase_off = off;
	return 0;
}

static void *py_start(struct profile_bpf *skel, const struct interp_config *cfg)
{
	struct python_maps maps = {
		.procs_fd = bpf_map__fd(skel->maps.interp_procs),
		.nr_procs = &skel->bss->interp_nr_procs[PY_KIND - 1],
		.fsbase_off = &skel->bss->py_fsbase_off,
		.execs_fd = bpf_map__fd(skel->maps.uw_execs),
		.need_walker = cfg->need_walker,
		.walker_arg = cfg->walker_arg,
	};
	struct python *py = python__new(&maps, cfg->lines);

	if (!py)
		pr_warn("cannot start the Python reader: %s; Python processes show native frames only",
			strerror(errno));
	return py;
}

static void py_free(void *ctx)
{
	python__free(ctx);
}

/* An embedded interpreter, loaded after the first sample. */
static bool py_wants_mapping(const char *path)
{
	return strstr(path, "/libpython3.") != NULL;
}

/*
 * CPython's executable (python3, python3.11, ...) or libpython mapped by
 * any process, at its exec, before its first sample: the kernel's walker
 * starts loading now, while the interpreter starts up.  Not a detection:
 * the interpreter is not there yet.
 */
static void py_seen(void *ctx, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (py_wants_mapping(path) ||
	    (!strncmp(base, "python", 6) && (!base[6] || (base[6] >= '0' && base[6] <= '9'))))
		python__need_walker(ctx);
}

static void py_detect(void *ctx, __u32 pid)
{
	python__detect(ctx, pid);
}

static void py_mapped(void *ctx, __u32 pid)
{
	python__mapped(ctx, pid);
}

static void py_exec(void *ctx, __u32 pid)
{
	python__exec(ctx, pid);
}

static void py_fork(void *ctx, __u32 ppid, __u32 pid)
{
	python__fork(ctx, ppid, pid);
}

static bool py_waiting(void *ctx)
{
	return python__waiting(ctx);
}

static void py_forget(void *ctx, __u32 pid)
{
	python__forget(ctx, pid);
}

static void py_note(void *ctx, const void *note, size_t len)
{
	python__note(ctx, note, len);
}

static void py_settle(void *ctx, unsigned int timeout_ms)
{
	python__settle(ctx, timeout_ms);
}

static void py_reap(void *ctx)
{
	python__reap(ctx);
}

/*
 * Two words a frame (bpf/interp/python/pyframe.h), innermost first, after
 * a mark when the thread did not hold the GIL, and before one when frames
 * are missing (the walk stopped at its depth, or its outer frames were
 * lost).  At most MAX_STACK_DEPTH frames: the mark of missing frames takes
 * the last place if need be.  A frame keeps its code object's identity in
 * the top bits of its address and of its aux, the instruction's word:
 * python__resolve() names it by address and identity.
 */
static int py_decode(const __u64 *ips, int n, __u32 end, struct trace_frame *frames)
{
	bool cut = (end & INTERP_END_CUT) || ((end - 1) & (PY_END_NO_GIL - 1)) == PY_END_DEPTH;
	int nr = 0, max = MAX_STACK_DEPTH - cut;

	if (end & PY_END_NO_GIL)
		frames[nr++] = (struct trace_frame){ .addr = PY_MARK_NO_GIL, .kind = FRAME_NONE,
						     .flags = FRAME_INTERP_MARK };
	for (int i = 0; i + 1 < n && nr < max; i += 2)
		frames[nr++] = (struct trace_frame){
			.addr = ips[i], .aux = ips[i + 1], .kind = FRAME_INTERP,
			.flags = ips[i + 1] & PY_WORD_ENTRY ? FRAME_INTERP_ENTRY : 0 };
	/* Deeper than the walk goes: say so where the frames are missing. */
	if (cut)
		frames[nr++] = (struct trace_frame){ .addr = PY_MARK_CUT, .kind = FRAME_NONE,
						     .flags = FRAME_INTERP_MARK };
	return nr;
}

static void py_resolve(void *ctx, __u32 pid, struct frame *f)
{
	python__resolve(ctx, pid, f);
}

static const char *py_mark_name(__u64 mark)
{
	switch (mark) {
	case PY_MARK_NO_GIL:
		return "[GIL released]";
	case PY_MARK_CUT:
		return "[python: more frames]";
	case INTERP_MARK_UNALIGNED:
		return "[python: unaligned]";
	default:
		return NULL;
	}
}

/* The native frame of CPython's evaluation loop: one per C-level call. */
static bool py_is_eval_frame(const struct frame *f)
{
	return f->kind == FRAME_NATIVE && f->name && !strcmp(f->name, "_PyEval_EvalFrameDefault");
}

/*
 * python -X perf: each Python function is called through a trampoline of
 * its own, named "py::QUALNAME:FILE" in /tmp/perf-PID.map; the Python
 * frame it calls stands there already.
 */
static bool py_is_shim_frame(const struct frame *f)
{
	return f->kind == FRAME_JIT && f->name && !strncmp(f->name, "py::", 4);
}

static const char *const py_end_names[NR_PY_ENDS] = {
	[PY_END_ROOT] = "root", [PY_END_DEPTH] = "depth",
	[PY_END_NO_THREAD] = "no thread state", [PY_END_NO_FRAME] = "no frame",
	[PY_END_THREADS] = "threads", [PY_END_UNREADABLE] = "unreadable",
	[PY_END_BAD_FRAME] = "bad frame",
};

static void py_report_verbose(struct python *py, const __u64 *c)
{
	struct python_stats st = {};
	char ends[256];
	size_t off = 0;

	python__stats(py, &st);
	pr_info("python: %llu processes (%llu of an unsupported version), %llu walks, %llu frames, %llu walks without the GIL; code objects: %llu named, %llu unreadable, %llu made anew before read, %llu over the memory budget; new stacks: %llu sent, %llu failed; %llu requests (new stacks, forks) dropped",
		(unsigned long long)st.procs, (unsigned long long)st.unsupported,
		(unsigned long long)c[PY_CNT_WALKS], (unsigned long long)c[PY_CNT_FRAMES],
		(unsigned long long)c[PY_CNT_NO_GIL], (unsigned long long)st.codes,
		(unsigned long long)st.code_errors, (unsigned long long)st.code_changed,
		(unsigned long long)st.over_budget,
		(unsigned long long)c[INTERP_CNT_NOTES], (unsigned long long)c[INTERP_CNT_NOTE_ERR],
		(unsigned long long)st.dropped);
	pr_info("python: %llu looks dropped: their process exec'd while read; %llu looks found a process waiting for its libpython; %llu processes found as their parent's fork",
		(unsigned long long)st.exec_raced, (unsigned long long)st.waits,
		(unsigned long long)st.inherited);
	for (unsigned int e = 0; e < NR_PY_ENDS && off < sizeof(ends); e++)
		off += snprintf(ends + off, sizeof(ends) - off, "%s%s %llu", e ? ", " : "",
				py_end_names[e], (unsigned long long)c[PY_CNT_END + e]);
	pr_info("python ends: %s", ends);
	python__report(py, REPORT_STATS);
}

/* Once, whatever the verbosity: Python we could not read. */
static void py_warn(struct python *py)
{
	struct python_stats st;

	python__stats(py, &st);
	if (st.unsupported)
		pr_warn("python: %s is not a version profile can read (%llu processes); their stacks show native frames only",
			st.unsupported_first, (unsigned long long)st.unsupported);
	python__report(py, REPORT_WARN);
}

static void py_report(void *ctx, const __u64 *counters, enum report_pass pass)
{
	if (!ctx)
		return;
	if (pass == REPORT_STATS)
		py_report_verbose(ctx, counters);
	else
		py_warn(ctx);
	python__report_share(ctx, pass);
}

const struct interp_ops python_interp = {
	.name = "python",
	.kind = PY_KIND,
	.configure = py_configure,
	.start = py_start,
	.free = py_free,
	.wants_mapping = py_wants_mapping,
	.detect = py_detect,
	.mapped = py_mapped,
	.seen = py_seen,
	.exec = py_exec,
	.fork = py_fork,
	.forget = py_forget,
	.waiting = py_waiting,
	.note = py_note,
	.settle = py_settle,
	.reap = py_reap,
	.decode = py_decode,
	.resolve = py_resolve,
	.mark_name = py_mark_name,
	.is_eval_frame = py_is_eval_frame,
	.is_shim_frame = py_is_shim_frame,
	.report = py_report,
};
