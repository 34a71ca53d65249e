/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoint of the blk_iowait module: one 'B' event when a task begins to wait for
 * I/O (enters io_schedule, io_schedule_timeout or blk_io_schedule, the outermost of them)
 * and one 'E' event when it returns, on the waiting task, in the shape of Perfetto's
 * "kernel track events" (char track_event_type, __string slice_name): Perfetto's recorder
 * shows each wait as an "iowait" slice on the thread's track without any change to
 * Perfetto. No scope_ field: the track is the thread's (default), as the waits of one
 * thread never overlap, while those of a process's threads do and could not nest on a
 * process track; no track_name: the track is named after the tracepoint ("iowait").
 * The 'E' event also carries what blktrace --iowait records: the wait's length, the CPU it
 * began on, the CPU that woke the task (-1 if not seen), the process, the function; so does
 * iowait_end, the tracer's own (below).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM blk_iowait

#if !defined(_TRACE_BLK_IOWAIT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_BLK_IOWAIT_H

#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <linux/version.h>

#ifndef BLK_IOWAIT_ASSIGN_STR
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define BLK_IOWAIT_ASSIGN_STR(dst, src) __assign_str(dst)
#else
#define BLK_IOWAIT_ASSIGN_STR(dst, src) __assign_str(dst, src)
#endif
#endif

TRACE_EVENT(iowait,

	TP_PROTO(char type, const char *name, struct task_struct *t, u64 duration_ns,
		 int waker_cpu, int sleep_cpu, int func),

	TP_ARGS(type, name, t, duration_ns, waker_cpu, sleep_cpu, func),

	TP_STRUCT__entry(
		__field(char, track_event_type)
		__string(slice_name, name)
		__field(int, pid)
		__field(int, tgid)
		__field(u64, duration_ns)
		__field(int, waker_cpu)
		__field(int, sleep_cpu)
		__field(int, func)
		__array(char, comm, TASK_COMM_LEN)
	),

	TP_fast_assign(
		__entry->track_event_type = type;
		BLK_IOWAIT_ASSIGN_STR(slice_name, name);
		__entry->pid = t->pid;
		__entry->tgid = t->tgid;
		__entry->duration_ns = duration_ns;
		__entry->waker_cpu = waker_cpu;
		__entry->sleep_cpu = sleep_cpu;
		__entry->func = func;
		memcpy(__entry->comm, t->comm, TASK_COMM_LEN);
	),

	TP_printk("type=%c slice_name=%s pid=%d tgid=%d comm=%s duration_ns=%llu waker_cpu=%d sleep_cpu=%d func=%d",
		  __entry->track_event_type, __get_str(slice_name), __entry->pid, __entry->tgid,
		  __entry->comm, (unsigned long long)__entry->duration_ns, __entry->waker_cpu,
		  __entry->sleep_cpu, __entry->func)
);

#ifndef BLK_IOWAIT_NO_END /* (KCFLAGS=-DBLK_IOWAIT_NO_END: the module before 1.1, for tests) */
/*
 * The same end of a wait for a tracer that needs only the ends (blktrace --iowait): one
 * event a wait, no begin event to build and throw away, no slice name. Enabled alone, the
 * 'B' events of iowait are never built.
 */
TRACE_EVENT(iowait_end,

	TP_PROTO(struct task_struct *t, u64 duration_ns, int waker_cpu, int sleep_cpu, int func),

	TP_ARGS(t, duration_ns, waker_cpu, sleep_cpu, func),

	TP_STRUCT__entry(
		__field(u64, duration_ns)
		__field(int, pid)
		__field(int, tgid)
		__field(int, waker_cpu)
		__field(int, sleep_cpu)
		__field(int, func)
		__array(char, comm, TASK_COMM_LEN)
	),

	TP_fast_assign(
		__entry->duration_ns = duration_ns;
		__entry->pid = t->pid;
		__entry->tgid = t->tgid;
		__entry->waker_cpu = waker_cpu;
		__entry->sleep_cpu = sleep_cpu;
		__entry->func = func;
		memcpy(__entry->comm, t->comm, TASK_COMM_LEN);
	),

	TP_printk("pid=%d tgid=%d comm=%s duration_ns=%llu waker_cpu=%d sleep_cpu=%d func=%d",
		  __entry->pid, __entry->tgid, __entry->comm,
		  (unsigned long long)__entry->duration_ns, __entry->waker_cpu, __entry->sleep_cpu,
		  __entry->func)
);
#endif

#endif /* _TRACE_BLK_IOWAIT_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
