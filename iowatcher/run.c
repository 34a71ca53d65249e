// SPDX-License-Identifier: GPL-2.0
/*
 * Everything iowatcher runs: the tracers of -d (our blktrace, and mpstat when installed),
 * the program of -p, rsvg-convert for PNG output and movie frames, and ffmpeg for movies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "iowatcher.h"

extern char **environ;

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

int iow_write_file(const char *path, const struct blk_strbuf *sb)
{
	FILE *fp = fopen(path, "w");
	int bad;

	if (!fp)
		return error("cannot create '%s': %s", path, strerror(errno));
	bad = sb->len && fwrite(sb->buf, 1, sb->len, fp) != sb->len;
	if (fclose(fp) || bad)
		return error("cannot write '%s': %s", path, strerror(errno));
	return 0;
}

/* Is @prog an executable on PATH (or a path)? */
static int have_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n + (colon ? 1 : 0);
	}
	return 0;
}

/* Spawn @argv with stdout to @out (NULL: inherited) and stdin from /dev/null. */
static pid_t spawn(const char *const argv[], const char *out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int ret;

	posix_spawn_file_actions_init(&fa);
	if (out)
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out,
						 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		error("cannot run '%s': %s", argv[0], strerror(ret));
		return -1;
	}
	return pid;
}

static int wait_for(pid_t pid, const char *what)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return error("waiting for '%s': %s", what, strerror(errno));
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		return error("'%s' failed with exit status %d", what, WEXITSTATUS(st));
	return error("'%s' was killed by signal %d", what, WTERMSIG(st));
}

static int run(const char *const argv[], const char *out)
{
	pid_t pid = spawn(argv, out);

	return pid < 0 ? -1 : wait_for(pid, argv[0]);
}

static int need_rsvg(void)
{
	if (have_program("rsvg-convert"))
		return 0;
	error("PNG output needs 'rsvg-convert', which is not installed");
	hint("install it with: apt-get install librsvg2-bin");
	return -1;
}

int iow_svg_to_png(const struct blk_strbuf *svg, const char *png)
{
	char tmp[] = "/tmp/iowatcher-XXXXXX.svg";
	const char *argv[] = {"rsvg-convert", "-b", "white", "-o", png, tmp, NULL};
	int fd, ret;

	if (need_rsvg())
		return -1;
	fd = mkstemps(tmp, 4);
	if (fd < 0)
		return error("cannot create a temporary file: %s", strerror(errno));
	close(fd);
	ret = iow_write_file(tmp, svg);
	if (!ret)
		ret = run(argv, NULL);
	unlink(tmp);
	return ret;
}

/* our blktrace: in the top directory of the build (iowatcher/..), else on PATH */
static const char *blktrace_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 32);

	if (n > 0) {
		char *slash;

		buf[n] = '\0';
		for (int up = 0; up < 2 && (slash = strrchr(buf, '/')); up++) {
			strcpy(slash + 1, "blktrace");
			if (access(buf, X_OK) == 0)
				return buf;
			*slash = '\0';
		}
	}
	return "blktrace";
}

int iow_trace_devices(struct iow_opts *o)
{
	const char *dir = o->dest_dir ? o->dest_dir : ".";
	char name[PATH_MAX], tdir[PATH_MAX], exe[PATH_MAX], mp[PATH_MAX], dump[PATH_MAX + 8];
	const char *argv[64 * 2 + 20];
	pid_t tracer, mpstat = -1;
	struct sigaction sa = {0};
	int n = 0, ret = 0, st = 0, done = 0;

	snprintf(name, sizeof(name), "%s", o->ntraces ? o->traces[0]->arg : "trace");
	if (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".dump"))
		name[strlen(name) - 5] = '\0';
	if (strchr(name, '/'))
		return error("option '-t' with '-d': give a base name, and the directory with -D");
	if (mkdir(dir, 0755) && errno != EEXIST)
		return error("cannot create '%s': %s", dir, strerror(errno));
	snprintf(dump, sizeof(dump), "%s/%s.dump", dir, name);
	unlink(dump);
	argv[n++] = blktrace_path(exe, sizeof(exe));
	argv[n++] = "-b";
	argv[n++] = "8192";
	argv[n++] = "-a";
	argv[n++] = "queue";
	argv[n++] = "-a";
	argv[n++] = "complete";
	argv[n++] = "-a";
	argv[n++] = "issue";
	argv[n++] = "-a";
	argv[n++] = "notify";
	if (o->ndevices == 1) {
		argv[n++] = "-o";
		argv[n++] = name;
		argv[n++] = "-D";
		argv[n++] = dir;
	} else {
		/* several devices: per-device files DEV.blktrace.N in DIR/NAME */
		snprintf(tdir, sizeof(tdir), "%s/%s", dir, name);
		argv[n++] = "-D";
		argv[n++] = tdir;
	}
	for (int i = 0; i < o->ndevices; i++) {
		argv[n++] = "-d";
		argv[n++] = o->devices[i];
	}
	argv[n] = NULL;

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	tracer = spawn(argv, NULL);
	if (tracer < 0)
		return -1;
	if (have_program("mpstat")) {
		const char *margv[] = {"mpstat", "-P", "ALL", "1", NULL};

		snprintf(mp, sizeof(mp), "%s/%s.mpstat", dir, name);
		mpstat = spawn(margv, mp);
	}
	/*
	 * The tracer sets up asynchronously: wait (up to 5 s) for its first output file, then
	 * a little more, so that the start of the workload is traced.
	 */
	for (int i = 0; i < 50; i++) {
		char f0[PATH_MAX + 32];
		struct timespec ts = {0, 100 * 1000 * 1000};

		if (o->ndevices == 1)
			snprintf(f0, sizeof(f0), "%s/%s.blktrace.0", dir, name);
		else
			snprintf(f0, sizeof(f0), "%s/%s.blktrace.0", tdir,
				 strrchr(o->devices[0], '/') ? strrchr(o->devices[0], '/') + 1
							     : o->devices[0]);
		if (waitpid(tracer, &st, WNOHANG) == tracer) {
			done = 1;
			break;
		}
		if (!access(f0, F_OK))
			break;
		nanosleep(&ts, NULL);
	}
	if (!done)
		sleep(1);
	if (!done && waitpid(tracer, &st, WNOHANG) == tracer)
		done = 1;
	if (done) {
		/* the tracer gave up (its message says why): do not run the workload */
		ret = error("blktrace stopped before tracing started");
	} else if (o->prog) {
		pid_t prog = spawn((const char *const *)o->prog_argv, NULL);

		if (prog < 0)
			ret = -1;
		else if (wait_for(prog, o->prog_argv[0]))
			warning("the traced program failed; plotting what was traced");
		/* let the last completions reach the trace buffers */
		sleep(1);
	} else {
		fprintf(stderr, "Tracing until interrupted...\n");
		while (!got_signal) {
			if (waitpid(tracer, &st, WNOHANG) == tracer) {
				done = 1;
				break;
			}
			sleep(1);
		}
	}
	if (mpstat > 0)
		kill(mpstat, SIGTERM);
	if (!done) {
		kill(tracer, o->prog ? SIGINT : SIGTERM);
		if (wait_for(tracer, "blktrace"))
			ret = -1;
	} else if (!ret && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		ret = error("blktrace stopped with an error");
	}
	if (mpstat > 0)
		waitpid(mpstat, NULL, 0);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ret)
		return ret;
	/* plot what was traced: one trace (several devices are drawn in banks) */
	{
		static char path[PATH_MAX * 2 + 2];

		if (o->ndevices == 1)
			snprintf(path, sizeof(path), "%s/%s", dir, name);
		else
			snprintf(path, sizeof(path), "%s", tdir);
		if (!o->ntraces)
			o->traces[o->ntraces++] = calloc(1, sizeof(struct iow_trace));
		if (!o->traces[0])
			die("out of memory");
		o->traces[0]->arg = path;
	}
	return 0;
}

/* ---- movies ---- */

#define MOVIE_SECONDS 30
#define MOVIE_FPS 20

struct movie_ctx {
	struct iow_opts *o;
	uint16_t *first[IOW_MAX_TRACES][IOW_MAX_PROCS + 1];
	uint64_t frame_ns;
};

/* remember the first frame in which each grid cell gets an I/O */
static void movie_event(struct iow_trace *t, const struct blk_event *ev, void *arg)
{
	struct movie_ctx *m = arg;
	unsigned int code = blk_event_code(ev), slot;
	uint64_t f;
	long cell;
	int ti = 0;
	uint16_t *fs;

	if (code != t->io_act || blk_event_has_cat(ev, BLK_TC_PC))
		return;
	cell = iow_io_cell(m->o, t, ev);
	if (cell < 0)
		return;
	while (m->o->traces[ti] != t)
		ti++;
	slot = iow_io_slot(m->o, t, ev);
	fs = m->first[ti][slot];
	if (!fs)
		return;
	f = (ev->time - m->o->x0) / m->frame_ns;
	if (f > 65534)
		f = 65534;
	if (f < fs[cell])
		fs[cell] = (uint16_t)f;
}

static long online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n;
}

int iow_movie(struct iow_opts *o)
{
	struct movie_ctx m = {o, {{NULL}}, 0};
	size_t cells = (size_t)o->grid_w * o->grid_h;
	uint32_t *full[IOW_MAX_TRACES][IOW_MAX_PROCS + 1] = {{NULL}};
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	unsigned int nframes = (o->movie_seconds ? o->movie_seconds : MOVIE_SECONDS) * MOVIE_FPS;
	char dir[] = "io-movie-XXXXXX", path[PATH_MAX], pattern[PATH_MAX];
	long jobs = online_cpus(), running = 0;
	int ret = 0;

	if (!have_program("ffmpeg")) {
		error("movie mode needs 'ffmpeg', which is not installed");
		hint("install it with: apt-get install ffmpeg");
		return -1;
	}
	if (need_rsvg())
		return -1;
	if (o->movie == 2)
		warning("the spindle style is drawn as rect (offset against time)");
	m.frame_ns = (o->x1 - o->x0) / nframes;
	if (!m.frame_ns)
		m.frame_ns = 1;
	/* per cell: the frame of its first I/O (walk the traces once more) */
	for (int i = 0; i < o->ntraces; i++) {
		struct iow_trace *t = o->traces[i];

		for (int s = 0; s <= IOW_MAX_PROCS; s++) {
			if (!t->grid[s])
				continue;
			m.first[i][s] = malloc(cells * sizeof(uint16_t));
			full[i][s] = malloc(cells * sizeof(uint32_t));
			if (!m.first[i][s] || !full[i][s])
				die("out of memory");
			memset(m.first[i][s], 0xff, cells * sizeof(uint16_t));
			memcpy(full[i][s], t->grid[s], cells * sizeof(uint32_t));
		}
		if (iow_trace_walk(t, movie_event, &m) < 0) {
			ret = -1;
			goto out;
		}
	}
	if (!mkdtemp(dir)) {
		ret = error("cannot create a frame directory: %s", strerror(errno));
		goto out;
	}
	fprintf(stderr, "iowatcher: rendering %u frames into %s/\n", nframes, dir);
	for (unsigned int f = 0; f < nframes && !ret; f++) {
		struct iow_frame fr = {1, o->x0 + (uint64_t)(f + 1) * m.frame_ns};
		char png[PATH_MAX + 8];
		const char *argv[] = {"rsvg-convert", "-b", "white", "-o", png, path, NULL};

		for (int i = 0; i < o->ntraces; i++)
			for (int s = 0; s <= IOW_MAX_PROCS; s++) {
				if (!full[i][s])
					continue;
				for (size_t c = 0; c < cells; c++)
					o->traces[i]->grid[s][c] =
						m.first[i][s][c] <= f ? full[i][s][c] : 0;
			}
		blk_strbuf_reset(&sb);
		iow_svg(&sb, o, &fr);
		snprintf(path, sizeof(path), "%s/frame-%05u.svg", dir, f);
		snprintf(png, sizeof(png), "%s/frame-%05u.png", dir, f);
		if (iow_write_file(path, &sb)) {
			ret = -1;
			break;
		}
		/* convert in parallel, one job per online CPU */
		if (running == jobs) {
			int st;

			if (wait(&st) > 0 && !(WIFEXITED(st) && !WEXITSTATUS(st)))
				ret = error("rsvg-convert failed on a frame");
			running--;
		}
		if (spawn(argv, NULL) < 0)
			ret = -1;
		else
			running++;
	}
	while (running > 0) {
		int st;

		if (wait(&st) > 0 && !(WIFEXITED(st) && !WEXITSTATUS(st)))
			ret = error("rsvg-convert failed on a frame");
		running--;
	}
	if (!ret) {
		char rate[16];
		const char *argv[] = {"ffmpeg",	  "-loglevel", "error",	  "-y",
				      "-r",	  rate,	       "-i",	  pattern,
				      "-b:v",	  "250k",      "-vcodec", o->codec,
				      "-pix_fmt", "yuv420p",   o->output, NULL};

		snprintf(rate, sizeof(rate), "%d", MOVIE_FPS);
		snprintf(pattern, sizeof(pattern), "%s/frame-%%05d.png", dir);
		ret = run(argv, NULL);
	}
	if (!o->keep_frames) {
		for (unsigned int f = 0; f < nframes; f++) {
			snprintf(path, sizeof(path), "%s/frame-%05u.svg", dir, f);
			unlink(path);
			snprintf(path, sizeof(path), "%s/frame-%05u.png", dir, f);
			unlink(path);
		}
		rmdir(dir);
	} else {
		fprintf(stderr, "iowatcher: frames kept in %s/\n", dir);
	}
out:
	for (int i = 0; i < o->ntraces; i++)
		for (int s = 0; s <= IOW_MAX_PROCS; s++) {
			free(m.first[i][s]);
			free(full[i][s]);
		}
	blk_strbuf_release(&sb);
	return ret;
}
