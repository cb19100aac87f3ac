// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * -o files: written to a 0600 temporary file and renamed over the target
 * on commit; abort leaves the target as it was and no temporary file.
 * (The hostile-user cases, with root and nobody, are in t32-output-files.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "unit.h"
#include "output/outfile.h"

static char dir[64];

static void path_of(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", dir, name);
}

static void put(const char *name, const char *text)
{
	char p[128];
	FILE *f;

	path_of(p, sizeof(p), name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The file's whole text ("" when missing), in a static buffer. */
static const char *text_of(const char *path)
{
	static char buf[256];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static const char *text(const char *name)
{
	char p[128];

	path_of(p, sizeof(p), name);
	return text_of(p);
}

/* How many entries the directory holds. */
static int entries(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void empty_dir(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	char p[512];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
}

static struct stat lstat_of(const char *name)
{
	struct stat st = {};
	char p[128];

	path_of(p, sizeof(p), name);
	CHECK_INT(lstat(p, &st), 0);
	return st;
}

TEST(new_file_is_0600_and_appears_on_commit)
{
	struct outfile of;
	char p[128];

	empty_dir();
	path_of(p, sizeof(p), "cpu.folded");
	CHECK_INT(outfile__open(&of, p), 0);
	CHECK(access(p, F_OK) != 0);		/* not there before the commit */
	CHECK(!strncmp(of.tmp, ".cpu.folded" OUTFILE_TMP_TAG, 20));
	CHECK_INT(strlen(of.tmp), strlen(".cpu.folded" OUTFILE_TMP_TAG) + 8);
	CHECK_INT(lstat_of(of.tmp).st_mode & 07777, 0600);
	fputs("a;b 1\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_STR(text("cpu.folded"), "a;b 1\n");
	CHECK_INT(lstat_of("cpu.folded").st_mode & 07777, 0600);
	CHECK_INT(entries(), 1);		/* no temporary file left */
	CHECK(of.f == NULL && of.name == NULL && of.dirfd == -1);
}

TEST(abort_keeps_the_old_file)
{
	struct outfile of;
	char p[128];
	ino_t ino;

	empty_dir();
	put("cpu.folded", "old 1\n");
	ino = lstat_of("cpu.folded").st_ino;
	path_of(p, sizeof(p), "cpu.folded");
	CHECK_INT(outfile__open(&of, p), 0);
	CHECK_INT(entries(), 2);
	fputs("new 1\n", of.f);
	fflush(of.f);
	CHECK_STR(text("cpu.folded"), "old 1\n");	/* nothing truncated yet */
	outfile__abort(&of);
	outfile__abort(&of);			/* twice is harmless */
	CHECK_STR(text("cpu.folded"), "old 1\n");
	CHECK_INT(lstat_of("cpu.folded").st_ino, ino);
	CHECK_INT(entries(), 1);
}

TEST(commit_replaces_the_file_with_a_new_inode)
{
	struct outfile of;
	char p[128];
	ino_t ino;

	empty_dir();
	put("cpu.folded", "old 1\n");
	path_of(p, sizeof(p), "cpu.folded");
	chmod(p, 0666);
	ino = lstat_of("cpu.folded").st_ino;
	CHECK_INT(outfile__open(&of, p), 0);
	fputs("new 1\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_STR(text("cpu.folded"), "new 1\n");
	CHECK(lstat_of("cpu.folded").st_ino != ino);
	CHECK_INT(lstat_of("cpu.folded").st_mode & 07777, 0600);
}

/* In a directory others may write to, a link is replaced, not followed. */
TEST(untrusted_link_is_replaced)
{
	char p[128], victim[128];
	struct outfile of;

	empty_dir();
	chmod(dir, 01777);
	put("victim", "secret\n");
	path_of(victim, sizeof(victim), "victim");
	path_of(p, sizeof(p), "cpu.folded");
	CHECK_INT(symlink(victim, p), 0);
	CHECK_INT(outfile__open(&of, p), 0);
	fputs("new 1\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_STR(text("victim"), "secret\n");
	CHECK(S_ISREG(lstat_of("cpu.folded").st_mode));
	CHECK_STR(text("cpu.folded"), "new 1\n");
	chmod(dir, 0700);
}

/* Our own link, in a directory only we write (like /dev/stdout): followed,
 * and the file it names cut to what was written. */
TEST(trusted_link_is_written_through)
{
	char p[128], target[128];
	struct outfile of;

	empty_dir();
	chmod(dir, 0700);
	put("target", "a much longer old text\n");
	path_of(target, sizeof(target), "target");
	path_of(p, sizeof(p), "link");
	CHECK_INT(symlink(target, p), 0);
	CHECK_INT(outfile__open(&of, p), 0);
	CHECK(of.in_place);
	fputs("new 1\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_STR(text("target"), "new 1\n");
	CHECK(S_ISLNK(lstat_of("link").st_mode));
	CHECK_INT(entries(), 2);
}

TEST(devices_are_written_in_place)
{
	struct outfile of;
	struct stat st;

	CHECK_INT(outfile__open(&of, "/dev/null"), 0);
	CHECK(of.in_place);
	CHECK(of.tmp[0] == '\0');
	fputs("x\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_INT(stat("/dev/null", &st), 0);
	CHECK(S_ISCHR(st.st_mode));

	CHECK_INT(outfile__open(&of, "/dev/full"), 0);
	fputs("x\n", of.f);
	CHECK_INT(outfile__commit(&of), -ENOSPC);
	CHECK_INT(stat("/dev/full", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
}

TEST(bad_paths)
{
	struct outfile of;
	char p[128];

	CHECK_INT(outfile__open(&of, "/nonexistent-dir-4a7e/cpu.folded"), -ENOENT);
	CHECK(of.name == NULL && of.f == NULL);
	snprintf(p, sizeof(p), "%s/", dir);
	CHECK_INT(outfile__open(&of, p), -EISDIR);
	snprintf(p, sizeof(p), "%s/..", dir);
	CHECK_INT(outfile__open(&of, p), -EISDIR);
	CHECK_INT(outfile__open(&of, dir), -EISDIR);
	CHECK_INT(outfile__open(&of, ""), -EISDIR);
}

/* A name as long as a name may be: the temporary one is cut, not refused. */
TEST(long_name)
{
	char name[NAME_MAX + 1], p[NAME_MAX + 80];
	struct outfile of;

	empty_dir();
	memset(name, 'n', NAME_MAX);
	name[NAME_MAX] = '\0';
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	CHECK_INT(outfile__open(&of, p), 0);
	CHECK(strlen(of.tmp) <= NAME_MAX);
	fputs("x 1\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_STR(text_of(p), "x 1\n");
}

/* A relative path: the directory is the current one. */
TEST(relative_path)
{
	struct outfile of;
	char cwd[256];

	empty_dir();
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_INT(chdir(dir), 0);
	CHECK_INT(outfile__open(&of, "rel.folded"), 0);
	fputs("r 1\n", of.f);
	CHECK_INT(outfile__commit(&of), 0);
	CHECK_STR(text_of("rel.folded"), "r 1\n");
	CHECK_INT(chdir(cwd), 0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_outfile.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(new_file_is_0600_and_appears_on_commit);
	RUN(abort_keeps_the_old_file);
	RUN(commit_replaces_the_file_with_a_new_inode);
	RUN(untrusted_link_is_replaced);
	RUN(trusted_link_is_written_through);
	RUN(devices_are_written_in_place);
	RUN(bad_paths);
	RUN(long_name);
	RUN(relative_path);
	empty_dir();
	rmdir(dir);
	return unit_summary();
}
