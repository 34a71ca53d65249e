// SPDX-License-Identifier: GPL-2.0
/*
 * The ClickHouse sink of the export: a check of the tables, then one INSERT per batch over
 * the HTTP interface, with retries that never store a batch twice (export.h, and
 * doc/clickhouse.md for why that holds).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "export-int.h"

/* ClickHouse's error codes that matter here (dbms/src/Common/ErrorCodes.cpp) */
enum {
	CH_TIMEOUT_EXCEEDED = 159,
	CH_READONLY = 164,
	CH_UNKNOWN_TABLE = 60,
	CH_UNKNOWN_DATABASE = 81,
	CH_UNKNOWN_USER = 192,
	CH_WRONG_PASSWORD = 193,
	CH_IP_ADDRESS_NOT_ALLOWED = 195,
	CH_TOO_MANY_SIMULTANEOUS_QUERIES = 202,
	CH_SOCKET_TIMEOUT = 209,
	CH_NETWORK_ERROR = 210,
	CH_QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING = 216,
	CH_TOO_MANY_PARTS = 252,
	CH_ALL_CONNECTION_TRIES_FAILED = 279,
	CH_DATABASE_ACCESS_DENIED = 291,
};

/*
 * The sender. Its lock guards @cur while @pending, the flags, @error/@err and @st; @work,
 * @probe, @body and @native are the thread's own. A batch is handed over only when the sender
 * is idle, by swapping buffers of rows with @cur (never copied): the rows in memory are the
 * batches being filled and the one being stored, and its body (Native; compressed, both). The sender takes
 * longer over a batch (compress, send, the server's INSERT) than btt's model takes to fill
 * the next, so a queue of waiting batches would only hold memory.
 */
struct ch_sender {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* @cur or the flags changed: both sides wait on it */
	struct export_batch cur;
	int pending; /* @cur was handed over, not yet taken */
	int busy; /* @cur is being stored */
	int quit; /* no more batches: end when none is pending */
	int abandon; /* end now: drop what is pending, retry nothing */
	int error; /* the first error, -errno: nothing is stored after it */
	char err[640];
	struct blk_export_stats st; /* the sender's counts, as of the last batch stored */
	struct blk_export_stats work; /* the same, being counted */
	int probe[BLK_TABLE_NR]; /* an earlier export may hold the table's next batch: ask first */
	struct blk_strbuf body; /* the batch as sent: Native, gzip-compressed unless level 0 */
	struct blk_strbuf native; /* the batch in Native format, before compression */
};

/* @sb's bytes as a C string (a strbuf always has room for the NUL) */
static const char *cstr(struct blk_strbuf *sb)
{
	blk_strbuf_reserve(sb, 0)[0] = 0;
	return sb->buf;
}

static void table_name(const struct blk_export *x, const struct blk_table *t, char *out,
		       size_t outlen)
{
	snprintf(out, outlen, "%s.%s%s", x->d.database, t->name, x->d.distributed ? "_all" : "");
}

/* The "Code: N" that starts ClickHouse's error messages, or -1. */
static int ch_code(const struct blk_http_resp *r)
{
	const char *p = r->body.buf, *end = p + r->body.len;
	int code = 0, n = 0;

	while (p && p < end && (*p == ' ' || *p == '\n' || *p == '\r'))
		p++;
	if (!p || end - p < 7 || memcmp(p, "Code: ", 6))
		return -1;
	for (p += 6; p < end && *p >= '0' && *p <= '9' && n < 6; p++, n++)
		code = code * 10 + (*p - '0');
	return n ? code : -1;
}

/*
 * A response that is not 200 OK: the message (what we did, the status, the server's first
 * line) and what it means: -EAGAIN (try again: the server is busy or a shard is away),
 * -EBUSY (a query with this id still runs), -ENOENT, -EACCES, or -EPROTO.
 */
static int http_error(const struct blk_export *x, const struct blk_http_resp *r, const char *doing,
		      char *err, size_t errlen)
{
	char line[400];
	int code = ch_code(r);

	blk_http_first_line(r, line, sizeof(line));
	snprintf(err, errlen, "%s rejected by '%s': HTTP %d: %s", doing, x->peer, r->status,
		 line[0] ? line : "(no message)");
	switch (code) {
	case CH_UNKNOWN_TABLE:
	case CH_UNKNOWN_DATABASE:
		return -ENOENT;
	case CH_READONLY:
	case CH_UNKNOWN_USER:
	case CH_WRONG_PASSWORD:
	case CH_IP_ADDRESS_NOT_ALLOWED:
	case CH_DATABASE_ACCESS_DENIED:
		return -EACCES;
	case CH_QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING:
		return -EBUSY;
	case CH_TIMEOUT_EXCEEDED:
	case CH_TOO_MANY_SIMULTANEOUS_QUERIES:
	case CH_SOCKET_TIMEOUT:
	case CH_NETWORK_ERROR:
	case CH_TOO_MANY_PARTS:
	case CH_ALL_CONNECTION_TRIES_FAILED:
		return -EAGAIN;
	}
	if (code < 0 && (r->status == 502 || r->status == 503 || r->status == 504))
		return -EAGAIN; /* a proxy in front of a server that is away */
	return -EPROTO;
}

/* Errors after which the same request may succeed later. */
static int transient(int ret)
{
	switch (-ret) {
	case ECONNREFUSED:
	case ECONNRESET:
	case ECONNABORTED:
	case EPIPE:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EAGAIN:
	case EBUSY:
		return 1;
	}
	return 0;
}

static void pause_ms(unsigned int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Run the query @sql; its answer (TabSeparated) in @r's body. Return 0 or -errno. */
static int query(const struct blk_export *x, const char *sql, const char *doing,
		 struct blk_http_resp *r, char *err, size_t errlen)
{
	struct blk_http_post p = {
		.target = "/?wait_end_of_query=1",
		.body = sql,
		.body_len = strlen(sql),
		.may_repeat = 1, /* only queries that change nothing */
	};
	int ret, sent;

	ret = blk_http_post(x->http, &p, r, &sent, err, errlen);
	if (!ret && r->status != 200)
		ret = http_error(x, r, doing, err, errlen);
	return ret;
}

/* Parse @n unsigned numbers separated by tabs, a line, in @r's body. */
static int parse_counts(const struct blk_export *x, const struct blk_http_resp *r, uint64_t *v,
			int n, char *err, size_t errlen)
{
	const char *p = r->body.buf, *end = p + r->body.len;

	for (int i = 0; i < n; i++) {
		int digits = 0;

		v[i] = 0;
		for (; p && p < end && *p >= '0' && *p <= '9' && digits < 19; p++, digits++)
			v[i] = v[i] * 10 + (uint64_t)(*p - '0');
		if (!digits || p >= end || *p != (i + 1 < n ? '\t' : '\n')) {
			snprintf(err, errlen, "'%s' answered a count with '%.40s'", x->peer,
				 r->body.len ? r->body.buf : "");
			return -EBADMSG;
		}
		p++;
	}
	return 0;
}

/* Append @s as a quoted SQL string. */
static void sql_string(struct blk_strbuf *sb, const char *s)
{
	blk_strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			blk_strbuf_addch(sb, '\\');
		blk_strbuf_addch(sb, *s);
	}
	blk_strbuf_addch(sb, '\'');
}

/* Check that @t exists at the destination with our columns and types. */
static int check_table(struct blk_export *x, const struct blk_table *t, char *err, size_t errlen)
{
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	char name[100], sql[200], doing[160];
	int ret;

	table_name(x, t, name, sizeof(name));
	snprintf(sql, sizeof(sql), "DESCRIBE TABLE %s FORMAT TabSeparated", name);
	snprintf(doing, sizeof(doing), "checking table '%s'", name);
	ret = query(x, sql, doing, &r, err, errlen);
	for (unsigned int c = 0; !ret && c < t->ncols; c++) {
		const char *want = blk_schema_col_type_name(t->cols[c].type), *line = r.body.buf;
		const char *end = line + r.body.len;
		size_t nl = strlen(t->cols[c].name);

		for (; line && line < end; line++) {
			const char *eol = memchr(line, '\n', (size_t)(end - line));
			const char *type = line + nl + 1, *tend;

			if (!eol)
				eol = end;
			if ((size_t)(eol - line) > nl && line[nl] == '\t' &&
			    !memcmp(line, t->cols[c].name, nl)) {
				tend = memchr(type, '\t', (size_t)(eol - type));
				if (!tend)
					tend = eol;
				if ((size_t)(tend - type) != strlen(want) ||
				    memcmp(type, want, strlen(want))) {
					snprintf(
						err, errlen,
						"table '%s' at '%s' does not match the export: column '%s' is %.*s, not %s",
						name, x->peer, t->cols[c].name, (int)(tend - type),
						type, want);
					ret = -EPROTO;
				}
				break;
			}
			line = eol;
		}
		if (!ret && (!line || line >= end)) {
			snprintf(
				err, errlen,
				"table '%s' at '%s' does not match the export: it has no column '%s' (%s)%s",
				name, x->peer, t->cols[c].name, want,
				c >= t->id_cols && c + 2 < t->ncols
					? ": a table of before that column was added (doc/clickhouse.md, \"Schema changes\": ALTER TABLE ... ADD COLUMN)"
					: "");
			ret = -EPROTO;
		}
	}
	blk_http_resp_release(&r);
	return ret;
}

/*
 * Wait until no query with id @qid (an INSERT of ours, also one of an earlier run) runs on
 * the server: only then does a count of the batch's rows tell whether it is stored.
 */
static int wait_idle(struct blk_export *x, const char *qid, char *err, size_t errlen)
{
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	unsigned int waited = 0, step = 50;
	char sql[256];
	int ret;

	snprintf(
		sql, sizeof(sql),
		"SELECT count() FROM system.processes WHERE query_id = '%s' OR initial_query_id = '%s' FORMAT TabSeparated",
		qid, qid);
	for (;;) {
		uint64_t n;

		ret = query(x, sql, "a look at the running queries", &r, err, errlen);
		if (!ret)
			ret = parse_counts(x, &r, &n, 1, err, errlen);
		if (ret || !n)
			break;
		if (waited >= x->o.timeout_ms) {
			snprintf(err, errlen, "query '%s' still runs on '%s' after %u ms", qid,
				 x->peer, waited);
			ret = -EBUSY;
			break;
		}
		pause_ms(step);
		waited += step;
		if (step < 1000)
			step *= 2;
	}
	blk_http_resp_release(&r);
	return ret;
}

/*
 * How many rows of batch @b the server holds (*@present), and how many rows of this export
 * in the batch's host and time range it holds in all (*@all). The host and time conditions
 * let the server skip all but the parts that can hold the batch.
 */
static int count_batch(struct blk_export *x, const struct export_batch *b, uint64_t *present,
		       uint64_t *all, char *err, size_t errlen)
{
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	struct blk_strbuf sql = BLK_STRBUF_INIT;
	const char *tcol = b->t->cols[b->t->time_col].name;
	char name[100], doing[160];
	uint64_t v[2];
	int ret;

	table_name(x, b->t, name, sizeof(name));
	blk_strbuf_addf(&sql,
			"SELECT countIf(batch_id = %" PRIu64 "), count() FROM %s WHERE host = ",
			b->id, name);
	sql_string(&sql, x->host);
	blk_strbuf_addf(&sql,
			" AND export_id = %" PRIu64 " AND %s >= %" PRIu64 " AND %s <= %" PRIu64
			" FORMAT TabSeparated",
			x->export_id, tcol, b->tmin, tcol, b->tmax);
	snprintf(doing, sizeof(doing), "counting batch %" PRIu64 " in '%s'", b->no, name);
	ret = query(x, cstr(&sql), doing, &r, err, errlen);
	if (!ret)
		ret = parse_counts(x, &r, v, 2, err, errlen);
	if (!ret) {
		*present = v[0];
		*all = v[1];
	}
	x->snd->work.checks++;
	blk_strbuf_release(&sql);
	blk_http_resp_release(&r);
	return ret;
}

/* One INSERT of batch @b (compressed in the sender's body). *@sent as for blk_http_post(). */
static int insert(struct blk_export *x, const struct export_batch *b, const char *qid, int *sent,
		  char *err, size_t errlen)
{
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	struct blk_strbuf sql = BLK_STRBUF_INIT, target = BLK_STRBUF_INIT;
	struct blk_http_post p = {0};
	char name[100], doing[160];
	int ret;

	table_name(x, b->t, name, sizeof(name));
	blk_strbuf_addf(&sql, "INSERT INTO %s (", name);
	blk_schema_table_names(&sql, b->t, ", ");
	blk_strbuf_addstr(&sql, ") FORMAT Native");
	blk_strbuf_addstr(&target, "/?query=");
	blk_http_url_encode(&target, cstr(&sql));
	blk_strbuf_addf(&target, "&query_id=%s", qid);
	if (x->d.distributed)
		blk_strbuf_addstr(&target, "&insert_distributed_sync=1");
	p.target = cstr(&target);
	p.gzip = x->o.gzip_level > 0;
	p.body = x->snd->body.buf;
	p.body_len = x->snd->body.len;
	ret = blk_http_post(x->http, &p, &r, sent, err, errlen);
	if (*sent)
		x->snd->work.bytes_sent += x->snd->body.len;
	if (!ret && r.status != 200) {
		snprintf(doing, sizeof(doing), "INSERT of batch %" PRIu64 " into '%s'", b->no,
			 name);
		ret = http_error(x, &r, doing, err, errlen);
	}
	blk_http_resp_release(&r);
	blk_strbuf_release(&sql);
	blk_strbuf_release(&target);
	return ret;
}

/*
 * The body of batch @b's INSERT: its rows as one Native block (a body cut short is refused:
 * the block says how many rows each column holds), gzip-compressed unless at level 0.
 */
static int encode(struct blk_export *x, const struct export_batch *b, char *err, size_t errlen)
{
	struct ch_sender *s = x->snd;
	int level = x->o.gzip_level, ret;

	blk_strbuf_reset(&s->body);
	blk_strbuf_reset(&s->native);
	ret = blk_schema_rowbinary_to_native(level > 0 ? &s->native : &s->body, b->t, b->raw.buf,
					     b->raw.len, b->nrows);
	if (ret) {
		snprintf(err, errlen, "internal error: batch %" PRIu64 " is no rows of '%s'", b->no,
			 b->t->name);
		return ret;
	}
	if (level > 0 && (ret = blk_http_gzip(&s->body, s->native.buf, s->native.len, level))) {
		snprintf(err, errlen, "cannot compress a batch: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* Whether blk_export_ch_stop() asked the sender to end now. */
static int abandoned(struct ch_sender *s)
{
	int a;

	pthread_mutex_lock(&s->lock);
	a = s->abandon;
	pthread_mutex_unlock(&s->lock);
	return a;
}

/* Store batch @b: send it, or find it stored; 0 or -errno with a message in @err. */
static int store(struct blk_export *x, struct export_batch *b, char *err, size_t errlen)
{
	struct ch_sender *s = x->snd;
	unsigned int pause = x->o.backoff_ms, attempt = 0;
	int check = s->probe[b->table], compressed = 0, ret = 0, sent;
	char qid[64], name[100];

	snprintf(qid, sizeof(qid), "blktrace-ng-%016" PRIx64, b->id);
	table_name(x, b->t, name, sizeof(name));
	for (;;) {
		if (check) {
			uint64_t present = 0, all = 0; /* set by count_batch() when it returns 0 */

			ret = wait_idle(x, qid, err, errlen);
			if (!ret)
				ret = count_batch(x, b, &present, &all, err, errlen);
			if (!ret && present == b->nrows) {
				s->work.batches_present++;
				s->work.rows_present += b->nrows;
				return 0;
			}
			if (!ret && present) {
				snprintf(err, errlen,
					 "'%s' at '%s' holds %" PRIu64 " of the %" PRIu64
					 " rows of batch %" PRIu64 " (batch_id %" PRIu64
					 "): a partial INSERT, not sent again",
					 name, x->peer, present, b->nrows, b->no, b->id);
				return -EEXIST;
			}
			if (!ret && s->probe[b->table] && !b->no && all) {
				snprintf(
					err, errlen,
					"'%s' at '%s' holds %" PRIu64
					" rows of this export (export_id %" PRIu64
					") in batches other than ours: exported before with other batch limits",
					name, x->peer, all, x->export_id);
				return -EEXIST;
			}
			if (!ret) {
				/* absent: so are all later batches (each is sent after the one before) */
				s->probe[b->table] = 0;
				check = 0;
			} else if (!transient(ret)) {
				return ret;
			}
		}
		if (!check) {
			if (!compressed && (ret = encode(x, b, err, errlen)))
				return ret;
			compressed = 1;
			ret = insert(x, b, qid, &sent, err, errlen);
			if (!ret)
				return 0;
			if (!transient(ret))
				return ret;
			/* the server may have stored it: ask before sending it again */
			check = sent || ret == -EBUSY;
		}
		if (attempt == x->o.retries || abandoned(s)) {
			char last[sizeof(x->errmsg)];

			snprintf(last, sizeof(last), "%s", err);
			snprintf(err, errlen, "%s (gave up after %u attempts)", last, attempt + 1);
			return ret;
		}
		pause_ms(pause);
		pause = pause * 2 > x->o.backoff_max_ms ? x->o.backoff_max_ms : pause * 2;
		attempt++;
		s->work.retries++;
	}
}

static void *sender_main(void *arg)
{
	struct blk_export *x = arg;
	struct ch_sender *s = x->snd;
	char err[sizeof(s->err)];

	pthread_mutex_lock(&s->lock);
	for (;;) {
		int ret;

		while (!s->pending && !s->quit && !s->abandon)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->pending || s->abandon)
			break;
		s->pending = 0;
		s->busy = 1;
		pthread_mutex_unlock(&s->lock);
		ret = store(x, &s->cur, err, sizeof(err));
		if (!ret)
			s->work.batches[s->cur.table]++;
		pthread_mutex_lock(&s->lock);
		s->busy = 0;
		s->st = s->work;
		if (ret) {
			s->error = ret;
			snprintf(s->err, sizeof(s->err), "%s", err);
		}
		pthread_cond_broadcast(&s->cond);
	}
	s->pending = 0;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int start_sender(struct blk_export *x, char *err, size_t errlen)
{
	struct ch_sender *s = calloc(1, sizeof(*s));
	int e;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < BLK_TABLE_NR; i++)
		s->probe[i] = 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	x->snd = s;
	e = pthread_create(&s->thread, NULL, sender_main, x);
	if (e) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
		x->snd = NULL;
		snprintf(err, errlen, "cannot start the sender thread: %s", strerror(e));
		return -e;
	}
	return 0;
}

/* Under the lock: wait until the sender has nothing to do; its error (copied to @err), or 0. */
static int sender_idle(struct ch_sender *s, char *err, size_t errlen)
{
	while (!s->error && (s->pending || s->busy))
		pthread_cond_wait(&s->cond, &s->lock);
	if (s->error)
		snprintf(err, errlen, "%s", s->err);
	return s->error;
}

int blk_export_ch_submit(struct blk_export *x, struct export_batch *b, char *err, size_t errlen)
{
	struct ch_sender *s = x->snd;
	struct blk_strbuf raw;
	int ret;

	pthread_mutex_lock(&s->lock);
	/* a later batch is never stored after one that is not */
	ret = sender_idle(s, err, errlen);
	if (!ret) {
		/* @b's rows to the sender, the sender's emptied buffer to @b */
		raw = s->cur.raw;
		s->cur = *b;
		b->raw = raw;
		blk_strbuf_reset(&b->raw);
		s->pending = 1;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int blk_export_ch_drain(struct blk_export *x, char *err, size_t errlen)
{
	struct ch_sender *s = x->snd;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = sender_idle(s, err, errlen);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void blk_export_ch_stats(const struct blk_export *x, struct blk_export_stats *st)
{
	struct ch_sender *s = x->snd;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < BLK_TABLE_NR; i++)
		st->batches[i] += s->st.batches[i];
	st->batches_present += s->st.batches_present;
	st->rows_present += s->st.rows_present;
	st->retries += s->st.retries;
	st->checks += s->st.checks;
	st->bytes_sent += s->st.bytes_sent;
	pthread_mutex_unlock(&s->lock);
}

void blk_export_ch_stop(struct blk_export *x, int abandon)
{
	struct ch_sender *s = x->snd;

	if (!s) {
		blk_http_close(x->http);
		x->http = NULL;
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->quit = 1;
	if (abandon)
		s->abandon = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	blk_strbuf_release(&s->cur.raw);
	blk_strbuf_release(&s->body);
	blk_strbuf_release(&s->native);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	x->snd = NULL;
	blk_http_close(x->http);
	x->http = NULL;
}

int blk_export_ch_open(struct blk_export *x, char *err, size_t errlen)
{
	struct blk_http_conf c = {
		.host = x->d.host,
		.port = x->d.port,
		.tls = x->d.tls,
		.ca_file = x->ca_file,
		.insecure = x->o.insecure,
		.user = x->d.user[0] ? x->d.user : NULL,
		.password = x->password,
		.connect_ms = x->o.connect_ms,
		.timeout_ms = x->o.timeout_ms,
	};

	snprintf(x->peer, sizeof(x->peer), strchr(x->d.host, ':') ? "[%s]:%d" : "%s:%d", x->d.host,
		 x->d.port);
	x->http = blk_http_open(&c, err, errlen);
	if (!x->http)
		return -errno;
	for (int i = 0; i < BLK_TABLE_NR; i++) {
		int ret = check_table(x, blk_schema_table((enum blk_table_id)i), err, errlen);

		if (ret)
			return ret;
	}
	return start_sender(x, err, errlen);
}
