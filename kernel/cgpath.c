// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup ids named by their paths (cgpath.h). The kernel's id (cgroup_id(), the kernfs
 * node id) is the inode number of the directory on 64-bit kernels; where ino_t is 32 bits
 * the inode number is its low half (the high half a generation), and that is compared.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk/trace.h"
#include "cgpath.h"
#include "util.h"

struct cg_entry {
	uint64_t ino;
	char *path; /* NULL: looked for and not found */
	int asked; /* its id was looked up */
};

struct blk_cgpath {
	pthread_mutex_t mu;
	char root[KPATH_DIR];
	int version;
	struct cg_entry *e;
	size_t n, cap;
	unsigned long unknown, named;
};

/* the id as the directory's inode number can show it */
static uint64_t id_ino(uint64_t id)
{
	return sizeof(ino_t) >= sizeof(uint64_t) ? id : (uint32_t)id;
}

static struct cg_entry *find(struct blk_cgpath *r, uint64_t ino)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].ino == ino)
			return &r->e[i];
	return NULL;
}

static int add(struct blk_cgpath *r, uint64_t ino, const char *path)
{
	struct cg_entry *e = find(r, ino);
	char *p = path ? strdup(path) : NULL;

	if (path && !p)
		return -ENOMEM;
	if (e) {
		if (p) {
			free(e->path);
			e->path = p;
		}
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct cg_entry *n = realloc(r->e, cap * sizeof(*n));

		if (!n) {
			free(p);
			return -ENOMEM;
		}
		r->e = n;
		r->cap = cap;
	}
	r->e[r->n].ino = ino;
	r->e[r->n].path = p;
	r->e[r->n].asked = 0;
	r->n++;
	return 0;
}

/* every directory below @dirfd (the hierarchy's @rel, "" at the root), depth first */
static void walk(struct blk_cgpath *r, int dirfd, char *rel, size_t len, size_t cap)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t n = strlen(de->d_name);
		int fd;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || len + 1 + n >= cap)
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		rel[len] = '/';
		memcpy(rel + len + 1, de->d_name, n + 1);
		add(r, (uint64_t)st.st_ino, rel);
		walk(r, fd, rel, len + 1 + n, cap);
		rel[len] = '\0';
	}
	closedir(d);
}

static void walk_all(struct blk_cgpath *r)
{
	char rel[BLK_CGPATH_MAX + 1];
	struct stat st;
	int fd = open(r->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (!fstat(fd, &st))
		add(r, (uint64_t)st.st_ino, "/");
	rel[0] = '\0';
	walk(r, fd, rel, 0, sizeof(rel));
}

/* the mount of the block I/O controller's hierarchy: v1 "blkio", else v2 */
static int find_root(struct blk_cgpath *r)
{
	char dev[256], dir[KPATH_DIR], type[64], opts[1024];
	FILE *f = fopen("/proc/self/mounts", "re");
	int found = 0;

	if (!f)
		return -errno;
	while (fscanf(f, "%255s %4095s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
		if (!strcmp(type, "cgroup")) {
			char *save = NULL;

			for (char *o = strtok_r(opts, ",", &save); o;
			     o = strtok_r(NULL, ",", &save))
				if (!strcmp(o, "blkio")) {
					snprintf(r->root, sizeof(r->root), "%s", dir);
					r->version = 1;
					found = 1;
				}
		} else if (!strcmp(type, "cgroup2") && !r->version) {
			snprintf(r->root, sizeof(r->root), "%s", dir);
			r->version = 2;
		}
		if (found)
			break;
	}
	fclose(f);
	return r->version ? 0 : -ENOENT;
}

struct blk_cgpath *blk_cgpath_new(void)
{
	struct blk_cgpath *r = calloc(1, sizeof(*r));
	int ret;

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	ret = find_root(r);
	if (ret) {
		free(r);
		errno = -ret;
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	walk_all(r);
	return r;
}

const char *blk_cgpath_lookup(struct blk_cgpath *r, uint64_t id, char *buf, size_t len)
{
	uint64_t ino = id_ino(id);
	const char *ret = NULL;
	struct cg_entry *e;

	pthread_mutex_lock(&r->mu);
	e = find(r, ino);
	if (!e) {
		walk_all(r);
		e = find(r, ino);
		if (!e) {
			/* found nowhere: remembered, so that it is walked for and counted once */
			r->unknown++;
			add(r, ino, NULL);
		}
	}
	e = e ? e : find(r, ino);
	if (e && e->path && !e->asked)
		r->named++;
	if (e)
		e->asked = 1;
	if (e && e->path && strlen(e->path) < len) {
		memcpy(buf, e->path, strlen(e->path) + 1);
		ret = buf;
	}
	pthread_mutex_unlock(&r->mu);
	return ret;
}

void blk_cgpath_refresh(struct blk_cgpath *r)
{
	pthread_mutex_lock(&r->mu);
	walk_all(r);
	pthread_mutex_unlock(&r->mu);
}

void blk_cgpath_counts(struct blk_cgpath *r, unsigned long *named, unsigned long *unknown)
{
	pthread_mutex_lock(&r->mu);
	*named = r->named;
	*unknown = r->unknown;
	pthread_mutex_unlock(&r->mu);
}

const char *blk_cgpath_root(const struct blk_cgpath *r, int *version)
{
	*version = r->version;
	return r->root;
}

void blk_cgpath_free(struct blk_cgpath *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->e[i].path);
	pthread_mutex_destroy(&r->mu);
	free(r->e);
	free(r);
}
