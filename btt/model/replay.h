/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The I/Os of a trace file's first records again, through a model of their own: for a
 * subscriber that learns only from a note, in the middle of a run, that it needed the
 * I/Os before it (a trace without such notes costs it nothing).
 */
#ifndef BTT_REPLAY_H
#define BTT_REPLAY_H

#include "blk/event.h"
#include "model/iomodel.h"

/**
 * iomodel_replay() - the records of @path before the first one @stop takes, modelled
 * again with @m's options; @sub's dev_event, done and lost (no flags) are called as @m
 * would have called them, their devices those of @devs (@m's registry, found by number)
 * Return: 0, or -errno when @path cannot be opened, or is damaged or changed before that
 * record (the run read past it).
 */
int iomodel_replay(const char *path, const struct iomodel *m, struct btt_devs *devs,
		   const struct btt_io_sub *sub, int (*stop)(const struct blk_event *ev));

#endif /* BTT_REPLAY_H */
