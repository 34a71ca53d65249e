// SPDX-License-Identifier: GPL-2.0
/*
 * verify_blkparse: read the text that blkparse prints and check that its event lines come in
 * time order and that no CPU gives the same sequence number to two events in a row.
 *
 * Each event line starts "maj,min cpu sequence seconds.nanoseconds". Reading stops at the first
 * line that does not start that way (normally the per-CPU summary after the events). Reports
 * go to stdout, byte for byte as verify_blkparse 1.2.0 prints them:
 *
 *	last: <the previous event line>
 *	this: <the event line whose time is earlier>
 *	alias on sequence N
 *	Events N: U unordered, A aliases
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "blk/event.h"

struct vb_opts {
	const char *path; /* "-" is standard input */
};

/* The last sequence number seen on one CPU. */
struct vb_cpu {
	unsigned int seq;
	int seen;
};

struct vb_run {
	FILE *in;
	const char *name; /* for messages */
	char *line; /* the current line, from getline() */
	size_t line_cap;
	char *last; /* the previous event line, for "last:" */
	size_t last_cap;
	double last_time;
	struct vb_cpu *cpus;
	size_t ncpus;
	unsigned long long events, unordered, aliases, lineno;
	int failed;
};

static const struct option long_opts[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: verify_blkparse FILE\n\n"
		"Check that the events in FILE, the text output of blkparse ('-' reads standard\n"
		"input), are in time order and that no CPU repeats a sequence number.\n"
		"Exit status 1 if an event is out of order.\n\n"
		"  -h, --help    this text\n"
		"  -V, --version print the version\n");
}

static void parse_args(int argc, char **argv, struct vb_opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			/* the classic tool has no version option */
			print_version("%s", "verify_blkparse");
			exit(0);
		default:
			if (optopt)
				error("unknown option '-%c'", optopt);
			else
				error("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			exit(2);
		}
	}
	if (argc - optind != 1) {
		error(argc == optind ? "no input file given" : "only one input file is allowed");
		usage(stderr);
		exit(2);
	}
	o->path = argv[optind];
}

/*
 * Split an event line. The field widths are those the classic verifier reads with, so that
 * lines blkparse never prints (a 9-digit sequence, a 6-digit CPU) split the same way.
 * Return: 1 if @s is an event line.
 */
static int parse_event_line(const char *s, int *cpu, unsigned int *seq, double *time)
{
	int major, minor, sq;

	if (sscanf(s, "%3d,%3d %5d %8d %lf", &major, &minor, cpu, &sq, time) != 5)
		return 0;
	*seq = (unsigned int)sq;
	return 1;
}

/* The state of @cpu, growing the table as CPUs show up; NULL if @cpu is impossible. */
static struct vb_cpu *cpu_state(struct vb_run *r, int cpu)
{
	size_t n;
	struct vb_cpu *p;

	if (cpu < 0 || cpu >= BLK_MAX_CPUS)
		return NULL;
	if ((size_t)cpu < r->ncpus)
		return &r->cpus[cpu];
	n = r->ncpus ? r->ncpus : 64;
	while (n <= (size_t)cpu)
		n *= 2;
	p = realloc(r->cpus, n * sizeof(*p));
	if (!p)
		die("out of memory");
	memset(p + r->ncpus, 0, (n - r->ncpus) * sizeof(*p));
	r->cpus = p;
	r->ncpus = n;
	return &r->cpus[cpu];
}

static void remember_line(struct vb_run *r, const char *line, size_t len)
{
	if (len + 1 > r->last_cap) {
		char *p = realloc(r->last, len + 1);

		if (!p)
			die("out of memory");
		r->last = p;
		r->last_cap = len + 1;
	}
	memcpy(r->last, line, len + 1);
}

/* Check one line. Return: 1 to go on, 0 when the event lines have ended. */
static int check_line(struct vb_run *r, size_t len)
{
	struct vb_cpu *c;
	unsigned int seq;
	double time;
	int cpu;

	if (!parse_event_line(r->line, &cpu, &seq, &time))
		return 0;
	if (time < r->last_time) {
		printf("last: %s", r->last);
		printf("this: %s", r->line);
		r->unordered++;
	}
	r->last_time = time;
	c = cpu_state(r, cpu);
	if (!c) {
		error("'%s': line %llu: impossible cpu %d (damaged input?)", r->name, r->lineno,
		      cpu);
		r->failed = 1;
		return 0;
	}
	if (c->seen && c->seq == seq) {
		printf("alias on sequence %u\n", seq);
		r->aliases++;
	}
	c->seq = seq;
	c->seen = 1;
	r->events++;
	remember_line(r, r->line, len);
	return 1;
}

static int verify(struct vb_run *r)
{
	ssize_t len;

	for (;;) {
		errno = 0;
		len = getline(&r->line, &r->line_cap, r->in);
		if (len < 0)
			break;
		r->lineno++;
		if (!check_line(r, (size_t)len))
			break;
	}
	if (ferror(r->in)) {
		error("cannot read '%s': %s", r->name, strerror(errno ? errno : EIO));
		r->failed = 1;
	}
	printf("Events %llu: %llu unordered, %llu aliases\n", r->events, r->unordered, r->aliases);
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write the report: %s", strerror(errno));
		r->failed = 1;
	}
	return r->failed || r->unordered ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct vb_opts o = {NULL};
	struct vb_run r = {0};
	int ret;

	set_progname(argv[0]);
	parse_args(argc, argv, &o);
	if (!strcmp(o.path, "-")) {
		r.in = stdin;
		r.name = "(stdin)";
	} else {
		r.in = fopen(o.path, "r");
		r.name = o.path;
	}
	if (!r.in)
		die("cannot open '%s': %s", o.path, strerror(errno));
	/* a first line that is already out of order is shown after an empty "last:" */
	remember_line(&r, "", 0);
	ret = verify(&r);
	if (r.in != stdin)
		fclose(r.in);
	free(r.line);
	free(r.last);
	free(r.cpus);
	return ret;
}
