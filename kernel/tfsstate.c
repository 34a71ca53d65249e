// SPDX-License-Identifier: GPL-2.0
/* The tracefs settings a blktrace changed, and putting them back (kernel/tfsstate.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfsstate.h"

int tfs_state_set(const struct tfs_state *s, const char *rel, const char *v)
{
	char p[KPATH];

	if (snprintf(p, sizeof(p), "%s/%s", s->dir, rel) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	return write_str(p, v);
}

int tfs_state_add_event(struct tfs_state *s, const char *name)
{
	struct tfs_state_event *e = realloc(s->events, (size_t)(s->nevents + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	s->events = e;
	e += s->nevents++;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return 0;
}

int tfs_state_put_back(const struct tfs_state *s, unsigned int what)
{
	char p[KPATH], v[32];
	int ret = 0, r;

#define KEEP(x)                  \
	do {                     \
		r = (x);         \
		if (r && !ret)   \
			ret = r; \
	} while (0)
	KEEP(tfs_state_set(s, "tracing_on", "0"));
	if (what & TFS_PUT_BIN) {
		snprintf(v, sizeof(v), "%d", s->bin);
		KEEP(tfs_state_set(s, "options/bin", v));
	}
	if ((what & TFS_PUT_TRACER) && s->tracer[0])
		KEEP(tfs_state_set(s, "current_tracer", s->tracer));
	for (int i = 0; (what & TFS_PUT_DEVS) && i < s->ndevs; i++) {
		const struct tfs_state_dev *d = &s->devs[i];

		snprintf(p, sizeof(p), "/sys/class/block/%s/trace/enable", d->name);
		KEEP(write_str(p, "0"));
	}
	if ((what & TFS_PUT_BUF) && s->buf_kb[0])
		KEEP(tfs_state_set(s, "buffer_size_kb", s->buf_kb));
	if ((what & TFS_PUT_CLOCK) && s->clock[0])
		KEEP(tfs_state_set(s, "trace_clock", s->clock));
	if ((what & TFS_PUT_CMDLINES) && s->cmdlines[0])
		KEEP(tfs_state_set(s, "saved_cmdlines_size", s->cmdlines));
	if ((what & TFS_PUT_CGROUP) && s->cgroup[0])
		KEEP(tfs_state_set(s, "options/blk_cgroup", s->cgroup));
	for (int i = 0; (what & TFS_PUT_EVENTS) && i < s->nevents; i++) {
		snprintf(p, sizeof(p), "events/%s/enable", s->events[i].name);
		KEEP(tfs_state_set(s, p, "0"));
		snprintf(p, sizeof(p), "events/%s/filter", s->events[i].name);
		KEEP(tfs_state_set(s, p, "0"));
	}
	snprintf(v, sizeof(v), "%d", s->was_on);
	KEEP(tfs_state_set(s, "tracing_on", v));
#undef KEEP
	return ret;
}

int tfs_state_save(const struct tfs_state *s)
{
	char tmp[sizeof(TFS_STATE_FILE) + 16];
	FILE *f;
	int fd, ret = 0;

	if (mkdir(TFS_STATE_DIR, 0755) && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.%d", TFS_STATE_FILE, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	fprintf(f,
		"# the tracefs settings blktrace changed, as it found them: 'blktrace -k' puts them back\n");
	fprintf(f, "pid %d\ndir %s\ntracing_on %d\ncurrent_tracer %s\ntrace_clock %s\n", s->pid,
		s->dir, s->was_on, s->tracer, s->clock);
	fprintf(f, "options/bin %d\nbuffer_size_kb %s\n", s->bin, s->buf_kb);
	if (s->cmdlines[0])
		fprintf(f, "saved_cmdlines_size %s\n", s->cmdlines);
	if (s->cgroup[0])
		fprintf(f, "options/blk_cgroup %s\n", s->cgroup);
	for (int i = 0; i < s->ndevs; i++)
		fprintf(f, "dev %s\n", s->devs[i].name);
	for (int i = 0; i < s->nevents; i++)
		fprintf(f, "event %s\n", s->events[i].name);
	if (fflush(f) || fsync(fd))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, TFS_STATE_FILE))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

void tfs_state_free(struct tfs_state *s)
{
	free(s->devs);
	s->devs = NULL;
	s->ndevs = 0;
	free(s->events);
	s->events = NULL;
	s->nevents = 0;
}

/* "KEY VALUE" into @s; 0, or -EINVAL for a line that is not one */
static int state_line(struct tfs_state *s, char *line)
{
	char *v = strchr(line, ' ');

	line[strcspn(line, "\n")] = '\0';
	if (!line[0] || line[0] == '#')
		return 0;
	if (!v)
		return -EINVAL;
	*v++ = '\0';
	if (!strcmp(line, "pid"))
		s->pid = atoi(v);
	else if (!strcmp(line, "dir"))
		snprintf(s->dir, sizeof(s->dir), "%s", v);
	else if (!strcmp(line, "tracing_on"))
		s->was_on = atoi(v);
	else if (!strcmp(line, "current_tracer"))
		snprintf(s->tracer, sizeof(s->tracer), "%s", v);
	else if (!strcmp(line, "trace_clock"))
		snprintf(s->clock, sizeof(s->clock), "%s", v);
	else if (!strcmp(line, "options/bin"))
		s->bin = atoi(v);
	else if (!strcmp(line, "buffer_size_kb"))
		snprintf(s->buf_kb, sizeof(s->buf_kb), "%s", v);
	else if (!strcmp(line, "saved_cmdlines_size"))
		snprintf(s->cmdlines, sizeof(s->cmdlines), "%s", v);
	else if (!strcmp(line, "options/blk_cgroup"))
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", v);
	else if (!strcmp(line, "dev")) {
		struct tfs_state_dev *d = realloc(s->devs, (size_t)(s->ndevs + 1) * sizeof(*d));

		if (!d)
			return -ENOMEM;
		s->devs = d;
		d += s->ndevs++;
		snprintf(d->name, sizeof(d->name), "%s", v);
	} else if (!strcmp(line, "event")) {
		if (tfs_state_add_event(s, v))
			return -ENOMEM;
	} else {
		return -EINVAL;
	}
	return 0;
}

int tfs_state_load(struct tfs_state *s)
{
	FILE *f = fopen(TFS_STATE_FILE, "re");
	char line[KPATH_DIR + 64];
	int ret = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f))
		ret = state_line(s, line);
	fclose(f);
	if (!ret && (s->pid <= 0 || !s->dir[0]))
		ret = -EINVAL;
	if (ret)
		tfs_state_free(s);
	return ret;
}

void tfs_state_forget(int pid)
{
	struct tfs_state s;

	if (tfs_state_load(&s))
		return;
	if (s.pid == pid)
		unlink(TFS_STATE_FILE);
	tfs_state_free(&s);
}

void tfs_state_describe(const struct tfs_state *s, char *buf, size_t len)
{
	snprintf(
		buf, len,
		"current_tracer=%s trace_clock=%s buffer_size_kb=%s%s%s%s%s options/bin=%d tracing_on=%d%s",
		s->tracer, s->clock, s->buf_kb[0] ? s->buf_kb : "?",
		s->cmdlines[0] ? " saved_cmdlines_size=" : "", s->cmdlines,
		s->cgroup[0] ? " options/blk_cgroup=" : "", s->cgroup, s->bin, s->was_on,
		s->nevents ? " (and --origin's events off)" : "");
}
