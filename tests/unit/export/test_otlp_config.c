// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --otlp's configuration from the URL and the OTEL_* variables: the URL
 * each form gives, headers and resource attributes decoded, the
 * _PROFILES_ forms winning, and every malformed value refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "unit.h"
#include "export/otlp_config.h"
#include "lib/log.h"

static const char *const vars[] = {
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_PROFILES_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL",
	"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME",
};

static void clear_env(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* The URL c gets from url and the environment set before; NULL on error. */
static char *url_of(const char *url)
{
	struct otlp_config c;
	char *out;

	if (otlp_config__init(&c, url))
		return NULL;
	out = strdup(c.url);
	otlp_config__free(&c);
	return out;
}

#define CHECK_URL(arg, want)                                                 \
	do {                                                                 \
		char *_u = url_of(arg);                                      \
		CHECK_STR(_u, want);                                         \
		free(_u);                                                    \
	} while (0)

static const char *attr(const struct otlp_config *c, const char *key)
{
	for (size_t i = 0; i < c->nr_resource; i++)
		if (!strcmp(c->resource[i].key, key))
			return c->resource[i].value;
	return NULL;
}

TEST(defaults)
{
	struct otlp_config c;
	struct utsname u;

	clear_env();
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_STR(c.url, "http://localhost:4318/v1development/profiles");
	CHECK_INT(c.timeout_ms, 10000);
	CHECK(c.gzip);
	CHECK_INT(c.nr_headers, 0);
	CHECK(!c.ca_file && !c.client_cert && !c.client_key);
	CHECK_INT(c.queue_max, OTLP_QUEUE_DEFAULT);
	CHECK_INT(c.queue_max_bytes, OTLP_QUEUE_BYTES_DEFAULT);
	CHECK(!uname(&u));
	CHECK_STR(attr(&c, "host.name"), u.nodename);
	CHECK(!attr(&c, "service.name"));
	otlp_config__free(&c);
}

TEST(url_forms)
{
	clear_env();
	/* A base gets the profiles path; a URL with a path is taken whole. */
	CHECK_URL("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1development/profiles");
	CHECK_URL("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1development/profiles");
	CHECK_URL("https://otel.example:443/custom/path", "https://otel.example:443/custom/path");
	CHECK_URL("http://[::1]:4318", "http://[::1]:4318/v1development/profiles");
	CHECK_URL("http://collector", "http://collector/v1development/profiles");

	/* The general variable is a base, the signal's own a whole URL. */
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://gen:4318/", 1);
	CHECK_URL(NULL, "http://gen:4318/v1development/profiles");
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://own:9/p", 1);
	CHECK_URL(NULL, "http://own:9/p");
	/* --otlp=URL wins over both. */
	CHECK_URL("http://opt:1", "http://opt:1/v1development/profiles");
	clear_env();
}

TEST(bad_urls)
{
	static const char *const bad[] = {
		"ftp://host:21", "localhost:4318", "http://", "http://:4318",
		"http://host:port", "http://host:0", "http://host:65536",
		"http://host:4318 x", "http://[::1", "http://[]:1", "",
		/* userinfo: refused, so that no message echoes a password. */
		"https://token@host:4318", "http://user:pw@host:4318/p", "http://u@[::1]:1",
	};

	clear_env();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *u = url_of(bad[i]);

		if (u)
			fprintf(stderr, "  accepted '%s' as %s\n", bad[i], u);
		CHECK(!u);
		free(u);
	}
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "grpc://x:4317", 1);
	CHECK(!url_of(NULL));
	clear_env();
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "nonsense", 1);
	CHECK(!url_of(NULL));
	clear_env();
}

/* What messages show of a URL: no userinfo, no query. */
TEST(redact)
{
	static const char *const cases[][2] = {
		{ "http://h:4318/v1development/profiles", "http://h:4318/v1development/profiles" },
		{ "https://u:s3cr3t@h:1/p", "https://***@h:1/p" },
		{ "https://u:p@ss@h", "https://***@h" },
		{ "http://h/p?token=s3cr3t&x=1", "http://h/p?***" },
		{ "http://u@h?t=1", "http://***@h?***" },
		{ "http://h/p@x", "http://h/p@x" },
		{ "http://[::1]:9/p#f", "http://[::1]:9/p#f" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = otlp_url__redact(cases[i][0]);

		CHECK(got != NULL);
		if (got)
			CHECK_STR(got, cases[i][1]);
		free(got);
	}
}

/* The shown URL is kept beside the URL curl is given, the query hidden. */
TEST(shown_url)
{
	struct otlp_config c;

	clear_env();
	CHECK_INT(otlp_config__init(&c, "http://h:4318/v1development/profiles?key=s3cr3t"), 0);
	CHECK_STR(c.url, "http://h:4318/v1development/profiles?key=s3cr3t");
	CHECK_STR(c.shown_url, "http://h:4318/v1development/profiles?***");
	otlp_config__free(&c);
	clear_env();
}

TEST(headers)
{
	struct otlp_config c;

	clear_env();
	setenv("OTEL_EXPORTER_OTLP_HEADERS",
	       " Authorization = Basic%20dXNlcjpwYXNz , X-Scope-OrgID=tenant%2C1,,empty=", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_INT(c.nr_headers, 3);
	CHECK_STR(c.headers[0], "Authorization: Basic dXNlcjpwYXNz");
	CHECK_STR(c.headers[1], "X-Scope-OrgID: tenant,1");
	CHECK_STR(c.headers[2], "empty: ");
	otlp_config__free(&c);

	/* The _PROFILES_ form replaces the general one. */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "a=1", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_INT(c.nr_headers, 1);
	CHECK_STR(c.headers[0], "a: 1");
	otlp_config__free(&c);
	clear_env();
}

TEST(bad_headers)
{
	static const char *const bad[] = {
		"novalue",		/* no '=' */
		"=v",			/* no key */
		"a b=c",		/* a space in the name */
		"a=%zz",		/* a broken escape */
		"a=%4",			/* cut short */
		"a=x%0d%0aEvil: 1",	/* a forged header */
		"a=%00",		/* a NUL */
		"k:=v",			/* a separator in the name */
	};
	struct otlp_config c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		clear_env();
		setenv("OTEL_EXPORTER_OTLP_HEADERS", bad[i], 1);
		if (!otlp_config__init(&c, NULL)) {
			fprintf(stderr, "  accepted headers '%s'\n", bad[i]);
			CHECK(0);
			otlp_config__free(&c);
		}
	}
	clear_env();
}

TEST(resource)
{
	struct otlp_config c;

	clear_env();
	setenv("OTEL_RESOURCE_ATTRIBUTES",
	       "deployment.environment=prod,service.name=from-attrs,note=a%20b%3Dc,host.name=h1", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_STR(attr(&c, "deployment.environment"), "prod");
	CHECK_STR(attr(&c, "service.name"), "from-attrs");
	CHECK_STR(attr(&c, "note"), "a b=c");
	/* The user's host.name is kept, not replaced by uname's. */
	CHECK_STR(attr(&c, "host.name"), "h1");
	CHECK_INT(c.nr_resource, 4);
	otlp_config__free(&c);

	/* OTEL_SERVICE_NAME wins over the attributes' service.name. */
	setenv("OTEL_SERVICE_NAME", "svc", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_STR(attr(&c, "service.name"), "svc");
	CHECK_INT(c.nr_resource, 4);
	otlp_config__free(&c);

	setenv("OTEL_RESOURCE_ATTRIBUTES", "ok=1,broken", 1);
	CHECK(otlp_config__init(&c, NULL) == -EINVAL);
	setenv("OTEL_RESOURCE_ATTRIBUTES", "k=%g1", 1);
	CHECK(otlp_config__init(&c, NULL) == -EINVAL);
	clear_env();
}

TEST(timeout_compression_files)
{
	struct otlp_config c;

	clear_env();
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", 1);
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "none", 1);
	setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "/dev/null", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_INT(c.timeout_ms, 2500);
	CHECK(!c.gzip);
	CHECK_STR(c.ca_file, "/dev/null");
	otlp_config__free(&c);

	/* _PROFILES_ forms win. */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "700", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "gzip", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	CHECK_INT(c.timeout_ms, 700);
	CHECK(c.gzip);
	otlp_config__free(&c);
	clear_env();

	static const char *const bad_timeouts[] = { "0", "-1", "10s", "", "99999999999" };
	for (size_t i = 0; i < sizeof(bad_timeouts) / sizeof(bad_timeouts[0]); i++) {
		setenv("OTEL_EXPORTER_OTLP_TIMEOUT", bad_timeouts[i], 1);
		/* An empty variable is as good as unset. */
		CHECK_INT(otlp_config__init(&c, NULL) == 0, !bad_timeouts[i][0]);
		if (!bad_timeouts[i][0])
			otlp_config__free(&c);
	}
	clear_env();
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", 1);
	CHECK(otlp_config__init(&c, NULL) == -EINVAL);
	clear_env();
	setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/nonexistent/key.pem", 1);
	CHECK(otlp_config__init(&c, NULL) == -EINVAL);
	clear_env();
}

/* Only http/protobuf: grpc and http/json are refused at start. */
TEST(protocol)
{
	struct otlp_config c;

	clear_env();
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	otlp_config__free(&c);
	static const char *const bad[] = { "grpc", "http/json", "HTTP", "http" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("OTEL_EXPORTER_OTLP_PROTOCOL", bad[i], 1);
		CHECK(otlp_config__init(&c, NULL) == -EINVAL);
	}
	/* The _PROFILES_ form wins, both ways. */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "http/protobuf", 1);
	CHECK_INT(otlp_config__init(&c, NULL), 0);
	otlp_config__free(&c);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "grpc", 1);
	CHECK(otlp_config__init(&c, NULL) == -EINVAL);
	clear_env();
}

int main(void)
{
	/* The refusals print their one line; the checks are on the answers. */
	log__set_verbosity(-1);
	RUN(defaults);
	RUN(url_forms);
	RUN(bad_urls);
	RUN(redact);
	RUN(shown_url);
	RUN(headers);
	RUN(bad_headers);
	RUN(resource);
	RUN(timeout_compression_files);
	RUN(protocol);
	return unit_summary();
}
