/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where --otlp sends profiles and how: from the option's URL and the
 * OpenTelemetry environment variables (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT, ..._HEADERS, ..._TIMEOUT,
 * ..._COMPRESSION, ..._CERTIFICATE, ..._CLIENT_KEY,
 * ..._CLIENT_CERTIFICATE, ..._PROTOCOL (http/protobuf only), each with
 * its _PROFILES_ form taking precedence,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), read once at start.
 */
#ifndef EXPORT_OTLP_CONFIG_H
#define EXPORT_OTLP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A string attribute. */
struct otlp_attr {
	const char *key;
	const char *value;
};

#define OTLP_MAX_HEADERS 32
#define OTLP_MAX_RESOURCE 64

/* Default queue bound: profiles waiting to be sent, and their bytes. */
#define OTLP_QUEUE_DEFAULT 60
#define OTLP_QUEUE_BYTES_DEFAULT (64u << 20)

struct otlp_config {
	char *url;			/* the profiles URL, path included */
	char *shown_url;		/* url for messages: its query hidden */
	char *headers[OTLP_MAX_HEADERS];	/* "Name: value" */
	size_t nr_headers;
	unsigned int timeout_ms;	/* one request; default 10000 */
	bool gzip;			/* default true */
	char *ca_file, *client_cert, *client_key;	/* NULL: system defaults */
	size_t queue_max;		/* profiles; --otlp-queue */
	size_t queue_max_bytes;
	struct otlp_attr resource[OTLP_MAX_RESOURCE];	/* service.name, host.name, ... */
	size_t nr_resource;
};

/*
 * Fill c from url (--otlp=URL; NULL: the environment's, else
 * http://localhost:4318/v1development/profiles) and the environment.  A
 * malformed variable is an error naming it.  0 or -errno (reported).
 */
int otlp_config__init(struct otlp_config *c, const char *url);
void otlp_config__free(struct otlp_config *c);

/*
 * url as messages show it: userinfo ("user:password@") and the query
 * (which may carry a token) replaced by "***".  Malloc'd; NULL + errno.
 */
char *otlp_url__redact(const char *url);

#endif /* EXPORT_OTLP_CONFIG_H */
