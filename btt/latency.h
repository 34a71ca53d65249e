/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-IO latency files: -l (D2C), -q (Q2C), -z (Q2D), one per device
 * (NAME_<dev>_<kind>.dat, "time latency" lines), and -L, their averages over windows of
 * SECS (<dev>_<kind>_plat.dat).
 */
#ifndef BTT_LATENCY_H
#define BTT_LATENCY_H

struct btt;
struct latency;

/* a subscriber to @b->model, for -l, -q, -z and -L (NULL when none is given) */
struct latency *latency_new(struct btt *b);
/* the last -L windows written, every file closed */
void latency_finish(struct latency *l);
void latency_free(struct latency *l);

#endif /* BTT_LATENCY_H */
