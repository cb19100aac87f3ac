// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The -v CPU line (lib/cputime.h): a worker's threads, a thread that has
 * ended and a section of the main thread each get their part, in the
 * order they were declared, and the parts add up to getrusage's total.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "lib/cputime.h"
#include "lib/log.h"
#include "lib/worker.h"

#define BURN_NS 20000000ULL	/* 20 ms of CPU */

static void burn(void)
{
	__u64 t0 = cputime__now();
	volatile unsigned long x = 0;

	while (cputime__now() - t0 < BURN_NS)
		x++;
}

static void job(void *ctx, unsigned int thread, void *req)
{
	(void)ctx, (void)thread, (void)req;
	burn();
}

static void *ended(void *arg)
{
	(void)arg;
	cputime__thread_start("ended");
	burn();
	cputime__thread_end();
	return NULL;
}

/* The -v line cputime__report() writes, captured from stderr. */
static char *report(void)
{
	char path[] = "/tmp/test_cputime.XXXXXX";
	static char out[1024];
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	if (fd < 0 || saved < 0)
		return NULL;
	unlink(path);
	log__set_verbosity(1);
	fflush(stderr);
	dup2(fd, 2);
	cputime__report();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	log__set_verbosity(0);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	return out;
}

/* The ms of part in line ("..., part 12.3 ms, ..."); -1 if it is not there. */
static double part_ms(const char *line, const char *part)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s ", part);
	p = strstr(line, key);
	return p ? atof(p + strlen(key)) : -1;
}

TEST(parts_add_up)
{
	struct worker_opts wo = { .threads = 2, .req_size = 1, .queue_max = 4, .job = job,
				  .name = "burners" };
	struct worker *w = worker__new(&wo);
	double total, sum, burners, main_part, gone;
	__u64 t0 = cputime__now();
	pthread_t t;
	char req = 0, *line, *p;

	CHECK(w != NULL);
	if (!w)
		return;
	CHECK(!worker__push(w, &req) && !worker__push(w, &req));
	CHECK(!pthread_create(&t, NULL, ended, NULL) && !pthread_join(t, NULL));
	burn();
	cputime__section("main part", t0);
	CHECK(!worker__settle(w, 10000));
	line = report();
	worker__free(w);
	CHECK(line && !strncmp(line, "profile: CPU: ", 14));
	if (!line)
		return;
	printf("# %s", line);
	total = atof(line + 14);
	p = strstr(line, "; parts add up to ");
	CHECK(p != NULL);
	sum = p ? atof(p + 18) : 0;
	burners = part_ms(line, "burners");
	gone = part_ms(line, "ended");
	main_part = part_ms(line, "main part");
	/* Two jobs of 20 ms, one thread of 20 ms, a section of 20 ms. */
	CHECK(burners >= 40 && burners < 60);
	CHECK(gone >= 20 && gone < 30);
	CHECK(main_part >= 20 && main_part < 30);
	CHECK(strstr(line, "burners") < strstr(line, "ended"));
	CHECK(strstr(line, "main thread's rest ") != NULL);
	CHECK(sum >= 80 && total >= 80);
	CHECK(sum - total < 5 && total - sum < 5);
}

int main(void)
{
	RUN(parts_add_up);
	return unit_summary();
}
