// SPDX-License-Identifier: GPL-2.0
/*
 * The export: destinations, batches and their ids, the TSV sink. The ClickHouse sink is in
 * clickhouse.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "export-int.h"

/* ---- destinations ---- */

static int bad_dest(const char *s, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad_dest(const char *s, char *err, size_t errlen, const char *fmt, ...)
{
	char what[200], shown[300];
	const char *scheme = strstr(s, "://"), *at, *colon;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* the message quotes the destination, but not its password */
	snprintf(shown, sizeof(shown), "%s", s);
	if (scheme && (at = strchr(scheme + 3, '@')) &&
	    (!strchr(scheme + 3, '/') || at < strchr(scheme + 3, '/')) &&
	    (colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3))) &&
	    (size_t)(colon - s) + 4 < sizeof(shown))
		snprintf(shown + (colon - s), sizeof(shown) - (size_t)(colon - s), ":***%s", at);
	snprintf(err, errlen, "bad destination '%s': %s", shown, what);
	return -EINVAL;
}

static int ipv6_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
	       c == ':' || c == '.';
}

static int host_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-' || c == '_';
}

/* Copy [p, end) into @out of @size bytes; 0, or -1 if it does not fit. */
static int copy_part(char *out, size_t size, const char *p, const char *end)
{
	if ((size_t)(end - p) >= size)
		return -1;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = 0;
	return 0;
}

static int parse_options(const char *s, const char *p, struct blk_export_dest *d, char *err,
			 size_t errlen)
{
	while (*p) {
		const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
		char opt[64];

		if (copy_part(opt, sizeof(opt), p, end))
			return bad_dest(s, err, errlen, "option '%.60s' is too long", p);
		if (!strcmp(opt, "distributed=1"))
			d->distributed = 1;
		else if (!strcmp(opt, "distributed=0"))
			d->distributed = 0;
		else
			return bad_dest(s, err, errlen,
					"unknown option '%s' (the only one is distributed=0|1)",
					opt);
		p = amp ? amp + 1 : end;
	}
	return 0;
}

static int parse_clickhouse(const char *s, struct blk_export_dest *d, char *err, size_t errlen)
{
	const char *p = strstr(s, "://") + 3, *slash = strchr(p, '/'), *at, *h, *hend;
	const char *db, *q;

	if (!slash)
		return bad_dest(s, err, errlen, "no database (clickhouse://HOST:PORT/DATABASE)");
	/* USER@ (the last '@' before the path ends it) */
	at = NULL;
	for (q = p; q < slash; q++)
		if (*q == '@')
			at = q;
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p)), *uend = colon ? colon : at;

		if (colon)
			return bad_dest(
				s, err, errlen,
				"a password in the destination is refused (it would show in 'ps'): give it in a file only you can read (--password-file FILE) or in CLICKHOUSE_PASSWORD");
		if (uend == p)
			return bad_dest(s, err, errlen, "empty user name before '@'");
		for (q = p; q < uend; q++)
			if (!host_char(*q))
				return bad_dest(s, err, errlen, "bad character '%c' in user name",
						*q);
		if (copy_part(d->user, sizeof(d->user), p, uend))
			return bad_dest(s, err, errlen, "user name too long");
		p = at + 1;
	}
	/* HOST, [IPV6] */
	if (*p == '[') {
		h = p + 1;
		hend = memchr(h, ']', (size_t)(slash - h));
		if (!hend)
			return bad_dest(s, err, errlen, "no ']' after the IPv6 address");
		for (q = h; q < hend; q++)
			if (!ipv6_char(*q))
				return bad_dest(s, err, errlen, "bad IPv6 address");
		p = hend + 1;
	} else {
		h = p;
		for (q = p; q < slash && *q != ':'; q++)
			if (!host_char(*q))
				return bad_dest(s, err, errlen,
						"bad character in host name (at '%.20s')", q);
		hend = q;
		p = q;
	}
	if (hend == h)
		return bad_dest(s, err, errlen, "no host (clickhouse://HOST:PORT/DATABASE)");
	if (copy_part(d->host, sizeof(d->host), h, hend))
		return bad_dest(s, err, errlen, "host name too long");
	d->port = d->tls ? BLK_EXPORT_CLICKHOUSES_PORT : BLK_EXPORT_CLICKHOUSE_PORT;
	if (p < slash) {
		char port[16];
		long v = 0;

		if (*p != ':' || copy_part(port, sizeof(port), p + 1, slash))
			return bad_dest(s, err, errlen, "bad port '%.20s'", p);
		for (q = port; *q && *q >= '0' && *q <= '9' && v <= 65535; q++)
			v = v * 10 + (*q - '0');
		if (!port[0] || *q || v < 1 || v > 65535)
			return bad_dest(s, err, errlen, "port '%s' is not a number from 1 to 65535",
					port);
		d->port = (int)v;
	}
	/* /DATABASE[?OPTIONS] */
	db = slash + 1;
	q = strchr(db, '?');
	if (copy_part(d->database, sizeof(d->database), db, q ? q : db + strlen(db)) ||
	    !blk_schema_ident_ok(d->database))
		return bad_dest(s, err, errlen,
				"database '%.64s' is not a name ([A-Za-z_][A-Za-z0-9_]*)",
				d->database[0] || !*db ? d->database : db);
	return q ? parse_options(s, q + 1, d, err, errlen) : 0;
}

int blk_export_dest_parse(const char *s, struct blk_export_dest *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	if (!s)
		s = "";
	if (!strncmp(s, "clickhouse://", 13) || !strncmp(s, "clickhouses://", 14)) {
		d->kind = BLK_EXPORT_CLICKHOUSE;
		d->tls = s[10] == 's';
		return parse_clickhouse(s, d, err, errlen);
	}
	if (!strncmp(s, "tsv:", 4)) {
		d->kind = BLK_EXPORT_TSV;
		if (!s[4])
			return bad_dest(s, err, errlen, "no directory (tsv:DIR)");
		if (strlen(s + 4) >= sizeof(d->dir) - 16)
			return bad_dest(s, err, errlen, "directory name too long");
		strcpy(d->dir, s + 4);
		return 0;
	}
	return bad_dest(s, err, errlen,
			"not clickhouse[s]://[USER@]HOST[:PORT]/DATABASE or tsv:DIR");
}

/* ---- ids ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return fnv(h, b, sizeof(b));
}

/* splitmix64's finaliser: every input bit reaches every output bit */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#define FNV_OFFSET 0xcbf29ce484222325ULL

/*
 * These ids are stored in the tables, and an export run again finds its batches by them:
 * they must never change (a unit test pins them). They are byte-order independent.
 */
static uint64_t export_id_of(const char *host, const char *trace_id)
{
	static const char tag[] = "blktrace-ng export 1";
	uint64_t h = fnv(FNV_OFFSET, tag, sizeof(tag));

	h = fnv(h, host, strlen(host) + 1);
	h = fnv(h, trace_id, strlen(trace_id));
	return mix(h);
}

_Static_assert(BLK_IO_BATCH_ID == BLK_IO_NCOLS - 1 && BLK_IO_EXPORT_ID == BLK_IO_NCOLS - 2,
	       "the ids end an io row");
_Static_assert(BLK_IOWAIT_BATCH_ID == BLK_IOWAIT_NCOLS - 1 &&
		       BLK_IOWAIT_EXPORT_ID == BLK_IOWAIT_NCOLS - 2,
	       "the ids end an iowait row");

/*
 * A batch's id names what it holds: its table, the batch limits (which decide where batches
 * end), its number, its first row's number and that row's values (those of the columns of
 * the first schema, id_cols: a trace exported before the columns added since makes the same
 * ids, and is found stored). An export run again with
 * the same rows and limits makes the same ids; any difference makes other ids, so a count of
 * rows with an id finds exactly the batch of that id, never a batch cut otherwise.
 */
static uint64_t batch_id_of(const struct blk_export *x, const struct export_batch *b,
			    const union blk_value *v)
{
	uint64_t h = fnv_u64(FNV_OFFSET, x->export_id);

	h = fnv(h, b->t->name, strlen(b->t->name) + 1);
	h = fnv_u64(h, x->o.batch_rows);
	h = fnv_u64(h, x->o.batch_bytes);
	h = fnv_u64(h, b->no);
	h = fnv_u64(h, b->first_row);
	for (unsigned int c = 0; c < b->t->id_cols; c++) {
		if (b->t->cols[c].type == BLK_COL_STRING) {
			h = fnv_u64(h, v[c].s.len);
			h = fnv(h, v[c].s.p, v[c].s.len);
		} else {
			h = fnv_u64(h, v[c].u);
		}
	}
	return mix(h);
}

uint64_t blk_export_id(const struct blk_export *x)
{
	return x->export_id;
}

/* ---- the TSV sink ---- */

static int tsv_write(struct blk_export *x, int i, const char *p, size_t n, char *err, size_t errlen)
{
	while (n) {
		ssize_t w = write(x->fd[i], p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			snprintf(err, errlen, "cannot write '%s': %s", x->tmp[i], strerror(e));
			return -e;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int tsv_open(struct blk_export *x, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(x->d.dir, 0755) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "cannot create directory '%s': %s", x->d.dir, strerror(e));
		return -e;
	}
	if (stat(x->d.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		int e = errno;

		if (!stat(x->d.dir, &st))
			e = ENOTDIR;
		snprintf(err, errlen, "cannot use '%s' as the export directory: %s", x->d.dir,
			 strerror(e));
		return -e;
	}
	for (int i = 0; i < BLK_TABLE_NR; i++) {
		const struct blk_table *t = blk_schema_table((enum blk_table_id)i);
		struct blk_strbuf head = BLK_STRBUF_INIT;
		int ret;

		if (asprintf(&x->path[i], "%s/%s.tsv", x->d.dir, t->name) < 0 ||
		    asprintf(&x->tmp[i], "%s/.%s.tsv.tmp", x->d.dir, t->name) < 0) {
			x->path[i] = x->tmp[i] = NULL;
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		x->fd[i] = open(x->tmp[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (x->fd[i] < 0) {
			int e = errno;

			snprintf(err, errlen, "cannot create '%s': %s", x->tmp[i], strerror(e));
			return -e;
		}
		blk_schema_table_names(&head, t, "\t");
		blk_strbuf_addch(&head, '\n');
		ret = tsv_write(x, i, head.buf, head.len, err, errlen);
		blk_strbuf_release(&head);
		if (ret)
			return ret;
	}
	return 0;
}

/* Close the files; with @keep, rename them into place. */
static int tsv_finish(struct blk_export *x, int keep, char *err, size_t errlen)
{
	int ret = 0;

	for (int i = 0; i < BLK_TABLE_NR; i++) {
		if (x->fd[i] >= 0 && close(x->fd[i]) < 0 && keep && !ret) {
			ret = -errno;
			snprintf(err, errlen, "cannot write '%s': %s", x->tmp[i], strerror(-ret));
		}
		x->fd[i] = -1;
	}
	for (int i = 0; i < BLK_TABLE_NR; i++) {
		if (!x->tmp[i])
			continue;
		if (keep && !ret && rename(x->tmp[i], x->path[i]) < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot rename '%s' to '%s': %s", x->tmp[i],
				 x->path[i], strerror(-ret));
		}
		if (!keep || ret)
			unlink(x->tmp[i]);
	}
	return ret;
}

/* ---- batches ---- */

static int fail(struct blk_export *x, int ret, const char *err)
{
	if (!x->error) {
		x->error = ret;
		snprintf(x->errmsg, sizeof(x->errmsg), "%s", err);
	}
	return ret;
}

static int failed(const struct blk_export *x, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", x->errmsg);
	return x->error;
}

/* Store batch @b (ClickHouse: hand it to the sender) and begin the next one. */
static int end_batch(struct blk_export *x, struct export_batch *b, char *err, size_t errlen)
{
	int ret;

	if (!b->nrows)
		return 0;
	if (x->d.kind == BLK_EXPORT_TSV) {
		ret = tsv_write(x, (int)b->table, b->raw.buf, b->raw.len, err, errlen);
		if (!ret)
			x->st.batches[b->table]++;
	} else {
		/* the sender counts it */
		ret = blk_export_ch_submit(x, b, err, errlen);
		if (!ret && !x->o.pipelined)
			ret = blk_export_ch_drain(x, err, errlen);
	}
	if (ret)
		return fail(x, ret, err);
	b->no++;
	b->nrows = 0;
	blk_strbuf_reset(&b->raw);
	return 0;
}

/* Add a row at @time, its values @v (the batch id is set here) to @b. */
static int add_row(struct blk_export *x, struct export_batch *b, uint64_t time, union blk_value *v,
		   char *err, size_t errlen)
{
	uint64_t day = time / BLK_DAY_NS;
	size_t len;
	int ret;

	/* a batch holds one UTC day: one partition, so one part, stored whole or not at all */
	if (b->nrows && day != b->day && (ret = end_batch(x, b, err, errlen)))
		return ret;
	if (!b->nrows) {
		b->day = day;
		b->tmin = b->tmax = time;
		b->first_row = x->st.rows[b->table];
		b->id = batch_id_of(x, b, v);
	}
	v[b->t->ncols - 1].u = b->id;
	len = b->raw.len;
	if (x->d.kind == BLK_EXPORT_TSV)
		blk_schema_row_tsv(&b->raw, b->t, v);
	else
		blk_schema_row_rowbinary(&b->raw, b->t, v);
	x->st.bytes_raw += b->raw.len - len;
	x->st.rows[b->table]++;
	b->nrows++;
	if (time < b->tmin)
		b->tmin = time;
	if (time > b->tmax)
		b->tmax = time;
	if (b->nrows >= x->o.batch_rows || b->raw.len >= x->o.batch_bytes)
		return end_batch(x, b, err, errlen);
	return 0;
}

int blk_export_io(struct blk_export *x, const struct blk_io_row *r, char *err, size_t errlen)
{
	union blk_value v[BLK_IO_NCOLS];
	int ret;

	if (x->error)
		return failed(x, err, errlen);
	if ((ret = blk_schema_io_values(r, x->host, x->export_id, 0, v, err, errlen)))
		return ret;
	return add_row(x, &x->b[BLK_TABLE_IO], r->c_ns, v, err, errlen);
}

int blk_export_iowait(struct blk_export *x, const struct blk_iowait_row *r, char *err,
		      size_t errlen)
{
	union blk_value v[BLK_IOWAIT_NCOLS];
	int ret;

	if (x->error)
		return failed(x, err, errlen);
	if ((ret = blk_schema_iowait_values(r, x->host, x->export_id, 0, v, err, errlen)))
		return ret;
	return add_row(x, &x->b[BLK_TABLE_IOWAIT], r->start_ns, v, err, errlen);
}

int blk_export_flush(struct blk_export *x, char *err, size_t errlen)
{
	if (x->error)
		return failed(x, err, errlen);
	for (int i = 0; i < BLK_TABLE_NR; i++) {
		int ret = end_batch(x, &x->b[i], err, errlen);

		if (ret)
			return ret;
	}
	if (x->d.kind == BLK_EXPORT_CLICKHOUSE) {
		int ret = blk_export_ch_drain(x, err, errlen);

		if (ret)
			return fail(x, ret, err);
	}
	return 0;
}

void blk_export_get_stats(const struct blk_export *x, struct blk_export_stats *s)
{
	*s = x->st;
	blk_export_ch_stats(x, s);
}

/* ---- open, close ---- */

/* The password in @path's first line, into x->password; only its owner may read @path. */
static int read_password_file(struct blk_export *x, const char *path, char *err, size_t errlen)
{
	char buf[1024];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0 || fstat(fd, &st) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot read password file '%s': %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (st.st_mode & 077) {
		close(fd);
		snprintf(
			err, errlen,
			"password file '%s' has mode %04o: others than its owner may read it (chmod 600 '%s')",
			path, (unsigned int)(st.st_mode & 07777), path);
		return -EACCES;
	}
	do {
		n = read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	e = errno;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "cannot read password file '%s': %s", path, strerror(e));
		return -e;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	if (!buf[0]) {
		snprintf(err, errlen, "password file '%s' holds no password (its first line)",
			 path);
		return -EINVAL;
	}
	x->password = strdup(buf);
	memset(buf, 0, sizeof(buf));
	return x->password ? 0 : -ENOMEM;
}

/* localhost, 127.0.0.0/8, ::1: a password sent in clear does not leave the machine */
static int loopback(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (!strcmp(host, "localhost"))
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The password of the options; refused in clear to another machine unless insecure. */
static int set_password(struct blk_export *x, const struct blk_export_opts *o, char *err,
			size_t errlen)
{
	int ret;

	if (x->d.kind != BLK_EXPORT_CLICKHOUSE)
		return 0;
	if (o->password_file) {
		if ((ret = read_password_file(x, o->password_file, err, errlen)))
			return ret;
	} else if (o->password && o->password[0]) {
		if (!(x->password = strdup(o->password)))
			return -ENOMEM;
	}
	if (o->ca_file && !(x->ca_file = strdup(o->ca_file)))
		return -ENOMEM;
	if (x->password && !x->d.tls && !o->insecure && !loopback(x->d.host)) {
		snprintf(
			err, errlen,
			"a password over plain HTTP to '%s' would cross the network in clear: use clickhouses:// (or --insecure)",
			x->d.host);
		return -EINVAL;
	}
	return 0;
}

static int set_opts(struct blk_export *x, const struct blk_export_opts *o, char *err, size_t errlen)
{
	int ret;

	x->o = *o;
	if (!o->host || !o->host[0] || strlen(o->host) > BLK_ROW_STR_MAX) {
		snprintf(err, errlen, "the host label must have 1 to %d bytes", BLK_ROW_STR_MAX);
		return -EINVAL;
	}
	if (!o->trace_id || !o->trace_id[0]) {
		snprintf(err, errlen, "an export needs the trace's identity");
		return -EINVAL;
	}
	if (o->batch_rows > BLK_EXPORT_MAX_BATCH_ROWS ||
	    o->batch_bytes > BLK_EXPORT_MAX_BATCH_BYTES) {
		snprintf(err, errlen, "batches are at most %u rows and %u bytes",
			 BLK_EXPORT_MAX_BATCH_ROWS, BLK_EXPORT_MAX_BATCH_BYTES);
		return -EINVAL;
	}
	if (o->gzip_level < -1 || o->gzip_level > 9) {
		snprintf(err, errlen, "gzip level %d is not one of 0 to 9", o->gzip_level);
		return -EINVAL;
	}
	if (!x->o.batch_rows)
		x->o.batch_rows = BLK_EXPORT_BATCH_ROWS;
	if (!x->o.batch_bytes)
		x->o.batch_bytes = BLK_EXPORT_BATCH_BYTES;
	/*
	 * gzip frames every body (a body cut short is refused); compressing it pays only over a
	 * network: to loopback, level 1 costs btt and the server more CPU than the bytes it
	 * saves (bench/bench-export.sh, doc/clickhouse.md)
	 */
	if (x->o.gzip_level < 0)
		x->o.gzip_level = loopback(x->d.host) ? 0 : 1;
	if (!x->o.connect_ms)
		x->o.connect_ms = 5000;
	if (!x->o.timeout_ms)
		x->o.timeout_ms = 60000;
	if (!x->o.retries)
		x->o.retries = 8;
	if (!x->o.backoff_ms)
		x->o.backoff_ms = 200;
	if (!x->o.backoff_max_ms)
		x->o.backoff_max_ms = 5000;
	x->host = strdup(o->host);
	x->trace_id = strdup(o->trace_id);
	if (!x->host || !x->trace_id) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->o.host = x->host;
	x->o.trace_id = x->trace_id;
	x->export_id = export_id_of(x->host, x->trace_id);
	ret = set_password(x, o, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	x->o.password = x->password;
	x->o.password_file = NULL;
	x->o.ca_file = x->ca_file;
	return ret;
}

static void export_free(struct blk_export *x, int abandon)
{
	blk_export_ch_stop(x, abandon);
	for (int i = 0; i < BLK_TABLE_NR; i++) {
		blk_strbuf_release(&x->b[i].raw);
		free(x->path[i]);
		free(x->tmp[i]);
	}
	free(x->host);
	free(x->trace_id);
	if (x->password)
		memset(x->password, 0, strlen(x->password));
	free(x->password);
	free(x->ca_file);
	free(x);
}

struct blk_export *blk_export_open(const char *dest, const struct blk_export_opts *o, char *err,
				   size_t errlen)
{
	struct blk_export *x = calloc(1, sizeof(*x));
	int ret;

	if (!x) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < BLK_TABLE_NR; i++) {
		x->fd[i] = -1;
		x->b[i].table = (enum blk_table_id)i;
		x->b[i].t = blk_schema_table((enum blk_table_id)i);
	}
	if ((ret = blk_export_dest_parse(dest, &x->d, err, errlen)) ||
	    (ret = set_opts(x, o, err, errlen)))
		goto fail;
	if (x->d.kind == BLK_EXPORT_TSV)
		ret = tsv_open(x, err, errlen);
	else
		ret = blk_export_ch_open(x, err, errlen);
	if (ret)
		goto fail;
	return x;
fail:
	if (x->d.kind == BLK_EXPORT_TSV)
		tsv_finish(x, 0, err, 0);
	export_free(x, 1);
	errno = -ret;
	return NULL;
}

int blk_export_close(struct blk_export *x, struct blk_export_stats *st, char *err, size_t errlen)
{
	int ret;

	if (!x)
		return 0;
	ret = blk_export_flush(x, err, errlen);
	if (st)
		blk_export_get_stats(x, st);
	if (x->d.kind == BLK_EXPORT_TSV) {
		int r2 = tsv_finish(x, !ret, ret ? NULL : err, ret ? 0 : errlen);

		if (!ret)
			ret = r2;
	}
	export_free(x, 1);
	return ret;
}

void blk_export_discard(struct blk_export *x)
{
	if (!x)
		return;
	if (x->d.kind == BLK_EXPORT_TSV)
		tsv_finish(x, 0, NULL, 0);
	export_free(x, 1);
}
