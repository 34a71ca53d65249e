// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace "blk" tracer set up in tracefs for a set of devices (a blk_tfs session, used by
 * the tracefs backend, tfsback.c, where relay files cannot be used: kernel lockdown), and
 * blktrace -k's teardown of one. Every setting touched is saved first and put back by
 * blk_tfs_close().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blk/kernel.h"
#include "ftrace.h"
#include "holder.h"
#include "fsevents.h"
#include "tfsstate.h"
#include "tracefs.h"
#include "util.h"

#define MAX_CPUS_TRACKED 4096

struct tfs_dev {
	char dir[KPATH_SUB]; /* /sys/class/block/NAME/trace */
	int was_enabled;
	int enabled;
};

/*
 * The names saved_cmdlines gave while tracing ran (blk_tfs_names_refresh()): the kernel keeps
 * only the last few thousand tasks it saw, and pages kept until the end are converted after
 * a busy machine (or --iowait's sched events) has cycled through many more. An open-address
 * table of pids; past 3/4 full, new pids are not taken (their names may still be found at
 * the end). Locked: refreshed by the tracer's ticks, read by the conversion.
 */
#define NAMES_CAP 65536u

struct tfs_names {
	pthread_mutex_t lock;
	uint32_t *pid; /* 0: empty */
	char (*comm)[16];
	size_t n;
	unsigned long full; /* pids not taken: the table was 3/4 full */
};

struct blk_tfs {
	struct tfs_names names;
	struct tfs_state st; /* as found: dir, settings, the devices traced */
	int buf_changed, cmdlines_changed, cgroup_set, events_set;
	int tracer_set, clock_set;
	int touched; /* something was changed: restore on close */
	int state_kept; /* st is in TFS_STATE_FILE, for blktrace -k after a SIGKILL */
	struct tfs_dev *devs;
	int ndevs;
	unsigned long long base_lost[MAX_CPUS_TRACKED];
};

static int tpath(const struct blk_tfs *t, char *buf, size_t len, const char *rel)
{
	return snprintf(buf, len, "%s/%s", t->st.dir, rel) >= (int)len ? -ENAMETOOLONG : 0;
}

static int tread(const struct blk_tfs *t, const char *rel, char *buf, size_t len)
{
	char p[KPATH];

	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	return read_str(p, buf, len);
}

static int twrite(const struct blk_tfs *t, const char *rel, const char *s)
{
	return tfs_state_set(&t->st, rel, s);
}

/* "[local] global counter" -> "local" */
static void bracketed(const char *s, char *out, size_t len)
{
	const char *a = strchr(s, '['), *b = a ? strchr(a, ']') : NULL;

	if (a && b && (size_t)(b - a - 1) < len) {
		memcpy(out, a + 1, (size_t)(b - a - 1));
		out[b - a - 1] = '\0';
	} else {
		snprintf(out, len, "%s", s);
	}
}

static unsigned long long cpu_lost(const struct blk_tfs *t, int cpu)
{
	char rel[64], buf[2048], *p;
	unsigned long long total = 0;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	if (tread(t, rel, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\noverrun:");
	if (!p && !strncmp(buf, "overrun:", 8))
		p = buf - 1;
	if (p)
		total += strtoull(p + 10, NULL, 10);
	p = strstr(buf, "dropped events:");
	if (p)
		total += strtoull(p + 15, NULL, 10);
	return total;
}

/* who reads the blk tracer's pipes, 0 if nobody */
static int pipe_holder(char *comm, size_t len)
{
	return blk_holder_find(blk_holder_blk_pipe, NULL, comm, len);
}

struct blk_tfs *blk_tfs_open(const char *dir, const char *const *sysnames, int ndevs,
			     uint32_t act_mask, unsigned int buf_kb, unsigned int cmdlines,
			     int cgroup, char *err, size_t errlen)
{
	struct blk_tfs *t = calloc(1, sizeof(*t));
	char buf[4096], p[KPATH];
	int ret;

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->names.lock, NULL);
	snprintf(t->st.dir, sizeof(t->st.dir), "%s", dir);
	t->st.pid = (int)getpid();
	t->devs = calloc((size_t)ndevs, sizeof(*t->devs));
	t->st.devs = calloc((size_t)ndevs, sizeof(*t->st.devs));
	if (!t->devs || !t->st.devs) {
		free(t->devs);
		free(t->st.devs);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* save */
	if ((ret = tread(t, "tracing_on", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/tracing_on': %s", dir, strerror(-ret));
		goto fail;
	}
	t->st.was_on = atoi(buf);
	if ((ret = tread(t, "current_tracer", t->st.tracer, sizeof(t->st.tracer)))) {
		kerr(err, errlen, "cannot read '%s/current_tracer': %s", dir, strerror(-ret));
		goto fail;
	}
	if (tread(t, "available_tracers", buf, sizeof(buf)) || !strstr(buf, "blk")) {
		ret = -EOPNOTSUPP;
		kerr(err, errlen, "the kernel has no 'blk' tracer (CONFIG_BLK_DEV_IO_TRACE)");
		goto fail;
	}
	if (!strcmp(t->st.tracer, "blk")) {
		char comm[64];
		int pid = pipe_holder(comm, sizeof(comm));

		ret = -EBUSY;
		if (pid)
			kerr(err, errlen,
			     "the blk tracer in '%s' is in use: process %d (%s) is tracing; stop it first (kill -INT %d)",
			     dir, pid, comm, pid);
		else
			kerr(err, errlen,
			     "the blk tracer in '%s' is set up but no process reads it: left set up by a blktrace that was killed",
			     dir);
		goto fail;
	}
	if (strcmp(t->st.tracer, "nop")) {
		ret = -EBUSY;
		kerr(err, errlen, "tracefs is in use by the '%s' tracer", t->st.tracer);
		goto fail;
	}
	if ((ret = tread(t, "trace_clock", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/trace_clock': %s", dir, strerror(-ret));
		goto fail;
	}
	bracketed(buf, t->st.clock, sizeof(t->st.clock));
	if ((ret = tread(t, "options/bin", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/options/bin': %s", dir, strerror(-ret));
		goto fail;
	}
	t->st.bin = atoi(buf);
	if (!tread(t, "buffer_size_kb", buf, sizeof(buf))) {
		char *e = strstr(buf, "expanded: ");

		/* an unexpanded buffer cannot be put back: keep the size it expands to */
		snprintf(t->st.buf_kb, sizeof(t->st.buf_kb), "%lu",
			 strtoul(e ? e + 10 : buf, NULL, 10));
	}
	if (cmdlines && !tread(t, "saved_cmdlines_size", buf, sizeof(buf)) &&
	    strtoul(buf, NULL, 10) < cmdlines)
		snprintf(t->st.cmdlines, sizeof(t->st.cmdlines), "%s", buf);
	if (cgroup) {
		if ((ret = tread(t, "options/blk_cgroup", buf, sizeof(buf)))) {
			kerr(err, errlen,
			     "--origin needs the blk tracer's blk_cgroup option, but '%s/options/blk_cgroup' cannot be read: %s (a kernel without CONFIG_BLK_CGROUP?)",
			     dir, strerror(-ret));
			goto fail;
		}
		snprintf(t->st.cgroup, sizeof(t->st.cgroup), "%d", atoi(buf));
	}
	for (int i = 0; i < ndevs; i++) {
		struct tfs_dev *d = &t->devs[i];

		snprintf(t->st.devs[i].name, sizeof(t->st.devs[i].name), "%s", sysnames[i]);
		snprintf(d->dir, sizeof(d->dir), "/sys/class/block/%s/trace", sysnames[i]);
		snprintf(p, sizeof(p), "%s/enable", d->dir);
		if ((ret = read_str(p, buf, sizeof(buf)))) {
			kerr(err, errlen, "cannot read '%s': %s", p, strerror(-ret));
			goto fail;
		}
		d->was_enabled = atoi(buf);
		if (d->was_enabled) {
			ret = -EBUSY;
			kerr(err, errlen,
			     "'%s' is already being traced through tracefs ('%s' is 1)",
			     sysnames[i], p);
			goto fail;
		}
	}
	t->ndevs = ndevs;
	t->st.ndevs = ndevs;
	/* kept where blktrace -k finds it after a SIGKILL; tracing goes on without it (no /run) */
	t->state_kept = !tfs_state_save(&t->st);

	/* set up */
	t->touched = 1;
	if ((ret = twrite(t, "tracing_on", "0")))
		goto werr;
	t->clock_set = 1;
	if ((ret = twrite(t, "trace_clock", "mono")))
		goto werr;
	if (buf_kb) {
		snprintf(buf, sizeof(buf), "%u", buf_kb);
		t->buf_changed = 1;
		if ((ret = twrite(t, "buffer_size_kb", buf)))
			goto werr;
	}
	if (t->st.cmdlines[0]) {
		snprintf(buf, sizeof(buf), "%u", cmdlines);
		t->cmdlines_changed = 1;
		if ((ret = twrite(t, "saved_cmdlines_size", buf)))
			goto werr;
	}
	for (int i = 0; i < ndevs; i++) {
		struct tfs_dev *d = &t->devs[i];

		snprintf(p, sizeof(p), "%s/enable", d->dir);
		d->enabled = 1;
		if ((ret = write_str(p, "1"))) {
			kerr(err, errlen, "cannot enable tracing of '%s' (%s): %s", sysnames[i], p,
			     strerror(-ret));
			goto fail;
		}
		if (act_mask) {
			snprintf(p, sizeof(p), "%s/act_mask", d->dir);
			snprintf(buf, sizeof(buf), "0x%x", act_mask);
			if ((ret = write_str(p, buf))) {
				kerr(err, errlen, "cannot set '%s': %s", p, strerror(-ret));
				goto fail;
			}
		}
	}
	t->tracer_set = 1;
	if ((ret = twrite(t, "current_tracer", "blk")))
		goto werr;
	if (cgroup) {
		/* the tracer's flags are global: every instance's blk tracer tags I/O while set */
		t->cgroup_set = 1;
		if ((ret = twrite(t, "options/blk_cgroup", "1")))
			goto werr;
	}
	/* options/bin is left as found: the raw pages are the ring's entries whatever it says */
	/* old contents would be read as records: start empty */
	if ((ret = twrite(t, "trace", "")))
		goto werr;
	for (int c = 0; c < MAX_CPUS_TRACKED; c++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "per_cpu/cpu%d", c);
		if (tpath(t, p, sizeof(p), rel) || access(p, F_OK))
			break;
		t->base_lost[c] = cpu_lost(t, c);
	}
	return t;
werr:
	kerr(err, errlen, "cannot set up the blk tracer in '%s': %s", dir, strerror(-ret));
fail:
	blk_tfs_close(t);
	errno = -ret;
	return NULL;
}

int blk_tfs_start(struct blk_tfs *t)
{
	return twrite(t, "tracing_on", "1");
}

int blk_tfs_stop(struct blk_tfs *t)
{
	return twrite(t, "tracing_on", "0");
}

int blk_tfs_event_format(struct blk_tfs *t, const char *event, char *buf, size_t len)
{
	char rel[KPATH_SUB];

	snprintf(rel, sizeof(rel), "events/%s/format", event);
	return tread(t, rel, buf, len);
}

int blk_tfs_enable_event(struct blk_tfs *t, const char *event, const char *filter, int *filtered)
{
	char rel[KPATH_SUB], buf[256];
	int ret;

	*filtered = 0;
	snprintf(rel, sizeof(rel), "events/%s/enable", event);
	if ((ret = tread(t, rel, buf, sizeof(buf))))
		return ret;
	/* someone else's (enabled, or filtered, at the top level): left as it is */
	if (atoi(buf))
		return -EBUSY;
	snprintf(rel, sizeof(rel), "events/%s/filter", event);
	if (!tread(t, rel, buf, sizeof(buf)) && strcmp(buf, "none"))
		return -EBUSY;
	if (tfs_state_add_event(&t->st, event))
		return -ENOMEM;
	t->events_set = 1;
	if (t->state_kept)
		tfs_state_save(&t->st);
	if (filter && filter[0])
		*filtered = !twrite(t, rel, filter);
	snprintf(rel, sizeof(rel), "events/%s/enable", event);
	return twrite(t, rel, "1");
}

int blk_tfs_resize(struct blk_tfs *t, unsigned int kb)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", kb);
	t->buf_changed = 1;
	return twrite(t, "buffer_size_kb", v);
}

int blk_tfs_open_cpu(struct blk_tfs *t, int cpu)
{
	char rel[64], p[KPATH];
	int fd;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

unsigned long long blk_tfs_lost(struct blk_tfs *t, int cpu)
{
	unsigned long long now = cpu_lost(t, cpu);

	if (cpu < 0 || cpu >= MAX_CPUS_TRACKED)
		return now;
	return now >= t->base_lost[cpu] ? now - t->base_lost[cpu] : now;
}

/* the slot of @pid in @nm (its own, or the empty one where it would go) */
static size_t name_slot(const struct tfs_names *nm, uint32_t pid)
{
	size_t i = (pid * 2654435761u) & (NAMES_CAP - 1);

	while (nm->pid[i] && nm->pid[i] != pid)
		i = (i + 1) & (NAMES_CAP - 1);
	return i;
}

/*
 * Each line "PID COMM" of saved_cmdlines to @fn (with @arg) until it returns nonzero;
 * 1 found, 0 not, -1 unreadable
 */
static int cmdlines_each(const struct blk_tfs *t, int (*fn)(void *arg, uint32_t pid, char *comm),
			 void *arg)
{
	char p[KPATH], line[256];
	int found = 0;
	FILE *f;

	if (tpath(t, p, sizeof(p), "saved_cmdlines"))
		return -1;
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		sp++;
		sp[strcspn(sp, "\n")] = '\0';
		found = fn(arg, (uint32_t)strtoul(line, NULL, 10), sp);
	}
	fclose(f);
	return found;
}

static int names_put(void *arg, uint32_t pid, char *comm)
{
	struct tfs_names *nm = arg;
	size_t i;

	if (!pid || !strcmp(comm, "<...>"))
		return 0;
	i = name_slot(nm, pid);
	if (!nm->pid[i]) {
		if (nm->n >= NAMES_CAP / 4 * 3) {
			nm->full++;
			return 0;
		}
		nm->pid[i] = pid;
		nm->n++;
	}
	snprintf(nm->comm[i], sizeof(nm->comm[i]), "%s", comm);
	return 0;
}

void blk_tfs_names_refresh(struct blk_tfs *t)
{
	struct tfs_names *nm = &t->names;

	pthread_mutex_lock(&nm->lock);
	if (!nm->pid) {
		nm->pid = calloc(NAMES_CAP, sizeof(*nm->pid));
		nm->comm = calloc(NAMES_CAP, sizeof(*nm->comm));
		if (!nm->pid || !nm->comm) {
			free(nm->pid);
			free(nm->comm);
			nm->pid = NULL;
			nm->comm = NULL;
		}
	}
	if (nm->pid)
		cmdlines_each(t, names_put, nm);
	pthread_mutex_unlock(&nm->lock);
}

const char *blk_tfs_comm(struct blk_tfs *t, uint32_t pid, char *buf, size_t len)
{
	struct tfs_names *nm = &t->names;
	const char *got = NULL;

	/* the kernel's latest name first; else the one it gave while the trace ran */
	if (blk_ftrace_saved_comm(t->st.dir, pid, buf, len))
		return buf;
	pthread_mutex_lock(&nm->lock);
	if (nm->pid && pid) {
		size_t i = name_slot(nm, pid);

		if (nm->pid[i]) {
			snprintf(buf, len, "%s", nm->comm[i]);
			got = buf;
		}
	}
	pthread_mutex_unlock(&nm->lock);
	return got;
}

int blk_tfs_close(struct blk_tfs *t)
{
	unsigned int what = 0;
	int ret = 0;

	if (!t)
		return 0;
	if (t->touched) {
		what |= t->tracer_set ? TFS_PUT_TRACER : 0;
		what |= t->buf_changed ? TFS_PUT_BUF : 0;
		what |= t->clock_set ? TFS_PUT_CLOCK : 0;
		what |= t->cmdlines_changed ? TFS_PUT_CMDLINES : 0;
		what |= t->cgroup_set ? TFS_PUT_CGROUP : 0;
		what |= t->events_set ? TFS_PUT_EVENTS : 0;
		for (int i = 0; i < t->ndevs; i++)
			what |= t->devs[i].enabled ? TFS_PUT_DEVS : 0;
		ret = tfs_state_put_back(&t->st, what);
	}
	/* kept when something could not be put back: blktrace -k tries again */
	if (t->state_kept && !ret)
		tfs_state_forget(t->st.pid);
	free(t->devs);
	tfs_state_free(&t->st);
	free(t->names.pid);
	free(t->names.comm);
	pthread_mutex_destroy(&t->names.lock);
	free(t);
	return ret;
}

/*
 * No state file says which events a killed blktrace --origin enabled: those of its events
 * enabled with a filter of its making (on device numbers: "name == "MAJ:MIN"", "dev == N"
 * and the like) are turned off. Return how many, or -errno.
 */
static int origin_events_off(struct blk_tfs *t)
{
	static const char *const ours[] = {"name == \"", "s_dev == ", "dev == ", "bdev == "};
	char rel[256], buf[4096];
	int n = 0;

	for (int e = 0; e < BLK_FSEV_NEV; e++) {
		const char *name = blk_fsev_ev_name((enum blk_fsev_ev)e);
		int mine = 0;

		snprintf(rel, sizeof(rel), "events/%s/enable", name);
		if (tread(t, rel, buf, sizeof(buf)) || !atoi(buf))
			continue;
		snprintf(rel, sizeof(rel), "events/%s/filter", name);
		if (tread(t, rel, buf, sizeof(buf)))
			continue;
		for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			mine |= !strncmp(buf, ours[i], strlen(ours[i]));
		if (!mine)
			continue;
		if (twrite(t, rel, "0"))
			return -EIO;
		snprintf(rel, sizeof(rel), "events/%s/enable", name);
		if (twrite(t, rel, "0"))
			return -EIO;
		n++;
	}
	return n;
}

/*
 * No process traces: put back what the state file of a killed tracer says it found, when
 * it is about @dir. Return 2 done (@msg says what), 0 no such file, -errno.
 */
static int put_back_left(const char *dir, char *msg, size_t len)
{
	struct tfs_state st;
	char what[256];
	int ret = tfs_state_load(&st);

	if (ret == -ENOENT)
		return 0;
	if (ret) {
		kerr(msg, len, "cannot read '%s': %s (remove it if it is not blktrace's)",
		     TFS_STATE_FILE, strerror(-ret));
		return ret;
	}
	if (strcmp(st.dir, dir) || blk_pid_alive(st.pid)) {
		tfs_state_free(&st);
		return 0;
	}
	ret = tfs_state_put_back(&st, TFS_PUT_ALL);
	tfs_state_describe(&st, what, sizeof(what));
	if (ret)
		kerr(msg, len, "could not put back every tracefs setting in '%s' (%s): %s", dir,
		     what, strerror(-ret));
	else
		kerr(msg, len,
		     "put back the tracefs settings blktrace %d (killed) had changed in '%s': %s",
		     st.pid, dir, what);
	if (!ret)
		unlink(TFS_STATE_FILE);
	tfs_state_free(&st);
	return ret ? ret : 2;
}

int blk_tfs_kill(const char *dir, const char *const *sysnames, int ndevs, int wait_ms, char *msg,
		 size_t len)
{
	struct blk_tfs t;
	char buf[256], p[KPATH], comm[64];
	int ret = 0, pid, cg, ev;

	memset(&t, 0, sizeof(t));
	snprintf(t.st.dir, sizeof(t.st.dir), "%s", dir);
	if (tread(&t, "current_tracer", buf, sizeof(buf)))
		return 0;
	if (strcmp(buf, "blk"))
		return put_back_left(dir, msg, len);
	/* turning a device off is what a running tracer of ours watches for */
	for (int i = 0; i < ndevs; i++) {
		snprintf(p, sizeof(p), "/sys/class/block/%s/trace/enable", sysnames[i]);
		if (!read_str(p, buf, sizeof(buf)) && atoi(buf) && write_str(p, "0") && !ret) {
			ret = -EIO;
			kerr(msg, len, "cannot turn off '%s'", p);
		}
	}
	if (ret)
		return ret;
	pid = pipe_holder(comm, sizeof(comm));
	if (pid) {
		/* a tracer is reading: it puts tracefs back itself when it notices */
		for (int waited = 0; waited < wait_ms; waited += 50) {
			if (!tread(&t, "current_tracer", buf, sizeof(buf)) && strcmp(buf, "blk")) {
				kerr(msg, len, "stopped the running trace (pid %d, %s)", pid, comm);
				return 1;
			}
			usleep(50 * 1000);
		}
		kerr(msg, len,
		     "the tracer reading '%s' (pid %d, %s) did not stop within %d ms; stop it with 'kill %d'",
		     dir, pid, comm, wait_ms, pid);
		return -EBUSY;
	}
	/* nobody reads: a tracer killed with SIGKILL left it set up */
	ret = put_back_left(dir, msg, len);
	if (ret)
		return ret;
	/* no state file (a tracer of before it, or /run not writable): what is known */
	if (twrite(&t, "current_tracer", "nop")) {
		kerr(msg, len, "cannot reset '%s/current_tracer'", dir);
		return -EIO;
	}
	if (twrite(&t, "options/bin", "0")) {
		kerr(msg, len, "cannot reset '%s/options/bin'", dir);
		return -EIO;
	}
	/* --origin's option: off, the kernel's default (a kernel without it has no file) */
	cg = !tread(&t, "options/blk_cgroup", buf, sizeof(buf)) && atoi(buf);
	if (cg && twrite(&t, "options/blk_cgroup", "0")) {
		kerr(msg, len, "cannot reset '%s/options/blk_cgroup'", dir);
		return -EIO;
	}
	ev = origin_events_off(&t);
	if (ev < 0) {
		kerr(msg, len,
		     "cannot turn off the events blktrace --origin enabled in '%s/events'", dir);
		return -EIO;
	}
	kerr(msg, len,
	     "reset the tracefs blk tracer left set up in '%s' (current_tracer=nop options/bin=0%s%s); "
	     "no %s says what trace_clock and buffer_size_kb were",
	     dir, cg ? " options/blk_cgroup=0" : "", ev ? ", --origin's events off" : "",
	     TFS_STATE_FILE);
	return 2;
}
