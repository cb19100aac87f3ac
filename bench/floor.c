// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * floor: load floor.bpf.o and run it on a cpu-clock perf event on every
 * online CPU at HZ for SECONDS, then exit.  bench/run reads the program's
 * run_cnt and run_time_ns (kernel.bpf_stats_enabled) to get the floor cost
 * of a sample.
 *
 *   floor OBJ HZ SECONDS
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int ncpu, n = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: floor OBJ HZ SECONDS\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "floor: cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "floor_sample");
	ncpu = libbpf_num_possible_cpus();
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_freq = atoi(argv[2]),
			.freq = 1,
		};
		int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			continue;	/* offline CPU */
		if (!bpf_program__attach_perf_event(prog, fd)) {
			fprintf(stderr, "floor: cannot attach on CPU %d: %s\n", cpu, strerror(errno));
			return 1;
		}
		n++;
	}
	if (!n) {
		fprintf(stderr, "floor: no CPU to sample on\n");
		return 1;
	}
	sleep(atoi(argv[3]));
	return 0;
}
