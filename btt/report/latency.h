/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-IO latency files: -l (D2C), -q (Q2C), -z (Q2D), one per device
 * (NAME_<dev>_<kind>.dat, "time latency" lines), and -L, their averages over windows of
 * SECS (<dev>_<kind>_plat.dat).
 */
#ifndef BTT_LATENCY_H
#define BTT_LATENCY_H

struct btt_output_ops;

/* the output (output.h), for -l, -q, -z and -L: the last -L windows written and every file
 * closed at finish() */
extern const struct btt_output_ops latency_output;

#endif /* BTT_LATENCY_H */
