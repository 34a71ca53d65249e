/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The devices and processes btt has seen: lookup and creation, the names it prints for
 * them (-M maps a device to a name), the -D filter and the order of the report.
 */
#ifndef BTT_DEVS_H
#define BTT_DEVS_H

#include <stddef.h>
#include <stdint.h>

#define BTT_LABEL_LEN 64

/**
 * struct btt_dev - a device named by the trace
 * @device: the device number as the trace records it (BLK_MAJOR(), BLK_MINOR())
 * @idx: dense index, in creation order (outputs keep per-device state in arrays by it)
 * @remapper: an md or dm device (major 9, 253, 254): its Q2Q, Q2A and Q2C are the "dm" rows
 * @shown: listed by -D (every device without -D)
 * @pre_culling: set until the device's first Q or A: until then the I/O model ignores
 *	its events, as btt 2.09 does
 * @name: "8,0", or the -M name: what btt puts in file names
 * @label: "(  8,  0)", or the -M name: what btt prints in its tables
 * @mapped: @name and @label are the -M name
 * @trace_name: the name the trace's device name note gives (trace.h BLK_TN_DEVNAME), or ""
 * @first_ns: time of the event that named it first
 * @last_ns: time of the last event the model took on it
 */
struct btt_dev {
	uint32_t device;
	uint32_t idx;
	int remapper;
	int shown;
	int pre_culling;
	char name[BTT_LABEL_LEN];
	char label[BTT_LABEL_LEN];
	int mapped;
	char trace_name[BTT_LABEL_LEN];
	uint64_t first_ns, last_ns;
};

/*
 * The name btt's newer outputs (Perfetto, the export) give @dip: the -M name, else the
 * trace's name for it, else "8,0". The classic report keeps @name and @label.
 */
static inline const char *devs_out_name(const struct btt_dev *dip)
{
	return !dip->mapped && dip->trace_name[0] ? dip->trace_name : dip->name;
}

/**
 * struct btt_proc - a process, by name (pids whose notes give the same name share one);
 * a pid never named by a note is "pid%09u"
 * @idx: dense index, in creation order
 */
struct btt_proc {
	char *name;
	uint32_t idx;
};

struct btt_pid_slot {
	uint32_t pid;
	struct btt_proc *pip;
};

struct btt_devmap {
	uint32_t device;
	char name[BTT_LABEL_LEN];
};

/**
 * struct btt_devs - the registry
 * @v: the devices, in creation order (@n of them)
 * @out: the shown devices in report order (@nout): creation order, or with -D the order
 *	of the list; kept up to date as devices appear
 * @procs: the processes (@nprocs): in creation order, by name after devs_sort_procs()
 */
struct btt_devs {
	struct btt_dev **v;
	size_t n, alloc;
	struct btt_dev **out;
	size_t nout, aout;
	struct btt_proc **procs;
	size_t nprocs, aprocs;
	const char *filter; /* -D "maj,min;maj,min", or NULL */
	struct btt_pid_slot *pids;
	size_t npids, apids;
	struct btt_dev *last; /* of the last lookup */
	uint32_t last_pid; /* and the process of the last pid looked up (if last_proc) */
	struct btt_proc *last_proc;
	struct btt_devmap *maps;
	size_t nmaps;
	struct btt_devmap *tnames; /* names from the trace's notes, of devices not yet seen */
	size_t ntnames, atnames;
};

/* @filter: the -D list (NULL: every device is shown); kept, not copied */
void devs_init(struct btt_devs *d, const char *filter);

/*
 * -M: read "<name> <maj>,<min>" lines from @path (reading stops at a line that mentions
 * "Device" or does not parse). 0 or -errno.
 */
int devs_load_map(struct btt_devs *d, const char *path);

/*
 * The trace names @device @name (a device name note): the device's trace_name, now or when
 * it appears (the first name of a device stays).
 */
void devs_name_from_trace(struct btt_devs *d, uint32_t device, const char *name);

/* the device @device, or NULL */
struct btt_dev *devs_find(struct btt_devs *d, uint32_t device);

/* the device @device, created (at @time, *@created set) when new; never NULL */
struct btt_dev *devs_get_slow(struct btt_devs *d, uint32_t device, uint64_t time, int *created);

static inline struct btt_dev *devs_get(struct btt_devs *d, uint32_t device, uint64_t time,
				       int *created)
{
	/* the device of the last event, mostly */
	if (d->last && d->last->device == device) {
		*created = 0;
		return d->last;
	}
	return devs_get_slow(d, device, time, created);
}

/* the process of @pid, or NULL */
struct btt_proc *procs_find(const struct btt_devs *d, uint32_t pid);

/* the process of @pid, named "pid%09u" when no note named it; never NULL */
struct btt_proc *procs_get_slow(struct btt_devs *d, uint32_t pid);

static inline struct btt_proc *procs_get(struct btt_devs *d, uint32_t pid)
{
	if (d->last_proc && d->last_pid == pid)
		return d->last_proc;
	return procs_get_slow(d, pid);
}

/* a note names @pid (the first name of a pid stays) */
void procs_register(struct btt_devs *d, uint32_t pid, const char *name);

/* sort d->procs by name, for the report (the indexes stay) */
void devs_sort_procs(struct btt_devs *d);

/* free everything; @d is left initialised (without filter) */
void devs_release(struct btt_devs *d);

#endif /* BTT_DEVS_H */
