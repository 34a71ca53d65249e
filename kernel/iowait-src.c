// SPDX-License-Identifier: GPL-2.0
/*
 * The sources of the I/O wait backend (iowait-int.h): which one the kernel offers, best
 * first (the blk_iowait module's tracepoints, tracefs kprobe events, the scheduler
 * tracepoints), their events enabled in the instance and decoded from its raw pages;
 * and blktrace -k's clean-up of what a tracer left.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk/kernel.h"
#include "holder.h"
#include "iowait-int.h"
#include "util.h"

static void errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static int exists(const char *dir, const char *rel)
{
	char p[KPATH];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return !access(p, F_OK);
}

static int possible_cpus(void)
{
	char buf[256], *dash;
	int n;

	if (blk_ftrace_read("/sys/devices/system/cpu/possible", buf, sizeof(buf)))
		return 1;
	dash = strrchr(buf, '-');
	n = atoi(dash ? dash + 1 : buf) + 1;
	return n > 0 ? n : 1;
}

/* the kernel's lockdown level ("none", "integrity", "confidentiality"), or "" */
static void lockdown(char *out, size_t len)
{
	char buf[256], *a, *b;

	out[0] = '\0';
	if (blk_ftrace_read("/sys/kernel/security/lockdown", buf, sizeof(buf)))
		return;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b)
		snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
}

/* ---- events ---- */

static const struct blk_ftrace_field *need(struct evmap *m, const char *name, int *ok)
{
	const struct blk_ftrace_field *f = blk_ftrace_field(&m->fmt, name);

	if (!f)
		*ok = 0;
	return f;
}

/*
 * Enable @event in the instance with @filter and map it as @kind; @required: a failure is
 * an error, else the event is left out. Return 0, 1 (left out) or -errno.
 */
static int add_event(struct iw_backend *b, const char *event, const char *filter,
		     enum blk_wj_kind kind, enum blk_iowait_func func, int required, char *err,
		     size_t len)
{
	struct evmap *m = &b->map[b->nmap];
	int ret, filtered = 0, ok = 1;

	if (b->nmap == MAX_MAP)
		return -ENOSPC;
	memset(m, 0, sizeof(*m));
	ret = blk_ftrace_inst_format(b->inst, event, &m->fmt);
	if (ret) {
		if (!required)
			return 1;
		errf(err, len, "cannot read the format of event '%s': %s", event, strerror(-ret));
		return ret;
	}
	m->id = m->fmt.id;
	m->kind = kind;
	m->func = func;
	switch (kind) {
	case BLK_WJ_SWITCH_D:
		m->pid = need(m, "prev_pid", &ok);
		m->comm = need(m, "prev_comm", &ok);
		m->state = need(m, "prev_state", &ok);
		break;
	case BLK_WJ_WAKING:
		m->pid = need(m, "pid", &ok);
		m->waker = need(m, "common_pid", &ok);
		m->target = blk_ftrace_field(&m->fmt, "target_cpu");
		m->comm = blk_ftrace_field(&m->fmt, "comm");
		break;
	case BLK_WJ_QUEUE:
	case BLK_WJ_COMPLETE:
		m->dev = need(m, "dev", &ok);
		m->sector = need(m, "sector", &ok);
		m->nr = need(m, "nr_sector", &ok);
		m->pid = need(m, "common_pid", &ok);
		if (kind == BLK_WJ_QUEUE)
			m->comm = blk_ftrace_field(&m->fmt, "comm");
		break;
	case BLK_WJ_ENTER:
		m->comm = blk_ftrace_field(&m->fmt, "comm");
		/* fallthrough */
	case BLK_WJ_EXIT:
		m->pid = need(m, "common_pid", &ok);
		break;
	case BLK_WJ_WAIT:
		/* iowait's 'B'/'E'; iowait_end has the ends only */
		m->type = blk_ftrace_field(&m->fmt, "track_event_type");
		m->pid = need(m, "pid", &ok);
		m->tgid = need(m, "tgid", &ok);
		m->dur = need(m, "duration_ns", &ok);
		m->waker = need(m, "waker_cpu", &ok);
		m->sleep = need(m, "sleep_cpu", &ok);
		m->fn = need(m, "func", &ok);
		m->comm = need(m, "comm", &ok);
		break;
	}
	if (!ok) {
		if (!required)
			return 1;
		errf(err, len, "event '%s' lacks a field this tracer reads (its format changed?)",
		     event);
		return -EPROTO;
	}
	ret = blk_ftrace_inst_enable(b->inst, event, filter, &filtered);
	if (ret) {
		if (!required)
			return 1;
		errf(err, len, "cannot enable event '%s' in '%s': %s", event,
		     blk_ftrace_inst_dir(b->inst), strerror(-ret));
		return ret;
	}
	if (kind == BLK_WJ_SWITCH_D)
		m->check_state = !filtered;
	if (kind == BLK_WJ_WAKING)
		snprintf(b->waking, sizeof(b->waking), "%s", event);
	if ((kind == BLK_WJ_QUEUE || kind == BLK_WJ_COMPLETE) && !filtered)
		b->dev_filtered = 0;
	b->nmap++;
	return 0;
}

static int is_traced_dev(const struct iw_backend *b, uint32_t dev)
{
	for (int i = 0; i < b->cfg->ndevs; i++)
		if (b->cfg->devs[i].devno == dev)
			return 1;
	return 0;
}

static int fifo_push(struct fifo *q, const struct blk_wj_event *e)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct blk_wj_event *v = malloc(cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < q->n; i++)
			v[i] = q->v[(q->head + i) & (q->cap - 1)];
		free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
	}
	q->v[(q->head + q->n) & (q->cap - 1)] = *e; /* cap: a power of 2 */
	q->n++;
	return 0;
}

int iw_on_raw(void *arg, const struct blk_ftrace_rec *r)
{
	struct iw_walk *w = arg;
	struct iw_backend *b = w->b;
	struct blk_wj_event e;
	const struct evmap *m = NULL;
	uint16_t id;

	if (r->len < 8)
		return 0;
	memcpy(&id, r->data, 2);
	for (int i = 0; i < b->nmap; i++)
		if (b->map[i].id == id) {
			m = &b->map[i];
			break;
		}
	if (!m)
		return 0;
	memset(&e, 0, sizeof(e));
	e.ts = r->ts;
	e.kind = m->kind;
	e.cpu = b->cfg->cpus[w->k];
	e.func = m->func;
	e.tid = (int32_t)blk_ftrace_get_int(m->pid, r->data, r->len);
	switch (m->kind) {
	case BLK_WJ_SWITCH_D:
		if (m->check_state && blk_ftrace_get_int(m->state, r->data, r->len) != 2)
			return 0;
		/* fallthrough */
	case BLK_WJ_ENTER:
		if (m->comm) {
			char c[17];

			blk_ftrace_get_str(m->comm, r->data, r->len, c, sizeof(c));
			memcpy(e.comm, c, sizeof(e.comm));
		}
		break;
	case BLK_WJ_WAKING:
		e.target_cpu = m->target ? (int)blk_ftrace_get_int(m->target, r->data, r->len)
					 : e.cpu;
		e.waker = (int32_t)blk_ftrace_get_int(m->waker, r->data, r->len);
		if (m->comm && b->wf)
			blk_ftrace_get_str(m->comm, r->data, r->len, e.comm, sizeof(e.comm));
		break;
	case BLK_WJ_QUEUE:
	case BLK_WJ_COMPLETE:
		e.dev = (uint32_t)blk_ftrace_get_int(m->dev, r->data, r->len);
		if (!b->dev_filtered && !is_traced_dev(b, e.dev))
			return 0;
		e.sector = (uint64_t)blk_ftrace_get_int(m->sector, r->data, r->len);
		e.nr = (uint32_t)blk_ftrace_get_int(m->nr, r->data, r->len);
		if (m->kind == BLK_WJ_QUEUE && m->comm)
			blk_ftrace_get_str(m->comm, r->data, r->len, e.comm, sizeof(e.comm));
		break;
	case BLK_WJ_WAIT: {
		char c[17];

		if (m->type && blk_ftrace_get_int(m->type, r->data, r->len) != 'E')
			return 0;
		e.tgid = (int32_t)blk_ftrace_get_int(m->tgid, r->data, r->len);
		e.duration = (uint64_t)blk_ftrace_get_int(m->dur, r->data, r->len);
		e.waker_cpu = (int)blk_ftrace_get_int(m->waker, r->data, r->len);
		e.sleep_cpu = (int)blk_ftrace_get_int(m->sleep, r->data, r->len);
		e.func = (enum blk_iowait_func)blk_ftrace_get_int(m->fn, r->data, r->len);
		blk_ftrace_get_str(m->comm, r->data, r->len, c, sizeof(c));
		memcpy(e.comm, c, sizeof(e.comm));
		break;
	}
	case BLK_WJ_EXIT:
		break;
	}
	return fifo_push(&b->cpu[w->k].q, &e) ? -ENOMEM : 0;
}

/* ---- selection and set-up ---- */

static const struct {
	const char *name;
	enum blk_iowait_func func;
} funcs[] = {
	{"blk_io_schedule", BLK_IOWAIT_FN_BLK_IO_SCHEDULE},
	{"io_schedule", BLK_IOWAIT_FN_IO_SCHEDULE},
	{"io_schedule_timeout", BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT},
};

static long long module_missed(void)
{
	char buf[64];

	if (blk_ftrace_read(MODULE_PARAMS "/nmissed", buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

static long long kprobes_missed(const struct iw_backend *b)
{
	long long sum = 0;

	for (int i = 0; i < b->nprobes; i++) {
		long long m = blk_ftrace_kprobe_missed(b->tfs, b->probes[i]);

		if (m > 0)
			sum += m;
	}
	return sum;
}

long long iw_missed_now(const struct iw_backend *b)
{
	if (b->src == BLK_IOWAIT_SRC_MODULE)
		return module_missed();
	if (b->src == BLK_IOWAIT_SRC_KPROBE)
		return kprobes_missed(b);
	return 0;
}

void iw_remove_probes(struct iw_backend *b)
{
	while (b->nprobes > 0) {
		b->nprobes--;
		blk_ftrace_kprobe_del(b->probe_ev[b->nprobes]);
		b->probe_ev[b->nprobes] = NULL;
	}
}

/* define GROUP/EVENT on @fn (@retprobe: a return probe); kept in b->probes when it is */
static int add_probe(struct iw_backend *b, const char *group, const char *event, const char *fn,
		     const char *fetch, int retprobe, unsigned int maxactive)
{
	int ret = blk_ftrace_kprobe_add(group, event, fn, fetch, retprobe, maxactive,
					&b->probe_ev[b->nprobes]);

	if (!ret)
		snprintf(b->probes[b->nprobes++], sizeof(b->probes[0]), "%s/%s", group, event);
	return ret;
}

/* Define the kprobe events (kprobe_events is global). Return 0 or -errno (reason in @why). */
static int add_probes(struct iw_backend *b, char *why, size_t len)
{
	char group[64], event[96];
	int ret, have_io_schedule = 0;

	snprintf(group, sizeof(group), KPROBE_PREFIX "%d", (int)getpid());
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		const char *fn = funcs[i].name;

		snprintf(event, sizeof(event), "enter_%s", fn);
		ret = add_probe(b, group, event, fn, "comm=$comm", 0, 0);
		if (ret) {
			if (ret == -EPERM || ret == -EACCES) {
				char ld[64];

				lockdown(ld, sizeof(ld));
				errf(why, len, "kprobe events are refused (%s%s%s)", strerror(-ret),
				     ld[0] ? ", lockdown " : "", ld);
				return ret;
			}
			continue; /* not in this kernel (blk_io_schedule before 5.9) */
		}
		snprintf(event, sizeof(event), "exit_%s", fn);
		ret = add_probe(b, group, event, fn, NULL, 1, b->maxactive);
		if (ret == -EINVAL && b->maxactive) {
			/* a maxactive the kernel does not take: its default */
			ret = add_probe(b, group, event, fn, NULL, 1, 0);
			b->maxactive = 0;
		}
		if (ret) {
			errf(why, len, "cannot define a return probe on %s: %s", fn,
			     strerror(-ret));
			return ret;
		}
		if (funcs[i].func == BLK_IOWAIT_FN_IO_SCHEDULE)
			have_io_schedule = 1;
	}
	if (!have_io_schedule) {
		errf(why, len, "no kprobe could be put on io_schedule");
		return -ENOENT;
	}
	return 0;
}

static int enable_kprobes(struct iw_backend *b, char *err, size_t len)
{
	for (int i = 0; i < b->nprobes; i++) {
		const char *ev = b->probes[i], *name = strchr(ev, '/') + 1;
		int enter = !strncmp(name, "enter_", 6), ret;
		enum blk_iowait_func f = BLK_IOWAIT_FN_UNKNOWN;

		for (size_t k = 0; k < sizeof(funcs) / sizeof(funcs[0]); k++)
			if (!strcmp(name + (enter ? 6 : 5), funcs[k].name))
				f = funcs[k].func;
		/* the events of a group are under events/GROUP/ */
		ret = add_event(b, ev, NULL, enter ? BLK_WJ_ENTER : BLK_WJ_EXIT, f, 1, err, len);
		if (ret)
			return ret;
	}
	return 0;
}

/* the devices' filter for the block events: "dev == A || dev == B" */
static void dev_filter(const struct blk_backend_cfg *cfg, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < cfg->ndevs && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%sdev == %u", i ? " || " : "",
				      cfg->devs[i].devno);
}

int iw_setup_events(struct iw_backend *b, char *err, size_t len)
{
	char filter[2048];
	int ret;

	switch (b->src) {
	case BLK_IOWAIT_SRC_MODULE:
		/*
		 * The ends only: iowait_end, one event a wait; a module before 1.1 has only
		 * iowait, whose 'B' events the filter drops after the kernel built them ('E' = 69)
		 */
		ret = add_event(b, "blk_iowait/iowait_end", NULL, BLK_WJ_WAIT,
				BLK_IOWAIT_FN_UNKNOWN, 0, err, len);
		if (ret != 1)
			return ret;
		return add_event(b, "blk_iowait/iowait", "track_event_type == 69", BLK_WJ_WAIT,
				 BLK_IOWAIT_FN_UNKNOWN, 1, err, len);
	case BLK_IOWAIT_SRC_KPROBE:
		ret = enable_kprobes(b, err, len);
		if (!ret &&
		    add_event(b, "sched/sched_waking", NULL, BLK_WJ_WAKING, 0, 0, err, len) == 1)
			add_event(b, "sched/sched_wakeup", NULL, BLK_WJ_WAKING, 0, 0, err, len);
		return ret;
	default:
		dev_filter(b->cfg, filter, sizeof(filter));
		b->dev_filtered = 1;
		ret = add_event(b, "sched/sched_switch", "prev_state == 2", BLK_WJ_SWITCH_D, 0, 1,
				err, len);
		if (!ret) {
			ret = add_event(b, "sched/sched_waking", NULL, BLK_WJ_WAKING, 0, 0, err,
					len);
			if (ret == 1)
				ret = add_event(b, "sched/sched_wakeup", NULL, BLK_WJ_WAKING, 0, 1,
						err, len);
		}
		if (!ret)
			ret = add_event(b, "block/block_bio_queue", filter, BLK_WJ_QUEUE, 0, 1, err,
					len);
		if (!ret)
			ret = add_event(b, "block/block_rq_complete", filter, BLK_WJ_COMPLETE, 0, 1,
					err, len);
		if (!ret)
			ret = add_event(b, "block/block_bio_complete", filter, BLK_WJ_COMPLETE, 0,
					0, err, len) < 0;
		return ret < 0 ? ret : 0;
	}
}

int iw_choose(struct iw_backend *b, char *why, size_t len)
{
	const char *want = b->cfg->iowait_source ? b->cfg->iowait_source : "auto";
	int any = !strcmp(want, "auto");
	char no_mod[512] = "", no_kp[512] = "";
	int ret;

	b->maxactive = b->cfg->iowait_maxactive ? b->cfg->iowait_maxactive
						: 2 * (unsigned int)possible_cpus();
	if (any || !strcmp(want, "module")) {
		if (exists(b->tfs, "events/blk_iowait/iowait/format")) {
			b->src = BLK_IOWAIT_SRC_MODULE;
			errf(b->why, sizeof(b->why),
			     "I/O waits: the blk_iowait module's tracepoints (kretprobes on io_schedule, io_schedule_timeout, blk_io_schedule)");
			return 0;
		}
		errf(no_mod, sizeof(no_mod),
		     "the blk_iowait module is not loaded (no events/blk_iowait in tracefs; see blk_iowait(4))");
		if (!any) {
			errf(why, len, "--iowait=module: %s", no_mod);
			return -ENOENT;
		}
	}
	if (any || !strcmp(want, "kprobe")) {
		if (!exists(b->tfs, "kprobe_events")) {
			char ld[64];

			lockdown(ld, sizeof(ld));
			errf(no_kp, sizeof(no_kp),
			     "no kprobe events (tracefs has no kprobe_events: a kernel without CONFIG_KPROBE_EVENTS%s%s)",
			     ld[0] ? "; lockdown " : "", ld);
		} else if ((ret = add_probes(b, no_kp, sizeof(no_kp))) == 0) {
			b->src = BLK_IOWAIT_SRC_KPROBE;
			errf(b->why, sizeof(b->why),
			     "I/O waits: tracefs kprobe events on io_schedule & co (maxactive %u)%s%s",
			     b->maxactive, any ? "; " : "", any ? no_mod : "");
			return 0;
		} else {
			iw_remove_probes(b);
		}
		if (!any) {
			errf(why, len, "--iowait=kprobe: %s", no_kp);
			return -ENOENT;
		}
	}
	if (!exists(b->tfs, "events/sched/sched_switch")) {
		errf(why, len, "no source of I/O waits: %s%s%s; and no sched_switch event",
		     no_mod[0] ? no_mod : "", no_mod[0] && no_kp[0] ? "; " : "", no_kp);
		return -ENOENT;
	}
	b->src = BLK_IOWAIT_SRC_SCHED;
	errf(b->why, sizeof(b->why),
	     "I/O waits: the scheduler tracepoints, which measure uninterruptible sleeps, not only I/O waits: %s%s%s%s%s",
	     b->cfg->iowait_all
		     ? "all of them are kept, those of tasks without an I/O in flight on a traced device labelled io=none"
		     : "only those of tasks with an I/O of their own in flight on a traced device are kept",
	     no_mod[0] ? "; " : "", no_mod, no_kp[0] ? "; " : "", no_kp);
	return 0;
}

/* ---- blktrace -k ---- */

int blk_iowait_kill(const char *tracefs, char *msg, size_t len)
{
	char p[KPATH];
	int stopped, removed, failed;

	msg[0] = '\0';
	blk_ftrace_inst_del_left(tracefs, INST_PREFIX, &stopped, &removed, &failed);
	/* kprobe events left by a tracer that is gone */
	snprintf(p, sizeof(p), "%s/kprobe_events", tracefs);
	if (!access(p, F_OK)) {
		int kfailed;

		removed += blk_ftrace_kprobe_del_left(KPROBE_PREFIX, &kfailed);
		failed += kfailed;
	}
	if (failed) {
		errf(msg, len, "could not remove %d left-over I/O wait tracefs entries", failed);
		return -EBUSY;
	}
	if (stopped || removed)
		errf(msg, len,
		     "I/O waits: %d running trace(s) turned off, %d left-over tracefs entries removed",
		     stopped, removed);
	return stopped || removed;
}
