// SPDX-License-Identifier: GPL-2.0
/*
 * The HTML report: one self-contained page (inline CSS, the SVG inline, no scripts) with a
 * summary table per trace computed here, a link to each trace's Perfetto file when one was
 * written beside it, and, when our btt is built, its report.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "iowatcher.h"

static void cell_f(struct blk_strbuf *sb, const char *fmt, double v)
{
	blk_strbuf_addstr(sb, "<td>");
	blk_strbuf_addf(sb, fmt, v);
	blk_strbuf_addstr(sb, "</td>");
}

static void cell_lat(struct blk_strbuf *sb, double ns, int have)
{
	if (!have)
		blk_strbuf_addstr(sb, "<td>-</td>");
	else if (ns >= 1e6)
		cell_f(sb, "%.3f ms", ns / 1e6);
	else
		cell_f(sb, "%.1f us", ns / 1e3);
}

static const char *act_name(unsigned int a)
{
	return a == BLK_TA_QUEUE ? "Q" : a == BLK_TA_ISSUE ? "D" : a == BLK_TA_COMPLETE ? "C" : "-";
}

static void summary(struct blk_strbuf *sb, const struct iow_opts *o)
{
	blk_strbuf_addstr(
		sb,
		"<h2>Summary</h2>\n<table class=\"summary\">\n<tr><th>trace</th><th>events</th>"
		"<th>Q</th><th>D</th><th>C</th><th>duration</th><th>read IOs</th>"
		"<th>write IOs</th><th>read MiB</th><th>write MiB</th><th>IOPS</th><th>MiB/s</th>"
		"<th>latency</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n");
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		double secs = t->t_max / 1e9, n = (double)t->lat_all.n;
		int have = t->lat_all.n != 0;

		blk_strbuf_addstr(sb, "<tr><td>");
		iow_xml_escape(sb, t->label);
		blk_strbuf_addstr(sb, "</td>");
		cell_f(sb, "%.0f", (double)t->nevents);
		cell_f(sb, "%.0f", (double)t->nq);
		cell_f(sb, "%.0f", (double)t->nd);
		cell_f(sb, "%.0f", (double)t->nc);
		cell_f(sb, "%.3f s", secs);
		cell_f(sb, "%.0f", (double)t->rd_ios);
		cell_f(sb, "%.0f", (double)t->wr_ios);
		cell_f(sb, "%.2f", t->rd_total / 1048576.0);
		cell_f(sb, "%.2f", t->wr_total / 1048576.0);
		cell_f(sb, "%.1f", secs > 0 ? (t->rd_ios + t->wr_ios) / secs : 0);
		cell_f(sb, "%.2f", secs > 0 ? (t->rd_total + t->wr_total) / 1048576.0 / secs : 0);
		blk_strbuf_addf(sb, "<td>%s2C</td>", t->lat_from ? act_name(t->lat_from) : "-");
		cell_lat(sb, have ? t->lat_total / n : 0, have);
		cell_lat(sb, (double)blk_hist_percentile(&t->lat_all, 50), have);
		cell_lat(sb, (double)blk_hist_percentile(&t->lat_all, 90), have);
		cell_lat(sb, (double)blk_hist_percentile(&t->lat_all, 99), have);
		cell_lat(sb, (double)t->lat_max, have);
		blk_strbuf_addstr(sb, "</tr>\n");
	}
	blk_strbuf_addstr(sb, "</table>\n<p class=\"note\">Throughput and IOPS count ");
	blk_strbuf_addstr(sb, o->ntraces ? act_name(o->traces[0]->tput_act) : "C");
	blk_strbuf_addstr(sb, " events; latency is from issue (D), or queue (Q) when the trace has "
			      "no issues, to completion (C); percentiles are within 1.6%.</p>\n");
}

/* our btt, built in the top directory (iowatcher/..): btt/btt or btt */
static int find_btt(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 32);
	char *slash;
	struct stat st;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (int up = 0; up < 2 && (slash = strrchr(buf, '/')); up++) {
		strcpy(slash + 1, "btt");
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			return 1;
		strcpy(slash + 1, "btt/btt");
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			return 1;
		*slash = '\0';
	}
	return 0;
}

/* Remove the files btt leaves in @dir (it writes *_iops_fp.dat and *_mbps_fp.dat), then @dir. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * Append the output of "btt -i FILE" (escaped); return 0 if it ran cleanly. btt runs in a
 * scratch directory, so that the data files it always writes do not land in ours.
 */
static int btt_report(struct blk_strbuf *sb, const char *btt, const char *input)
{
	char tmp[] = "/tmp/iowatcher-btt-XXXXXX", abs[PATH_MAX], buf[4096];
	int fd[2], st;
	pid_t pid;
	ssize_t n;
	size_t total = 0;

	if (!realpath(input, abs) || !mkdtemp(tmp))
		return -1;
	if (pipe(fd)) {
		rmdir(tmp);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		rmdir(tmp);
		return -1;
	}
	if (!pid) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		if (chdir(tmp))
			_exit(127);
		execl(btt, "btt", "-i", abs, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	blk_strbuf_addstr(sb, "<pre class=\"btt\">");
	while ((n = read(fd[0], buf, sizeof(buf) - 1)) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		buf[n] = '\0';
		/* a report is a few pages; cap it so that the page stays readable */
		if (total < (1u << 20))
			iow_xml_escape(sb, buf);
		total += (size_t)n;
	}
	close(fd[0]);
	blk_strbuf_addstr(sb, "</pre>\n");
	n = waitpid(pid, &st, 0);
	remove_dir(tmp);
	if (n < 0)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/*
 * The Perfetto file of a trace written alongside it (btt -i NAME.bin --perfetto=NAME.pftrace,
 * as make demo does): NAME.pftrace or NAME.perfetto-trace, maybe .gz, next to the merged file
 * DIR/NAME.bin (or .dump, or the per-CPU files DIR/NAME.blktrace.N). Fills @buf; 0 if none.
 */
static int find_perfetto(const struct iow_trace *t, char *buf, size_t len)
{
	static const char *const ext[] = {".pftrace", ".pftrace.gz", ".perfetto-trace",
					  ".perfetto-trace.gz"};
	char base[PATH_MAX];
	int n;

	if (t->path) {
		size_t l = strlen(t->path);

		if (l >= sizeof(base))
			return 0;
		memcpy(base, t->path, l + 1);
		if (l > 4 && (!strcmp(base + l - 4, ".bin") || !strcmp(base + l - 4, ".gz")))
			base[l - (base[l - 1] == 'z' ? 3 : 4)] = 0;
		else if (l > 5 && !strcmp(base + l - 5, ".dump"))
			base[l - 5] = 0;
	} else if (t->dir && t->base) {
		n = snprintf(base, sizeof(base), "%s/%s", t->dir, t->base);
		if (n < 0 || (size_t)n >= sizeof(base))
			return 0;
	} else {
		return 0;
	}
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		n = snprintf(buf, len, "%s%s", base, ext[i]);
		if (n > 0 && (size_t)n < len && !access(buf, R_OK))
			return 1;
	}
	return 0;
}

/* the directory of @path, resolved (for comparing two files' places); 0 on failure */
static int real_dir(const char *path, char *buf)
{
	char d[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t l = slash ? (size_t)(slash - path) : 0;

	if (!slash) {
		d[0] = '.';
		d[1] = 0;
	} else {
		if (l >= sizeof(d))
			return 0;
		memcpy(d, path, l);
		d[l ? l : 1] = 0;
		if (!l)
			d[0] = '/';
	}
	return realpath(d, buf) != NULL;
}

/* a link to the Perfetto file of each trace that has one alongside it */
static void perfetto_links(struct blk_strbuf *sb, const struct iow_opts *o, const char *html)
{
	char pf[PATH_MAX], hd[PATH_MAX], pd[PATH_MAX], abs[PATH_MAX];

	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		const char *href;

		if (!find_perfetto(t, pf, sizeof(pf)))
			continue;
		/* beside the page: its name; elsewhere: its absolute path */
		if (real_dir(html, hd) && real_dir(pf, pd) && !strcmp(hd, pd))
			href = strrchr(pf, '/') ? strrchr(pf, '/') + 1 : pf;
		else
			href = realpath(pf, abs) ? abs : pf;
		blk_strbuf_addstr(sb, "<p>Perfetto trace of ");
		iow_xml_escape(sb, t->label);
		blk_strbuf_addstr(sb, ": <a href=\"");
		iow_xml_escape(sb, href);
		blk_strbuf_addstr(sb, "\">");
		iow_xml_escape(sb, href);
		blk_strbuf_addstr(
			sb, "</a> <span class=\"note\">(every I/O stage by stage: open "
			    "https://ui.perfetto.dev and drag the file onto the page; it is read "
			    "in the browser, nothing is uploaded)</span></p>\n");
	}
}

int iow_html(const struct iow_opts *o, const struct blk_strbuf *svg, const char *path)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	const char *s = svg->buf;
	char btt[PATH_MAX];
	int ret;

	blk_strbuf_addstr(
		&sb,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
	iow_xml_escape(&sb, o->title ? o->title : "iowatcher report");
	blk_strbuf_addstr(
		&sb,
		"</title>\n<style>\n"
		"body { font-family: sans-serif; margin: 1em 2em; color: #222; }\n"
		"table { border-collapse: collapse; margin: 0.5em 0; }\n"
		"th, td { border: 1px solid #bbb; padding: 2px 6px; font-size: 90%; text-align: right; white-space: nowrap; }\n"
		"th { background: #eee; } td:first-child { text-align: left; }\n"
		"pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; }\n"
		".note { color: #555; font-size: 90%; }\n"
		"</style>\n</head>\n<body>\n<h1>");
	iow_xml_escape(&sb, o->title ? o->title : "iowatcher report");
	blk_strbuf_addstr(&sb, "</h1>\n");
	summary(&sb, o);
	perfetto_links(&sb, o, path);
	if (find_btt(btt, sizeof(btt))) {
		for (int i = 0; i < o->ntraces; i++) {
			const struct iow_trace *t = o->traces[i];

			if (!t->path)
				continue;
			blk_strbuf_addstr(&sb, "<h2>btt: ");
			iow_xml_escape(&sb, t->label);
			blk_strbuf_addstr(&sb, "</h2>\n");
			if (btt_report(&sb, btt, t->path))
				blk_strbuf_addstr(
					&sb,
					"<p class=\"note\">btt did not complete on this trace.</p>\n");
		}
	}
	blk_strbuf_addstr(&sb, "<h2>Graphs</h2>\n<div class=\"graphs\">\n");
	/* inline the SVG without its XML declaration */
	if (svg->len > 5 && !memcmp(s, "<?xml", 5) && memchr(s, '\n', svg->len))
		s = (const char *)memchr(s, '\n', svg->len) + 1;
	blk_strbuf_add(&sb, s, svg->len - (size_t)(s - svg->buf));
	blk_strbuf_addstr(&sb, "</div>\n</body>\n</html>\n");
	ret = iow_write_file(path, &sb);
	blk_strbuf_release(&sb);
	return ret;
}
