// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OpenTelemetry exporter variables, as the specification's "OTLP
 * Exporter Configuration" and "Resource SDK" pages define them: every
 * OTEL_EXPORTER_OTLP_X has an OTEL_EXPORTER_OTLP_PROFILES_X that wins when
 * set; lists are "key=value,key=value" with percent-encoded values (the
 * W3C baggage form).  A variable that is set but cannot be understood
 * stops the run: sending somewhere else than the user meant, or without
 * the credentials they gave, would be worse.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "export/otlp_config.h"
#include "lib/log.h"

#define PROFILES_PATH "/v1development/profiles"
#define DEFAULT_URL "http://localhost:4318" PROFILES_PATH
#define DEFAULT_TIMEOUT_MS 10000

/* The _PROFILES_ form of OTEL_EXPORTER_OTLP_<what>, else the general one. */
static const char *otlp_env(const char *what, const char **name)
{
	/* Static text, so that *name outlives the call. */
	static const char *const names[][2] = {
		{ "OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS" },
		{ "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT" },
		{ "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION" },
		{ "OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE" },
		{ "OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY" },
		{ "OTEL_EXPORTER_OTLP_PROFILES_CLIENT_CERTIFICATE",
		  "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE" },
		{ "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL" },
	};
	size_t plen = strlen("OTEL_EXPORTER_OTLP_PROFILES_");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(names[i][0] + plen, what))
			continue;
		for (int j = 0; j < 2; j++) {
			const char *v = getenv(names[i][j]);

			if (v && *v) {
				*name = names[i][j];
				return v;
			}
		}
		return NULL;
	}
	return NULL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * s[0..n) with %XX decoded and spaces around it trimmed, in a fresh
 * string; NULL with errno EINVAL for a broken escape or a decoded NUL.
 */
static char *decode(const char *s, size_t n)
{
	char *out, *o;

	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	out = o = malloc(n + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		hi = i + 2 < n ? hexval(s[i + 1]) : -1;
		lo = hi >= 0 ? hexval(s[i + 2]) : -1;
		if (lo < 0 || (hi == 0 && lo == 0)) {
			free(out);
			errno = EINVAL;
			return NULL;
		}
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return out;
}

/* An HTTP header name or attribute key: a token, no spaces or separators. */
static bool is_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f ||
		    strchr("()<>@,;:\\\"/[]?={}", *s))
			return false;
	return true;
}

typedef int (*pair_fn)(void *ctx, char *key, char *value);

/*
 * What names item n of a malformed list in a message: its key when one
 * can be told (up to '=' or ':', when that is a token), never its value,
 * which may be a credential ("Authorization: Bearer ..." is a common
 * slip for "Authorization=Bearer ...").
 */
static void item_name(const char *item, size_t len, unsigned int n, char *out, size_t sz)
{
	size_t skip = strspn(item, " \t"), klen;
	char key[64];

	item += skip;
	len = skip < len ? len - skip : 0;
	klen = strcspn(item, "=:");
	if (klen > len)
		klen = len;
	while (klen && (item[klen - 1] == ' ' || item[klen - 1] == '\t'))
		klen--;
	if (klen < len && klen && klen < sizeof(key)) {
		memcpy(key, item, klen);
		key[klen] = '\0';
		if (is_token(key)) {
			snprintf(out, sz, "item %u (key '%s')", n, key);
			return;
		}
	}
	snprintf(out, sz, "item %u", n);
}

/*
 * "k=v,k2=v2" (spaces around items allowed, empty items skipped), each
 * pair given to fn, which takes over key and value.  0 or -errno, a
 * malformed list reported with the variable's name and the item's place
 * (values are not shown).
 */
static int parse_pairs(const char *var, const char *list, pair_fn fn, void *ctx)
{
	const char *p = list;
	unsigned int n = 0;
	char what[96];

	while (*p) {
		size_t len = strcspn(p, ","), klen;
		const char *eq = memchr(p, '=', len);
		char *key, *value;
		int err;

		n++;
		if (strspn(p, " \t") >= len) {
			p += len + (p[len] == ',');
			continue;
		}
		item_name(p, len, n, what, sizeof(what));
		if (!eq) {
			pr_err("%s: %s is not KEY=VALUE (values are not shown); fix or unset the variable",
			       var, what);
			return -EINVAL;
		}
		klen = eq - p;
		key = decode(p, klen);
		value = key ? decode(eq + 1, len - klen - 1) : NULL;
		if (!key || !value) {
			err = errno == ENOMEM ? -ENOMEM : -EINVAL;
			free(key);
			if (err == -ENOMEM)
				pr_err("out of memory");
			else
				pr_err("%s: %s has a broken %%XX escape; fix or unset the variable",
				       var, what);
			return err;
		}
		if (!is_token(key)) {
			pr_err("%s: item %u's key is not a valid name (a token: no spaces, ':' or '/'); fix or unset the variable",
			       var, n);
			free(key);
			free(value);
			return -EINVAL;
		}
		err = fn(ctx, key, value);
		if (err)
			return err;
		p += len + (p[len] == ',');
	}
	return 0;
}

struct pair_ctx {
	struct otlp_config *c;
	const char *var;
};

static int add_header(void *ctx, char *key, char *value)
{
	struct pair_ctx *pc = ctx;
	struct otlp_config *c = pc->c;
	char *h = NULL;
	int err = -EINVAL;

	/* A decoded line break would let a value forge headers of its own. */
	if (strpbrk(value, "\r\n")) {
		pr_err("%s: the value of '%s' has a line break; fix or unset the variable",
		       pc->var, key);
		goto out;
	}
	if (c->nr_headers == OTLP_MAX_HEADERS) {
		pr_err("%s: more than %d headers; give fewer", pc->var, OTLP_MAX_HEADERS);
		goto out;
	}
	if (asprintf(&h, "%s: %s", key, value) < 0) {
		pr_err("out of memory");
		err = -ENOMEM;
		goto out;
	}
	c->headers[c->nr_headers++] = h;
	err = 0;
out:
	free(key);
	free(value);
	return err;
}

static struct otlp_attr *find_attr(struct otlp_config *c, const char *key)
{
	for (size_t i = 0; i < c->nr_resource; i++)
		if (!strcmp(c->resource[i].key, key))
			return &c->resource[i];
	return NULL;
}

/* key and value taken over; a key given again replaces its value. */
static int set_attr(struct otlp_config *c, const char *var, char *key, char *value)
{
	struct otlp_attr *a = find_attr(c, key);

	if (a) {
		free(key);
		free((char *)a->value);
		a->value = value;
		return 0;
	}
	if (c->nr_resource == OTLP_MAX_RESOURCE) {
		pr_err("%s: more than %d attributes; give fewer", var, OTLP_MAX_RESOURCE);
		free(key);
		free(value);
		return -EINVAL;
	}
	c->resource[c->nr_resource++] = (struct otlp_attr){ .key = key, .value = value };
	return 0;
}

static int add_resource(void *ctx, char *key, char *value)
{
	struct pair_ctx *pc = ctx;

	return set_attr(pc->c, pc->var, key, value);
}

/* The fixed attribute key = value (both copied), unless already given. */
static int default_attr(struct otlp_config *c, const char *key, const char *value,
			bool replace)
{
	char *k, *v;

	if (!replace && find_attr(c, key))
		return 0;
	k = strdup(key);
	v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		pr_err("out of memory");
		return -ENOMEM;
	}
	return set_attr(c, "OTEL_RESOURCE_ATTRIBUTES", k, v);
}

static int read_resource(struct otlp_config *c)
{
	struct pair_ctx pc = { .c = c, .var = "OTEL_RESOURCE_ATTRIBUTES" };
	const char *attrs = getenv("OTEL_RESOURCE_ATTRIBUTES");
	const char *service = getenv("OTEL_SERVICE_NAME");
	struct utsname u;
	int err = 0;

	if (attrs)
		err = parse_pairs(pc.var, attrs, add_resource, &pc);
	/* OTEL_SERVICE_NAME wins over a service.name in the attributes. */
	if (!err && service && *service)
		err = default_attr(c, "service.name", service, true);
	if (!err && !uname(&u) && u.nodename[0])
		err = default_attr(c, "host.name", u.nodename, false);
	return err;
}

/*
 * scheme://host[:port][/path]: http or https, a host, a port that is a
 * number.  Anything else is refused here rather than by curl at the first
 * interval.
 */
static bool valid_url(const char *url, const char **path)
{
	const char *host, *end, *port;

	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else
		return false;
	end = host + strcspn(host, "/?#");
	if (end == host || strpbrk(url, " \t\r\n"))
		return false;
	/* userinfo: refused, lest credentials be echoed in every message. */
	if (memchr(host, '@', end - host))
		return false;
	if (*host == '[') {
		const char *close = memchr(host, ']', end - host);

		if (!close || close == host + 1)
			return false;
		port = close + 1 < end ? close + 1 : NULL;
		if (port && *port != ':')
			return false;
	} else {
		port = memchr(host, ':', end - host);
		if (port == host)
			return false;
	}
	if (port) {
		size_t digits = end - port - 1;

		if (!digits || digits > 5 || strspn(port + 1, "0123456789") < digits ||
		    atoi(port + 1) < 1 || atoi(port + 1) > 65535)
			return false;
	}
	*path = end;
	return true;
}

/* url with PROFILES_PATH appended, its own '/' dropped if it ends in one. */
static int join_url(struct otlp_config *c, const char *url)
{
	size_t n = strlen(url);

	while (n && url[n - 1] == '/')
		n--;
	return asprintf(&c->url, "%.*s%s", (int)n, url, PROFILES_PATH) < 0 ? -ENOMEM : 0;
}

char *otlp_url__redact(const char *url)
{
	const char *host = strstr(url, "://");
	const char *end, *at, *query;
	char *out;

	host = host ? host + 3 : url;
	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', end - host);
	/* The last '@' ends the userinfo: a password may hold one too. */
	while (at && memchr(at + 1, '@', end - at - 1))
		at = memchr(at + 1, '@', end - at - 1);
	query = strchr(end, '?');
	if (asprintf(&out, "%.*s%s%.*s%s", (int)(host - url), url, at ? "***@" : "",
		     (int)((query ? query : end + strlen(end)) - (at ? at + 1 : host)),
		     at ? at + 1 : host, query ? "?***" : "") < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

static int url_error(const char *what, const char *url)
{
	char *shown = otlp_url__redact(url);

	if (shown && strcmp(shown, url) && strchr(shown, '@'))
		pr_err("%s '%s': a user or password in the URL is not supported; "
		       "give credentials in OTEL_EXPORTER_OTLP_HEADERS", what, shown);
	else
		pr_err("%s '%s' is not an http:// or https:// URL (http://HOST:PORT[/PATH]); fix it",
		       what, shown ? shown : "(out of memory)");
	free(shown);
	return -EINVAL;
}

/*
 * --otlp=URL: the profiles URL, or a base (no path) to which the profiles
 * path is added.  Without it, the signal's own variable is the whole URL,
 * and the general one a base, as the specification says.
 */
static int settle_url(struct otlp_config *c, const char *url)
{
	const char *own = getenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT");
	const char *base = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	const char *path;
	int err;

	if (url) {
		if (!valid_url(url, &path))
			return url_error("--otlp", url);
		err = path[strspn(path, "/")] ? (c->url = strdup(url)) ? 0 : -ENOMEM :
		      join_url(c, url);
	} else if (own && *own) {
		if (!valid_url(own, &path))
			return url_error("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", own);
		err = (c->url = strdup(own)) ? 0 : -ENOMEM;
	} else if (base && *base) {
		if (!valid_url(base, &path))
			return url_error("OTEL_EXPORTER_OTLP_ENDPOINT", base);
		err = join_url(c, base);
	} else {
		err = (c->url = strdup(DEFAULT_URL)) ? 0 : -ENOMEM;
	}
	if (!err && !(c->shown_url = otlp_url__redact(c->url)))
		err = -ENOMEM;
	if (err)
		pr_err("out of memory");
	return err;
}

static int read_timeout(struct otlp_config *c)
{
	const char *var, *v = otlp_env("TIMEOUT", &var);
	unsigned long ms;
	char *end;

	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (!v)
		return 0;
	errno = 0;
	ms = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)*v) || errno || *end || ms < 1 || ms > 3600000) {
		pr_err("%s '%s' is not a timeout in milliseconds in [1, 3600000]; fix or unset it",
		       var, v);
		return -EINVAL;
	}
	c->timeout_ms = ms;
	return 0;
}

static int read_compression(struct otlp_config *c)
{
	const char *var, *v = otlp_env("COMPRESSION", &var);

	c->gzip = true;
	if (!v || !strcmp(v, "gzip"))
		return 0;
	if (!strcmp(v, "none")) {
		c->gzip = false;
		return 0;
	}
	pr_err("%s '%s' is not one of gzip, none; fix or unset it", var, v);
	return -EINVAL;
}

/*
 * profile speaks OTLP/HTTP with protobuf bodies only.  A fleet set up for
 * gRPC (often with port 4317) would otherwise get HTTP POSTs to a gRPC
 * port and an obscure error retried for ever: say so at start.
 */
static int read_protocol(void)
{
	const char *var, *v = otlp_env("PROTOCOL", &var);

	if (!v || !strcmp(v, "http/protobuf"))
		return 0;
	if (!strcmp(v, "grpc"))
		pr_err("%s is grpc: profile sends OTLP/HTTP only; set it to http/protobuf (or unset it) and use the collector's OTLP/HTTP port (4318)",
		       var);
	else if (!strcmp(v, "http/json"))
		pr_err("%s is http/json: profile sends protobuf bodies only; set it to http/protobuf or unset it",
		       var);
	else
		pr_err("%s '%s' is not http/protobuf (the only protocol profile sends); fix or unset it",
		       var, v);
	return -EINVAL;
}

/* A file the TLS setup needs: it must be readable now, not at the first send. */
static int read_file_var(const char *what, char **out)
{
	const char *var, *v = otlp_env(what, &var);

	if (!v)
		return 0;
	if (access(v, R_OK)) {
		pr_err("%s '%s': %s; fix or unset the variable", var, v, strerror(errno));
		return -EINVAL;
	}
	*out = strdup(v);
	if (!*out) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int otlp_config__init(struct otlp_config *c, const char *url)
{
	struct pair_ctx pc = { .c = c };
	const char *headers;
	int err;

	memset(c, 0, sizeof(*c));
	c->queue_max = OTLP_QUEUE_DEFAULT;
	c->queue_max_bytes = OTLP_QUEUE_BYTES_DEFAULT;
	err = read_protocol();
	if (!err)
		err = settle_url(c, url);
	if (!err)
		err = read_timeout(c);
	if (!err)
		err = read_compression(c);
	if (!err)
		err = read_file_var("CERTIFICATE", &c->ca_file);
	if (!err)
		err = read_file_var("CLIENT_CERTIFICATE", &c->client_cert);
	if (!err)
		err = read_file_var("CLIENT_KEY", &c->client_key);
	headers = otlp_env("HEADERS", &pc.var);
	if (!err && headers)
		err = parse_pairs(pc.var, headers, add_header, &pc);
	if (!err)
		err = read_resource(c);
	if (err)
		otlp_config__free(c);
	return err;
}

void otlp_config__free(struct otlp_config *c)
{
	free(c->url);
	free(c->shown_url);
	for (size_t i = 0; i < c->nr_headers; i++)
		free(c->headers[i]);
	for (size_t i = 0; i < c->nr_resource; i++) {
		free((char *)c->resource[i].key);
		free((char *)c->resource[i].value);
	}
	free(c->ca_file);
	free(c->client_cert);
	free(c->client_key);
	memset(c, 0, sizeof(*c));
}
