// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse: merge block traces by time and print them, with the classic output.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "blk/acct.h"
#include "blk/classicmem.h"
#include "blk/format.h"
#include "blk/merge.h"
#include "blk/output.h"
#include "blk/pipesort.h"
#include "blk/reader.h"
#include "blk/wallclock.h"

#define BLKPARSE_VERSION "1.2.0"
#define NS_PER_SEC 1000000000ull

/*
 * Interrupts (SIGINT, SIGTERM, SIGHUP), as the classic tool catches them. Files stop being
 * read at the first one. A pipe is read on to its end: the tracer stopped by the same Ctrl-C
 * drains its buffers and then closes its output. The interrupt that cuts a pipe short (the
 * second one) replaces its descriptor by /dev/null, so that a read waiting there ends as the
 * input does and the sorter then prints everything read, with the summary. The library sees
 * nothing of this.
 */
static volatile sig_atomic_t interrupts;
static volatile sig_atomic_t cut_at = 1; /* interrupts that cut the input being read */
static volatile sig_atomic_t cut_fd = -1; /* that input's descriptor, or -1 */
static volatile sig_atomic_t null_fd = -1;
static volatile sig_atomic_t cut_done;

static void cut_input(void)
{
	if (cut_fd < 0 || cut_done)
		return;
	if (null_fd >= 0 && dup2(null_fd, cut_fd) >= 0)
		cut_done = 1;
}

static void on_interrupt(int sig)
{
	int e = errno;

	if (interrupts < 2)
		interrupts++;
	if (interrupts >= cut_at) {
		cut_input();
		if (!cut_done && cut_fd >= 0) {
			/* no /dev/null to read: end as if the interrupt was not caught */
			signal(sig, SIG_DFL);
			raise(sig);
		}
	}
	errno = e;
}

static void catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	/* reads and writes resume after the handler: stdio and the outputs see no EINTR */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

struct parse_opts {
	const char **inputs;
	int ninputs;
	const char *input_dir;
	uint32_t act_mask; /* categories shown */
	unsigned int batch;
	const char *dump; /* -d */
	int dump_msgs; /* !-M */
	const char *output; /* -o */
	int text; /* !-O */
	int quiet;
	int per_process;
	char sort_key;
	int hash_by_name;
	int track;
	uint64_t stop_start, stop_end;
	int verbose;
	int show_cgroup; /* --cgroup-msgs */
	struct blk_format *fmt[256];
	struct blk_cmem_arg *margs; /* -i/-f/-F in command-line order (classicmem.h) */
	int nmargs;
};

/* A per-CPU input file (file mode): its device, and its stream in the memory model. */
struct file_in {
	struct blk_acct_dev *d;
	int stream;
};

/* Run state shared by the callbacks. */
struct parse_run {
	struct parse_opts *o;
	struct blk_acct *acct;
	struct blk_cmem *cmem; /* the classic tool's memory, for -t (or NULL) */
	struct file_in **fins;
	int nfins;
	struct blk_output *text; /* NULL when no text is produced */
	struct blk_output *dump;
	struct blk_strbuf stdout_later; /* what the classic tool prints through stdio's stdout */
	int stdout_now; /* stdout is a terminal: print it at once */
	int file_mode;
	uint64_t genesis;
	uint64_t rebase; /* subtracted from the input time of the event being printed */
	struct blk_wallclock *clock; /* for %z */
	int wall_valid; /* wall (below) is that of clock's generation wall_gen and rebase */
	unsigned int wall_gen;
	uint64_t wall_rebase;
	enum blk_wall_kind wall_kind;
	struct blk_fmt_ctx wall; /* only its wall-clock fields are used */
	uint64_t hidden_cgroup; /* cgroup-tagged notes the classic tool hides */
	uint64_t bad_cpu;
	int have_drv_data;
	int failed;
};

static const struct option long_opts[] = {
	{"act-mask", required_argument, NULL, 'a'},
	{"set-mask", required_argument, NULL, 'A'},
	{"batch", required_argument, NULL, 'b'},
	{"input-directory", required_argument, NULL, 'D'},
	{"dump-binary", required_argument, NULL, 'd'},
	{"format", required_argument, NULL, 'f'},
	{"format-spec", required_argument, NULL, 'F'},
	{"hash-by-name", no_argument, NULL, 'h'},
	{"input", required_argument, NULL, 'i'},
	{"no-msgs", no_argument, NULL, 'M'},
	{"output", required_argument, NULL, 'o'},
	{"no-text-output", no_argument, NULL, 'O'},
	{"quiet", no_argument, NULL, 'q'},
	{"per-program-stats", no_argument, NULL, 's'},
	{"sort-program-stats", required_argument, NULL, 'S'},
	{"track-ios", no_argument, NULL, 't'},
	{"stopwatch", required_argument, NULL, 'w'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"cgroup", no_argument, NULL, 1000},
	{"cgroup-msgs", no_argument, NULL, 1000},
	{"help", no_argument, NULL, 1001},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: blkparse [options] -i <input> [-i <input> ...]\n\n"
		"  -i, --input=NAME            trace NAME.blktrace.N files, a merged trace file, or '-' (stdin)\n"
		"  -D, --input-directory=DIR   directory prepended to input names\n"
		"  -a, --act-mask=ACTION       only show this category (repeatable): read write flush sync\n"
		"                              queue requeue issue complete fs pc notify ahead meta discard\n"
		"                              drv_data fua\n"
		"  -A, --set-mask=HEX          set the category mask (1..FFFF)\n"
		"  -b, --batch=N               records read ahead per input (default 512)\n"
		"  -d, --dump-binary=FILE      write the merged binary trace ('-' = stdout; .gz = gzip)\n"
		"  -M, --no-msgs               leave message records out of the -d dump\n"
		"  -f, --format=FMT            output format for every action\n"
		"  -F, --format-spec=X,FMT     output format for action X\n"
		"  -h, --hash-by-name          per-program statistics by name instead of PID\n"
		"  -o, --output=FILE           text output file (default stdout)\n"
		"  -O, --no-text-output        no text output (and no statistics)\n"
		"  -q, --quiet                 no per-device/CPU summary\n"
		"  -s, --per-program-stats     per-program statistics\n"
		"  -S, --sort-program-stats=K  sort them by N Q q R r W w C c (implies -s)\n"
		"  -t, --track-ios             per-request elapsed times\n"
		"  -w, --stopwatch=[START:]END only records between START and END seconds\n"
		"  -v, --verbose               more diagnostics\n"
		"  -V, --version               print the version\n"
		"      --cgroup                decode cgroup-tagged records as blkparse 1.3.0 does (1.2.0\n"
		"                              hides cgroup-tagged messages and rejects tagged events)\n"
		"      --help                  this text\n");
}

static uint64_t secs_to_ns(const char *s, const char *opt)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0)
		die("option '%s': invalid time '%s' (seconds, e.g. 1.5)", opt, s);
	return (uint64_t)(v * 1e9);
}

static void parse_args(int argc, char **argv, struct parse_opts *o)
{
	int c, mask_set = 0;
	char err[256];

	while ((c = getopt_long(argc, argv, "a:A:b:D:d:f:F:hi:o:OqsS:tw:vVM", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'a': {
			int m = blk_category_from_name(optarg);

			if (m < 0) {
				error("Invalid action mask %s", optarg);
				hint("known: %s", blk_category_names);
				exit(1);
			}
			if (!mask_set)
				o->act_mask = 0;
			mask_set = 1;
			o->act_mask |= (uint32_t)m;
			break;
		}
		case 'A': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 16);

			if (end == optarg || *end || v < 1 || v > 0xffff)
				die("Invalid set action mask %s/0x%lx (a hex mask 1..FFFF)", optarg,
				    v);
			o->act_mask = (uint32_t)v;
			mask_set = 1;
			break;
		}
		case 'b': {
			long v = atol(optarg);

			o->batch = v > 0 ? (unsigned int)(v > 1000000 ? 1000000 : v) : 512;
			break;
		}
		case 'D':
			o->input_dir = optarg;
			break;
		case 'd':
			o->dump = optarg;
			break;
		case 'f': {
			struct blk_format *f = blk_format_compile(optarg, err, sizeof(err));

			o->margs[o->nmargs++] = (struct blk_cmem_arg){'f', optarg};
			if (!f)
				die("option '-f': %s", err);
			for (const char *p = "ABCDFGIMPQRSTUWX"; *p; p++) {
				if (!o->fmt[(unsigned char)*p])
					o->fmt[(unsigned char)*p] =
						blk_format_compile(optarg, err, sizeof(err));
			}
			blk_format_free(f);
			break;
		}
		case 'F': {
			unsigned char k = (unsigned char)optarg[0];
			struct blk_format *f;

			if (!k || !strchr("ABCDFGIMPQRSTUWX", k))
				die("Bad format specifier %c (option '-F' takes X,FORMAT with X one of ABCDFGIMPQRSTUWX)",
				    k ? k : ' ');
			if (optarg[1] != ',')
				die("Bad format specifier - need ',' %s", optarg);
			f = blk_format_compile(optarg + 2, err, sizeof(err));
			if (!f)
				die("option '-F': %s", err);
			blk_format_free(o->fmt[k]);
			o->fmt[k] = f;
			o->margs[o->nmargs++] = (struct blk_cmem_arg){'F', optarg};
			break;
		}
		case 'h':
			o->hash_by_name = 1;
			break;
		case 'i':
			o->margs[o->nmargs++] = (struct blk_cmem_arg){'i', optarg};
			o->inputs[o->ninputs++] = optarg;
			break;
		case 'M':
			o->dump_msgs = 0;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'O':
			o->text = 0;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 's':
			o->per_process = 1;
			break;
		case 'S':
			if (!optarg[0] || optarg[1] || !strchr("NQqRrWwCc", optarg[0]))
				die("option '-S': unknown sort key '%s' (one of N Q q R r W w C c)",
				    optarg);
			o->sort_key = optarg[0];
			o->per_process = 1;
			break;
		case 't':
			o->track = 1;
			break;
		case 'w': {
			char *copy = strdup(optarg), *colon;

			if (!copy)
				die("out of memory");
			colon = strchr(copy, ':');
			if (colon) {
				*colon = '\0';
				o->stop_start = copy[0] ? secs_to_ns(copy, "-w") : 0;
				o->stop_end = secs_to_ns(colon + 1, "-w");
			} else {
				o->stop_end = secs_to_ns(copy, "-w");
			}
			free(copy);
			if (o->stop_end <= o->stop_start)
				die("Invalid stopwatch value (%s): the end must be after the start",
				    optarg);
			break;
		}
		case 'v':
			o->verbose++;
			break;
		case 'V':
			print_version("%s version %s", progname(), BLKPARSE_VERSION);
			exit(0);
		case 1000:
			o->show_cgroup = 1;
			break;
		case 1001:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(1);
		}
	}
	while (optind < argc) {
		o->margs[o->nmargs++] = (struct blk_cmem_arg){'i', argv[optind]};
		o->inputs[o->ninputs++] = argv[optind++];
	}
	if (!o->ninputs) {
		usage(stderr);
		exit(1);
	}
}

/* Text the classic tool prints through stdio's stdout (flushed at exit when not a tty). */
static void say(struct parse_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct parse_run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (r->stdout_now) {
		vfprintf(r->o->dump && !strcmp(r->o->dump, "-") ? stderr : stdout, fmt, ap);
		fflush(stdout);
	} else {
		blk_strbuf_vaddf(&r->stdout_later, fmt, ap);
	}
	va_end(ap);
}

static int is_cgroup_note(const struct blk_event *ev)
{
	return blk_event_is_notify(ev) && (blk_event_action32(ev) & BLK_TA_CGROUP);
}

static int write_dump(struct parse_run *r, const struct blk_event *ev)
{
	if (!r->dump)
		return 0;
	if (blk_output_event(r->dump, ev)) {
		r->failed = 1;
		return -EIO;
	}
	return 0;
}

/* Notes are taken as records are read, never merged (except messages). */
static int on_record(void *arg, enum blk_merge_note what, void *owner, int cpu,
		     const struct blk_event *ev)
{
	struct parse_run *r = arg;
	struct file_in *fi = r->file_mode ? owner : NULL;
	struct blk_acct_dev *d = fi ? fi->d : NULL;
	int stream = fi ? fi->stream : -1;
	uint32_t a;

	if (what == BLK_NOTE_END) {
		blk_cmem_eof(r->cmem, stream);
		return 0;
	}
	if (what == BLK_NOTE_BAD_CPU) {
		blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_BAD_CPU);
		if (!r->bad_cpu++)
			error("cpu %d trace info has error cpu %u (record at offset %llu dropped; further ones are counted)",
			      cpu, ev->cpu, (unsigned long long)ev->offset);
		return 0;
	}
	if (r->text)
		blk_wallclock_record(r->clock, ev);
	a = blk_event_action32(ev);
	if (!blk_event_is_notify(ev) || a == BLK_TN_ACTION(BLK_TN_MESSAGE) ||
	    (r->o->show_cgroup && (a & ~BLK_TA_CGROUP) == BLK_TN_ACTION(BLK_TN_MESSAGE))) {
		/* a record to merge; pipe mode lists devices in order of their first one */
		blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_QUEUED);
		if (!r->file_mode)
			d = blk_acct_dev(r->acct, ev->device, NULL);
		else if (d && !blk_acct_dev_devno(d))
			/* file mode: the device number is learned from its first record */
			blk_acct_dev_set_devno(d, ev->device);
		return d ? 0 : -ENOMEM;
	}
	blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_NOTE);
	switch (a) {
	case BLK_TN_ACTION(BLK_TN_PROCESS):
		blk_acct_set_comm(r->acct, ev->pid, (const char *)ev->pdu, ev->pdu_len);
		break;
	default:
		if (is_cgroup_note(ev))
			r->hidden_cgroup++;
		break;
	}
	blk_cmem_note_done(r->cmem);
	return write_dump(r, ev) ? -EIO : 1;
}

/*
 * Wall clock of printed time 0, for %z: the input's (wallclock.h) plus what was subtracted
 * from the event's time; computed again only when either changes.
 */
static void fill_wall(struct parse_run *r, struct blk_fmt_ctx *c)
{
	if (!r->wall_valid || r->wall_gen != blk_wallclock_generation(r->clock) ||
	    r->wall_rebase != r->rebase) {
		int64_t sec;
		long nsec;

		r->wall_valid = 1;
		r->wall_gen = blk_wallclock_generation(r->clock);
		r->wall_rebase = r->rebase;
		r->wall_kind = blk_wallclock_base(r->clock, &sec, &nsec);
		r->wall.have_wall = r->wall_kind != BLK_WALL_NONE;
		if (r->wall.have_wall) {
			nsec += (long)(r->rebase % NS_PER_SEC);
			sec += (int64_t)(r->rebase / NS_PER_SEC);
			if (nsec >= (long)NS_PER_SEC) {
				nsec -= (long)NS_PER_SEC;
				sec++;
			}
			r->wall.wall_sec = sec;
			r->wall.wall_nsec = nsec;
		}
	}
	c->have_wall = r->wall.have_wall;
	c->wall_sec = r->wall.wall_sec;
	c->wall_nsec = r->wall.wall_nsec;
}

static void print_message(struct parse_run *r, const struct blk_event *ev, int cgroup)
{
	struct blk_strbuf *sb = blk_output_sb(r->text);
	const unsigned char *p = ev->pdu;
	size_t len = ev->pdu_len;

	blk_strbuf_addf(sb, "%3d,%-3d %2d %8s %5d.%09lu %5u ", BLK_MAJOR(ev->device),
			BLK_MINOR(ev->device), (int)ev->cpu, "0",
			(int)(uint32_t)(ev->time / NS_PER_SEC),
			(unsigned long)(ev->time % NS_PER_SEC), cgroup ? ev->pid : 0);
	if (cgroup && len >= 8) {
		uint32_t id[2];

		memcpy(id, p, 8);
		blk_strbuf_addf(sb, "%x,%x ", id[0], id[1]);
		p += 8;
		len -= 8;
	}
	blk_strbuf_addf(sb, "%2s %3s ", "m", "N");
	blk_strbuf_add(sb, p, strnlen((const char *)p, len));
	blk_strbuf_addch(sb, '\n');
}

static void print_event(struct parse_run *r, struct blk_acct_dev *d, int cpu, struct blk_event *ev)
{
	struct blk_fmt_ctx c = {0};
	struct blk_format *f;
	int ret;

	fill_wall(r, &c);
	if (r->o->show_cgroup && (blk_event_action32(ev) & BLK_TA_CGROUP)) {
		/* as blkparse 1.3.0: the cgroup id comes first in the payload */
		ev->action &= ~(uint64_t)BLK_TA_CGROUP;
		if (ev->pdu_len >= 8) {
			memcpy(&c.cg_ino, ev->pdu, 4);
			memcpy(&c.cg_gen, ev->pdu + 4, 4);
			ev->pdu += 8;
			ev->pdu_len -= 8;
		}
	}
	ret = blk_acct_event(r->acct, d, cpu, ev, &c);
	if (ret <= 0) {
		if (ret == 0)
			r->have_drv_data = 1;
		return;
	}
	f = r->o->fmt[(unsigned char)c.act[0]];
	if (!f && c.act[0] == 'A') {
		struct blk_io_trace_remap rm;

		/*
		 * the default line (and the dump) show the device the I/O was remapped to; a
		 * -f/-F format, and then the dump, keep the record's own, as 1.2.0
		 */
		if (!blk_event_remap(ev, &rm))
			ev->device = rm.device_to;
	}
	if (f) {
		if (blk_format_render(f, ev, &c, blk_output_sb(r->text))) {
			/* as the classic tool: what was printed so far stays, then stop */
			blk_output_finish(r->text);
			if (r->stdout_later.len)
				fwrite(r->stdout_later.buf, 1, r->stdout_later.len, stdout);
			die("Expecting elapsed value: the format uses %%u, but the '%s' record of sector %llu at %llu.%09llu has none (%%u needs -t and a matched request)",
			    c.act, (unsigned long long)ev->sector,
			    (unsigned long long)(ev->time / NS_PER_SEC),
			    (unsigned long long)(ev->time % NS_PER_SEC));
		}
	} else {
		blk_format_default(ev, &c, blk_output_sb(r->text));
	}
	if (blk_output_check(r->text))
		r->failed = 1;
}

static void dump_trace(struct parse_run *r, struct blk_acct_dev *d, int cpu, struct blk_event *ev)
{
	uint32_t a = blk_event_action32(ev);
	int is_msg = a == BLK_TN_ACTION(BLK_TN_MESSAGE);

	struct blk_event shown_ev = *ev;

	if (r->text) {
		if (is_msg)
			print_message(r, ev, 0);
		else if (is_cgroup_note(ev))
			print_message(r, ev, 1);
		else
			print_event(r, d, cpu, &shown_ev);
	}
	/* the dump keeps the record as read, but with a remap's target device, as 1.2.0 */
	ev->device = shown_ev.device;
	blk_acct_count(d, ev->time);
	if (r->o->dump_msgs || !is_msg)
		write_dump(r, ev);
}

static int shown(const struct parse_opts *o, const struct blk_event *ev)
{
	return (blk_event_action32(ev) & (o->act_mask << BLK_TC_SHIFT)) != 0;
}

/* Strip "NAME.blktrace.N" to NAME; split a directory part off. */
static void split_input(const char *in, const char *dir_opt, char **dir, char **name)
{
	char *n = strdup(in), *p, *slash;

	if (!n)
		die("out of memory");
	p = strstr(n, ".blktrace.");
	if (p)
		*p = '\0';
	slash = strrchr(n, '/');
	if (slash) {
		*slash = '\0';
		*dir = strdup(n[0] ? n : "/");
		*name = strdup(slash + 1);
		free(n);
	} else {
		*dir = dir_opt ? strdup(dir_opt) : NULL;
		*name = n;
	}
}

static int is_pipe_input(const char *in);

/*
 * -t: replay the classic tool's memory to print its stale times (classicmem.h); NULL
 * when not needed (no -t, no text).
 */
static struct blk_cmem *new_cmem(struct parse_run *r)
{
	struct parse_opts *o = r->o;
	struct blk_cmem_opts co = {0};
	struct blk_cmem *c;
	struct stat st;
	unsigned char fds[1024];
	int piped = 0;

	if (!o->track || !r->text)
		return NULL;
	co.args = o->margs;
	co.nargs = o->nmargs;
	co.batch = o->batch;
	co.output_file = o->output != NULL;
	co.dump = o->dump ? (strcmp(o->dump, "-") ? 1 : 2) : 0;
	co.stdout_bufsize = fstat(STDOUT_FILENO, &st) ? 0 : (size_t)st.st_blksize;
	co.locale_alias = "/usr/share/locale/locale.alias";
	co.fds_open = fds;
	co.nfds = sizeof(fds);
	/* the classic tool reads its first pipe input as such, the others as names */
	for (int i = 0; i < o->nmargs; i++) {
		if (o->margs[i].opt == 'i' && !piped && is_pipe_input(o->margs[i].val)) {
			o->margs[i].opt = 'p';
			piped = 1;
		}
	}
	/* our output files are open, as the classic tool's are when it opens its inputs */
	for (int fd = 0; fd < (int)sizeof(fds); fd++)
		fds[fd] = fcntl(fd, F_GETFD) != -1;
	c = blk_cmem_new(&co);
	if (!c)
		die("out of memory");
	blk_acct_set_cmem(r->acct, c);
	return c;
}

static struct file_in *new_file_in(struct parse_run *r, struct blk_acct_dev *d, int stream)
{
	struct file_in **n = realloc(r->fins, (size_t)(r->nfins + 1) * sizeof(*n));
	struct file_in *fi = malloc(sizeof(*fi));

	if (!n || !fi)
		die("out of memory");
	r->fins = n;
	fi->d = d;
	fi->stream = stream;
	r->fins[r->nfins++] = fi;
	return fi;
}

static int add_file_inputs(struct parse_run *r, struct blk_merge *m, int idx)
{
	const char *in = r->o->inputs[idx];
	char *dir, *name, path[8192];
	struct blk_acct_dev *d;
	int found = 0, nonempty = 0;

	split_input(in, r->o->input_dir, &dir, &name);
	d = blk_acct_dev(r->acct, 0, name);
	if (!d)
		die("out of memory");
	for (int cpu = 0;; cpu++) {
		struct blk_reader *rd;
		struct stat st;
		int stream;

		if (dir)
			snprintf(path, sizeof(path), "%s/%s.blktrace.%d", dir, name, cpu);
		else
			snprintf(path, sizeof(path), "%s.blktrace.%d", name, cpu);
		if (stat(path, &st)) {
			size_t l = strlen(path);

			/* a compressed per-CPU file may carry the .gz suffix */
			snprintf(path + l, sizeof(path) - l, ".gz");
			if (stat(path, &st)) {
				path[l] = '\0';
				blk_cmem_file(r->cmem, idx, cpu, path, BLK_CMEM_MISSING);
				break;
			}
		}
		found++;
		if (!st.st_size) {
			blk_cmem_file(r->cmem, idx, cpu, path, BLK_CMEM_EMPTY);
			continue;
		}
		rd = blk_reader_open(path);
		if (!rd)
			die("cannot open '%s': %s", path, strerror(errno));
		nonempty++;
		say(r, "Input file %s added\n", path);
		stream = blk_cmem_file(r->cmem, idx, cpu, path, BLK_CMEM_OPENED);
		if (blk_merge_add(m, rd, new_file_in(r, d, stream), cpu))
			die("out of memory");
	}
	if (!found) {
		free(dir);
		free(name);
		return 0;
	}
	if (!nonempty)
		warning("all trace files of '%s' are empty (no events were recorded)", in);
	free(dir);
	free(name);
	return 1;
}

static int is_pipe_input(const char *in)
{
	struct stat st;

	if (!strcmp(in, "-"))
		return 1;
	return !stat(in, &st) && S_ISFIFO(st.st_mode);
}

static int is_plain_file(const char *in)
{
	struct stat st;

	return !strstr(in, ".blktrace.") && !stat(in, &st) && S_ISREG(st.st_mode);
}

static void run_file_mode(struct parse_run *r)
{
	struct parse_opts *o = r->o;
	struct blk_merge *m = blk_merge_new(o->batch, on_record, r);
	struct blk_event ev;
	void *owner;
	int cpu, ret = 1; /* > 0 after the loop: more records may follow */

	if (!m)
		die("out of memory");
	r->file_mode = 1;
	r->cmem = new_cmem(r);
	for (int i = 0; i < o->ninputs; i++) {
		if (!add_file_inputs(r, m, i)) {
			error("No input files found for %s", o->inputs[i]);
			hint("expected %s%s%s.blktrace.0 (per-CPU trace files, see -D), a merged trace file, or '-' for stdin",
			     o->input_dir ? o->input_dir : "", o->input_dir ? "/" : "",
			     o->inputs[i]);
			exit(1);
		}
	}
	if (!blk_merge_peek_time(m, &r->genesis))
		r->genesis = 0;
	r->rebase = r->genesis;
	while (!interrupts && (ret = blk_merge_next(m, &ev, &owner, &cpu)) > 0) {
		struct file_in *fi = owner;
		struct blk_acct_dev *d = fi->d;

		blk_acct_seen(d, cpu);
		ev.time -= r->genesis;
		blk_cmem_handle(r->cmem, fi->stream, ev.time);
		if (ev.time > o->stop_end)
			break;
		blk_acct_last_time(d, ev.time);
		if (shown(o, &ev) && ev.time >= o->stop_start)
			dump_trace(r, d, cpu, &ev);
		if (r->text)
			blk_cmem_retire(r->cmem, fi->stream, ev.time, ev.device,
					(uint32_t)ev.sequence);
		if (r->failed)
			break;
	}
	if (ret < 0 && ret != -EIO)
		die("%s", strerror(-ret));
	if (interrupts && ret > 0)
		warning("interrupted: the rest of the input was not read (the summary covers the events before)");
	for (unsigned int i = 0; i < blk_merge_nerrors(m); i++) {
		error("%s", blk_merge_error(m, i));
		r->failed = 1;
	}
	blk_merge_free(m);
	blk_acct_set_cmem(r->acct, NULL);
	blk_cmem_free(r->cmem);
	r->cmem = NULL;
	for (int i = 0; i < r->nfins; i++)
		free(r->fins[i]);
	free(r->fins);
}

static void print_skip(void *arg, uint32_t dev, int cpu, uint64_t first, uint64_t last)
{
	(void)arg;
	(void)cpu;
	fprintf(stderr, "(%d,%d): skipping %llu -> %llu\n", BLK_MAJOR(dev), BLK_MINOR(dev),
		(unsigned long long)first, (unsigned long long)last);
}

static void run_pipe_mode(struct parse_run *r, const char *in)
{
	struct parse_opts *o = r->o;
	struct blk_pipesort_opts po = {0};
	struct blk_pipesort *ps;
	struct blk_reader *rd;
	struct blk_event ev;
	int fd, ret;

	fd = strcmp(in, "-") ? open(in, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	rd = fd < 0 ? NULL : blk_reader_fdopen(fd, in);
	if (!rd)
		die("cannot open '%s': %s", in, strerror(errno));
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cut_at = is_pipe_input(in) ? 2 : 1;
	cut_fd = fd;
	if (interrupts >= cut_at)
		cut_input();
	po.batch = o->batch;
	/*
	 * A batch ends when the pipe stays empty for 20 ms (the classic tool ends it as soon
	 * as a read would block, which makes its order depend on scheduling); events are
	 * still printed within that time of arriving.
	 */
	po.wait_ms = 20;
	po.stop_start = o->stop_start;
	po.stop_end = o->stop_end;
	po.fn = on_record;
	po.arg = r;
	/* the classic tool reads a pipe (not a merged file, which it cannot read at all) */
	if (is_pipe_input(in)) {
		r->cmem = new_cmem(r);
		po.cmem = r->cmem;
	}
	ps = blk_pipesort_new(rd, &po);
	if (!ps)
		die("out of memory");
	for (;;) {
		struct blk_acct_dev *d;

		if (blk_pipesort_needs_input(ps) && r->text && blk_output_flush(r->text))
			r->failed = 1;
		ret = blk_pipesort_next(ps, &ev);
		if (ret <= 0)
			break;
		r->rebase = blk_pipesort_rebase(ps);
		d = blk_acct_dev(r->acct, ev.device, NULL);
		if (!d)
			die("out of memory");
		blk_acct_seen(d, (int)ev.cpu);
		blk_acct_last_time(d, ev.time);
		if (shown(o, &ev))
			dump_trace(r, d, (int)ev.cpu, &ev);
		if (r->failed)
			break;
	}
	if (ret < 0 && ret != -EIO)
		die("%s", strerror(-ret));
	for (unsigned int i = 0; i < blk_acct_ndevs(r->acct); i++) {
		struct blk_acct_dev *d = blk_acct_dev_at(r->acct, i);
		uint64_t ranges, missing;

		blk_pipesort_skips(ps, blk_acct_dev_devno(d), &ranges, &missing);
		blk_acct_set_skips(d, ranges, missing);
		if (o->verbose)
			blk_pipesort_each_skip(ps, blk_acct_dev_devno(d), print_skip, NULL);
	}
	if (blk_pipesort_forced(ps))
		warning("%llu records were released from a stalled reorder window (sequence gaps in the input)",
			(unsigned long long)blk_pipesort_forced(ps));
	cut_fd = -1; /* before the descriptor is closed (and its number reused) */
	if (cut_done) {
		warning("interrupted: stopped reading '%s' before its end (the summary covers the %llu records read)",
			in, (unsigned long long)blk_reader_records(rd));
		if (blk_pipesort_error(ps))
			hint("the last record was cut short: %s", blk_pipesort_error(ps));
	} else if (blk_pipesort_error(ps)) {
		error("%s", blk_pipesort_error(ps));
		r->failed = 1;
	}
	blk_pipesort_free(ps);
	if (null_fd >= 0)
		close(null_fd);
	null_fd = -1;
	blk_acct_set_cmem(r->acct, NULL);
	blk_cmem_free(r->cmem);
	r->cmem = NULL;
}

static int uses_wall(const struct parse_opts *o)
{
	for (int i = 0; i < 256; i++)
		if (o->fmt[i] && blk_format_needs_wall(o->fmt[i]))
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int main(int argc, char **argv)
{
	struct parse_opts o = {0};
	struct parse_run r = {0};
	uint32_t bad_first;
	uint64_t bad;
	int dump_stdout, pipe_in = 0;

	set_progname(argv[0]);
	install_log_hook();
	setlocale(LC_NUMERIC, "en_US");
	o.inputs = calloc((size_t)argc + 1, sizeof(*o.inputs));
	o.margs = calloc((size_t)argc + 1, sizeof(*o.margs));
	if (!o.inputs || !o.margs)
		die("out of memory");
	o.act_mask = 0xffff;
	o.batch = 512;
	o.dump_msgs = 1;
	o.text = 1;
	o.stop_end = UINT64_MAX;
	parse_args(argc, argv, &o);
	catch_interrupts();

	r.o = &o;
	dump_stdout = o.dump && !strcmp(o.dump, "-");
	r.stdout_now = isatty(STDOUT_FILENO) && !dump_stdout;
	{
		struct blk_acct_opts ao = {o.per_process, o.hash_by_name, o.track, o.verbose,
					   o.sort_key};

		r.acct = blk_acct_new(&ao);
		r.clock = blk_wallclock_new();
		if (!r.acct || !r.clock)
			die("out of memory");
	}
	if (o.dump) {
		r.dump = blk_output_open(o.dump, ends_with(o.dump, ".gz") ? BLK_OUTPUT_GZIP : 0);
		if (!r.dump)
			die("cannot create '%s': %s", o.dump, strerror(errno));
	}
	if (o.text) {
		if (o.output)
			r.text = blk_output_open(o.output,
						 ends_with(o.output, ".gz") ? BLK_OUTPUT_GZIP : 0);
		else if (!dump_stdout)
			r.text = blk_output_fdopen(STDOUT_FILENO, "(stdout)", BLK_OUTPUT_NOCLOSE);
		if (o.output && !r.text)
			die("cannot create '%s': %s", o.output, strerror(errno));
	}
	for (int i = 0; i < o.ninputs; i++)
		if (is_pipe_input(o.inputs[i]))
			pipe_in = i + 1;
	if (pipe_in)
		run_pipe_mode(&r, o.inputs[pipe_in - 1]);
	else if (o.ninputs == 1 && is_plain_file(o.inputs[0]))
		run_pipe_mode(&r, o.inputs[0]);
	else
		run_file_mode(&r);

	if (r.text) {
		struct blk_strbuf *sb = blk_output_sb(r.text);

		if (o.per_process)
			blk_acct_print_procs(r.acct, sb);
		if (!o.quiet)
			blk_acct_print_devs(r.acct, sb);
		if (blk_output_finish(r.text)) {
			error("%s", blk_output_error(r.text));
			r.failed = 1;
		}
	}
	if (r.dump && blk_output_finish(r.dump)) {
		error("%s", blk_output_error(r.dump));
		hint("the binary dump '%s' is incomplete", o.dump);
		r.failed = 1;
	}
	if (r.have_drv_data && !o.dump)
		say(&r,
		    "\ndiscarded traces containing low-level device driver specific data (only available in binary output)\n");
	if (r.stdout_later.len) {
		FILE *f = dump_stdout ? stderr : stdout;

		fwrite(r.stdout_later.buf, 1, r.stdout_later.len, f);
		if (fflush(f))
			r.failed = 1;
	}
	bad = blk_acct_bad_actions(r.acct, &bad_first);
	if (bad) {
		warning("%llu records with an action blkparse does not know (first: 0x%x) were counted but not printed",
			(unsigned long long)bad, bad_first);
		if ((bad_first & BLK_TA_CGROUP) && !o.show_cgroup)
			hint("the action carries the cgroup flag: --cgroup decodes such records");
	}
	if (r.bad_cpu)
		warning("%llu records were dropped because their cpu field did not match their file",
			(unsigned long long)r.bad_cpu);
	if (r.wall_kind == BLK_WALL_GUESSED && uses_wall(&o)) {
		warning("%%z may be early: the input is a merged trace (its events start at 0) and its first event has no process note to date it");
		hint("%%z takes that event to be at the start of tracing; the per-CPU trace files give the exact time");
	}
	if (r.hidden_cgroup && !o.show_cgroup) {
		warning("%llu cgroup-tagged message records were not shown (blkparse 1.2.0 hides them)",
			(unsigned long long)r.hidden_cgroup);
		hint("--cgroup prints them");
	}
	blk_output_free(r.text);
	blk_output_free(r.dump);
	blk_strbuf_release(&r.stdout_later);
	blk_acct_free(r.acct);
	blk_wallclock_free(r.clock);
	for (int i = 0; i < 256; i++)
		blk_format_free(o.fmt[i]);
	free(o.inputs);
	free(o.margs);
	return r.failed ? 1 : 0;
}
