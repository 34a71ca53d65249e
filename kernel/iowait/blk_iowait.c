// SPDX-License-Identifier: GPL-2.0
/*
 * blk_iowait: every interval a task spends waiting for I/O, as a tracepoint
 * (blk_iowait:iowait, trace/events/blk_iowait.h) that Perfetto shows as a slice, and as
 * one event at its end (blk_iowait:iowait_end) that blktrace --iowait records beside the
 * block events.
 *
 * A kretprobe with an entry handler on io_schedule, io_schedule_timeout and, where it
 * exists, blk_io_schedule (which calls one of the others: only the outermost call of a
 * task is a wait). The entry time is kept in the instance's data area. A probe holds
 * maxactive instances (one per task waiting in that function at once); a wait that finds
 * none is not seen, and counted: the nmissed parameter reads the sum, so that a tracer
 * reports the lost waits. A probe on sched_waking notes the CPU that wakes a waiting task,
 * through a small table of the tasks waiting (probed, so its cost is bounded).
 *
 * Parameters (/sys/module/blk_iowait/parameters/): maxactive (at load; 0 = 2 x possible
 * CPUs), nmissed (read-only), functions (read-only: the functions probed).
 */
#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#define CREATE_TRACE_POINTS
#include "trace/events/blk_iowait.h"

MODULE_LICENSE("GPL");
MODULE_AUTHOR("blktrace-ng");
MODULE_DESCRIPTION("I/O waits of tasks as kernel track event tracepoints (blktrace --iowait, Perfetto)");
MODULE_VERSION("1.1");

static int maxactive;
module_param(maxactive, int, 0444);
MODULE_PARM_DESC(maxactive,
		 "tasks followed at once in each probed function (kretprobe instances); 0 (default): 2 x possible CPUs");

/* The function numbers, as enum blk_iowait_func of blktrace-ng's include/blk/trace.h. */
enum { FN_IO_SCHEDULE = 1, FN_IO_SCHEDULE_TIMEOUT = 2, FN_BLK_IO_SCHEDULE = 3 };

struct iw_data {
	u64 start_ns;
	int sleep_cpu;
	int slot; /* in the table of waiting tasks, or -1 */
	int func;
};

static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs);
static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs);

#define PROBE(sym)                                                                 \
	{                                                                                \
		.kp.symbol_name = sym, .handler = ret_handler, .entry_handler = entry_handler, \
		.data_size = sizeof(struct iw_data),                                     \
	}

static struct kretprobe probes[] = {
	PROBE("blk_io_schedule"),
	PROBE("io_schedule"),
	PROBE("io_schedule_timeout"),
};
static const int probe_func[] = {FN_BLK_IO_SCHEDULE, FN_IO_SCHEDULE, FN_IO_SCHEDULE_TIMEOUT};
static bool registered[ARRAY_SIZE(probes)];

/*
 * The tasks waiting: a table of 4 x maxactive slots (a power of two); a task takes the
 * first free slot among the PROBE_LEN from its hash and frees it at its return. Lookups
 * read those PROBE_LEN slots (no tombstones): a task finds itself (a nested call) and
 * sched_waking finds the task it wakes. A task that finds no free slot still waits; only
 * its waker is not known and its nested calls are not recognised (counted in untracked).
 */
#define PROBE_LEN 16

struct iw_slot {
	struct task_struct *task;
	int waker_cpu;
};

static struct iw_slot *slots;
static unsigned int slot_bits;
static atomic_long_t untracked;

static int slot_find(struct task_struct *t)
{
	unsigned int mask = (1u << slot_bits) - 1, h = hash_ptr(t, slot_bits);

	for (unsigned int i = 0; i < PROBE_LEN; i++) {
		unsigned int s = (h + i) & mask;

		if (READ_ONCE(slots[s].task) == t)
			return (int)s;
	}
	return -1;
}

static int slot_claim(struct task_struct *t)
{
	unsigned int mask = (1u << slot_bits) - 1, h = hash_ptr(t, slot_bits);

	for (unsigned int i = 0; i < PROBE_LEN; i++) {
		unsigned int s = (h + i) & mask;

		if (!READ_ONCE(slots[s].task) && !cmpxchg(&slots[s].task, NULL, t)) {
			WRITE_ONCE(slots[s].waker_cpu, -1);
			return (int)s;
		}
	}
	atomic_long_inc(&untracked);
	return -1;
}

static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct iw_data *d = (struct iw_data *)ri->data;
	struct kretprobe *rp = get_kretprobe(ri);

	/* inside another probed function (blk_io_schedule -> io_schedule_timeout) */
	if (slot_find(current) >= 0)
		return 1; /* no return handler for this instance */
	d->slot = slot_claim(current);
	d->start_ns = ktime_get_ns();
	d->sleep_cpu = raw_smp_processor_id();
	d->func = rp ? probe_func[rp - probes] : 0;
	trace_iowait('B', "iowait", current, 0, -1, d->sleep_cpu, d->func);
	return 0;
}

static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct iw_data *d = (struct iw_data *)ri->data;
	u64 now = ktime_get_ns();
	int waker = -1;

	if (d->slot >= 0) {
		waker = READ_ONCE(slots[d->slot].waker_cpu);
		smp_store_release(&slots[d->slot].task, NULL);
	}
	trace_iowait('E', "iowait", current, now - d->start_ns, waker, d->sleep_cpu, d->func);
#ifndef BLK_IOWAIT_NO_END
	trace_iowait_end(current, now - d->start_ns, waker, d->sleep_cpu, d->func);
#endif
	return 0;
}

/* sched_waking: the CPU that wakes a waiting task */
static void probe_waking(void *data, struct task_struct *p)
{
	int s = slot_find(p);

	if (s >= 0)
		WRITE_ONCE(slots[s].waker_cpu, raw_smp_processor_id());
}

static struct tracepoint *tp_waking;

static void find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_waking"))
		*(struct tracepoint **)priv = tp;
}

/* ---- parameters ---- */

static int get_nmissed(char *buf, const struct kernel_param *kp)
{
	long sum = 0;

	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (registered[i])
			sum += probes[i].nmissed + probes[i].kp.nmissed;
	return sysfs_emit(buf, "%ld\n", sum);
}

static int get_functions(char *buf, const struct kernel_param *kp)
{
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (registered[i])
			n += sysfs_emit_at(buf, n, "%s%s", n ? " " : "", probes[i].kp.symbol_name);
	n += sysfs_emit_at(buf, n, "\n");
	return n;
}

static int get_untracked(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&untracked));
}

static const struct kernel_param_ops nmissed_ops = {.get = get_nmissed};
static const struct kernel_param_ops functions_ops = {.get = get_functions};
static const struct kernel_param_ops untracked_ops = {.get = get_untracked};
module_param_cb(nmissed, &nmissed_ops, NULL, 0444);
MODULE_PARM_DESC(nmissed, "waits not seen: no free kretprobe instance (read-only)");
module_param_cb(functions, &functions_ops, NULL, 0444);
MODULE_PARM_DESC(functions, "the functions probed (read-only)");
module_param_cb(untracked, &untracked_ops, NULL, 0444);
MODULE_PARM_DESC(untracked, "waits whose waker could not be followed: the task table was full (read-only)");

/* ---- load, unload ---- */

static void unregister_all(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		if (registered[i])
			unregister_kretprobe(&probes[i]);
		registered[i] = false;
	}
	if (tp_waking) {
		tracepoint_probe_unregister(tp_waking, probe_waking, NULL);
		tracepoint_synchronize_unregister();
		tp_waking = NULL;
	}
}

static int __init blk_iowait_init(void)
{
	unsigned int n;
	int ret, nreg = 0;

	if (maxactive <= 0)
		maxactive = 2 * num_possible_cpus();
	n = roundup_pow_of_two(max(64u, 4u * (unsigned int)maxactive));
	slot_bits = ilog2(n);
	slots = kcalloc(n, sizeof(*slots), GFP_KERNEL);
	if (!slots)
		return -ENOMEM;
	for_each_kernel_tracepoint(find_tp, &tp_waking);
	if (tp_waking) {
		ret = tracepoint_probe_register(tp_waking, probe_waking, NULL);
		if (ret) {
			pr_warn("blk_iowait: no probe on sched_waking (%d): wakers not known\n", ret);
			tp_waking = NULL;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		probes[i].maxactive = maxactive;
		ret = register_kretprobe(&probes[i]);
		if (ret) {
			/* blk_io_schedule is missing before 5.9; the others are required */
			if (probe_func[i] == FN_BLK_IO_SCHEDULE) {
				pr_info("blk_iowait: %s not probed (%d)\n", probes[i].kp.symbol_name,
					ret);
				continue;
			}
			pr_err("blk_iowait: cannot probe %s: %d\n", probes[i].kp.symbol_name, ret);
			unregister_all();
			kfree(slots);
			return ret;
		}
		registered[i] = true;
		nreg++;
	}
	pr_info("blk_iowait: %d functions probed, maxactive %d\n", nreg, maxactive);
	return 0;
}

static void __exit blk_iowait_exit(void)
{
	unregister_all();
	kfree(slots);
}

module_init(blk_iowait_init);
module_exit(blk_iowait_exit);
