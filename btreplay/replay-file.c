// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU file lookup and header check shared by btrecord and btreplay.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-file.h"

#define RF_MAX_CPU 65535

/* "123" -> 123; anything else (empty, sign, leading zero, too large) -> -1 */
static int parse_cpu(const char *s)
{
	long v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > RF_MAX_CPU)
			return -1;
	}
	return (int)v;
}

/* The device part of @name if it reads "DEV.@mid.CPU" (the last such split), else NULL. */
static char *match_any(const char *name, const char *mid, int *cpu)
{
	size_t ml = strlen(mid);
	const char *p, *hit = NULL;

	for (p = strchr(name, '.'); p; p = strchr(p + 1, '.')) {
		if (p > name && !strncmp(p + 1, mid, ml) && p[1 + ml] == '.' &&
		    parse_cpu(p + 2 + ml) >= 0)
			hit = p;
	}
	if (!hit)
		return NULL;
	*cpu = parse_cpu(hit + 2 + ml);
	return strndup(name, (size_t)(hit - name));
}

static int match_dev(const char *name, const char *base, const char *mid, int *cpu)
{
	size_t bl = strlen(base), ml = strlen(mid);

	if (strncmp(name, base, bl) || name[bl] != '.' || strncmp(name + bl + 1, mid, ml) ||
	    name[bl + 1 + ml] != '.')
		return 0;
	*cpu = parse_cpu(name + bl + 2 + ml);
	return *cpu >= 0;
}

static int add(struct rf_list *l, const char *dir, const char *dev, char *owned_dev, int cpu,
	       const char *mid)
{
	struct rf_input *in;
	char *path = NULL;

	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 16;
		struct rf_input *v = realloc(l->v, na * sizeof(*v));

		if (!v)
			goto fail;
		l->v = v;
		l->alloc = na;
	}
	if (asprintf(&path, "%s/%s.%s.%d", dir, dev, mid, cpu) < 0)
		goto fail;
	in = &l->v[l->n];
	in->dev = owned_dev ? owned_dev : strdup(dev);
	if (!in->dev) {
		free(path);
		goto fail;
	}
	in->path = path;
	in->cpu = cpu;
	l->n++;
	return 0;
fail:
	free(owned_dev);
	return -ENOMEM;
}

static int cmp_input(const void *a, const void *b)
{
	const struct rf_input *x = a, *y = b;
	int c = strcmp(x->dev, y->dev);

	if (c)
		return c;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

int rf_find(struct rf_list *l, const char *dir, const char *dev, const char *mid)
{
	const char *base = NULL, *slash;
	char *sub = NULL;
	size_t first = l->n;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (dev) {
		/* "dir/name" given as a device: look in that directory for "name.MID.N" */
		slash = strrchr(dev, '/');
		base = slash ? slash + 1 : dev;
		if (slash && asprintf(&sub, "%s/%.*s", dir, (int)(slash - dev), dev) < 0)
			return -ENOMEM;
	}
	d = opendir(sub ? sub : dir);
	free(sub);
	if (!d)
		return sub && errno == ENOENT ? 0 : -errno;
	while ((errno = 0, de = readdir(d)) != NULL) {
		char *found = NULL;
		int cpu;

		if (dev) {
			if (!match_dev(de->d_name, base, mid, &cpu))
				continue;
		} else if (!(found = match_any(de->d_name, mid, &cpu))) {
			continue;
		}
		ret = add(l, dir, found ? found : dev, found, cpu, mid);
		if (ret)
			break;
	}
	if (!ret && errno)
		ret = -errno;
	closedir(d);
	if (ret)
		return ret;
	if (l->n > first)
		qsort(l->v + first, l->n - first, sizeof(*l->v), cmp_input);
	return (int)(l->n - first);
}

int rf_find_devs(struct rf_list *l, const char *dir, const char *const *devs, int ndevs,
		 const char *mid, int *which)
{
	for (int i = 0; i < ndevs; i++) {
		int dup = 0, n;

		for (int j = 0; j < i; j++)
			dup |= !strcmp(devs[j], devs[i]);
		if (dup)
			continue;
		n = rf_find(l, dir, devs[i], mid);
		if (n > 0)
			continue;
		*which = i;
		return n < 0 ? n : 1;
	}
	return 0;
}

void rf_list_release(struct rf_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].dev);
		free(l->v[i].path);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->alloc = 0;
}

int rf_check_hdr(const struct rf_file_hdr *h)
{
	if (h->version == RF_VERSION)
		return 0;
	if (h->version == __builtin_bswap64(RF_VERSION))
		return -EPROTO;
	return -EINVAL;
}
