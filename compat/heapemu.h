/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model of the GNU C library's allocator (glibc 2.36, main arena, one thread: per-thread
 * cache, fast bins, unsorted/small/large bins, top chunk grown with brk and trimmed), over
 * a byte image of the heap. It answers what a program that never initialises its memory
 * reads: replay the program's allocations and writes, then read the bytes a new block
 * holds. The classic blkparse -t prints such bytes (see compat/classicmem.c).
 *
 * Addresses are offsets from the start of the heap (the first chunk, the allocator's cache
 * table, is at 0); blocks of the mmap threshold and above live outside the image and read
 * as zero. Memory is the modelled program's heap size, never more.
 */
#ifndef BLK_HEAPEMU_H
#define BLK_HEAPEMU_H

#include <stddef.h>
#include <stdint.h>

/*
 * The C library modelled (as getconf GNU_LIBC_VERSION names it, without "glibc "): the
 * -t outputs match the reference only there (tests/lib.sh have_modelled_glibc).
 */
#define BLK_HEAPEMU_GLIBC "2.36"

struct blk_heapemu;

/* Return: a new empty heap, or NULL (ENOMEM). */
struct blk_heapemu *blk_heapemu_new(void);
void blk_heapemu_free(struct blk_heapemu *h);

/*
 * Allocation calls, as the program makes them. Each returns the block's address (> 0), or
 * 0 when the model ran out of memory or met an impossible request (blk_heapemu_failed()
 * is then set and stays set; later calls return 0).
 */
uint64_t blk_heapemu_malloc(struct blk_heapemu *h, size_t n);
uint64_t blk_heapemu_calloc(struct blk_heapemu *h, size_t n);
uint64_t blk_heapemu_realloc(struct blk_heapemu *h, uint64_t p, size_t n);
void blk_heapemu_release(struct blk_heapemu *h, uint64_t p); /* free() */

/* Write or read @n bytes of block memory at @p (an address inside a block). */
void blk_heapemu_write(struct blk_heapemu *h, uint64_t p, const void *src, size_t n);
void blk_heapemu_read(const struct blk_heapemu *h, uint64_t p, void *dst, size_t n);
void blk_heapemu_put64(struct blk_heapemu *h, uint64_t p, uint64_t v);
uint64_t blk_heapemu_get64(const struct blk_heapemu *h, uint64_t p);

int blk_heapemu_failed(const struct blk_heapemu *h);
/* Current size of the modelled heap (its break), in bytes. */
uint64_t blk_heapemu_size(const struct blk_heapemu *h);

#endif /* BLK_HEAPEMU_H */
