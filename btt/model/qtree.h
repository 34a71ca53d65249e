/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trees of queued I/Os, compact: all nodes live in arrays indexed by 32-bit links, a
 * node's start sector and children (16 bytes, what a descent reads) in one, its parent,
 * length and colour in another, and the payload of node i (the rest of the I/O's record)
 * in a third. A tree of 100k queued requests fits in the L2 cache; as 128-byte
 * pointer-linked records it did not.
 *
 * Insertion, replacement of an equal start and erasure follow tests/unit/rbtree.c step for step,
 * so the shape is the classic btt's: its outputs depend on it (tests/unit/test-qtree.c
 * compares the two after every operation).
 */
#ifndef BTT_QTREE_H
#define BTT_QTREE_H

#include <stddef.h>
#include <stdint.h>

#include "model/u64map.h"

struct qnode {
	uint64_t sector;
	uint32_t left, right; /* node indexes; 0 is none */
};

/* the rest of a node, apart: a descent only reads qnode, four to a cache line */
struct qaux {
	uint32_t parent;
	/* length in sectors << 3 | counted as wide << 2 | reaches past its successor's
	 * start << 1 | red */
	uint32_t nsec_red;
};

/* the nodes (and payloads) of any number of trees; a tree is the index of its root */
struct qpool {
	struct qnode *node; /* node[0] is never used */
	struct qaux *aux;
	unsigned char *data; /* payload of node i at data + i * data_size */
	size_t data_size;
	uint32_t used; /* slots handed out so far, including 0 */
	uint32_t cap;
	uint32_t free; /* released nodes, linked through parent */
	uint32_t live; /* nodes in trees */
};

void qpool_init(struct qpool *p, size_t data_size);
/* every tree of the pool is gone (roots must be reset to 0) */
void qpool_release(struct qpool *p);

static inline void *qpool_data(const struct qpool *p, uint32_t i)
{
	return p->data + (size_t)i * p->data_size;
}

static inline uint32_t qtree_nsec(const struct qpool *p, uint32_t i)
{
	return p->aux[i].nsec_red >> 3;
}

/*
 * One device's tree. Besides the classic tree (whose shape decides the outputs), a table
 * from start sector to node, and a count, per 1 MiB region of the disk, of the nodes that
 * reach past the start of their in-order successor (only such a node can hold another's
 * start). A search for the start of a request whose region no such node touches has only
 * one possible answer whatever the shape, and is answered from the table.
 */
#define QTREE_PAGE_REGIONS 32768u
#define QTREE_RECENT 1024

struct qtree {
	uint32_t root;
	uint32_t n; /* nodes in the tree */
	uint32_t *slot; /* start sector -> node; 0 is empty */
	unsigned int bits; /* the table has 1 << bits slots; 0: no table yet */
	uint32_t zero; /* nodes of no sectors */
	uint32_t wide; /* reaching nodes too long to be counted per region */
	struct u64map regions; /* region + 1 -> reaching nodes that touch it */
	/* the same regions as bits (a search tests one bit, not a slot of the larger map):
	 * page + 1 -> a page of QTREE_PAGE_REGIONS bits and its count of set bits */
	struct u64map pages;
	uint64_t fast, slow; /* searches answered from the table / by a descent */
	/*
	 * The last new node and its in-order successor (0: none), kept adjacent through
	 * erasures: the next I/O of a sequential stream starts between them, and is linked in
	 * where the descent would have put it without descending.
	 */
	uint32_t hint_pred, hint_succ;
	int hint_ok;
	/*
	 * The nodes last looked up or added, by start sector (a request's events follow one
	 * another closely: most searches are answered here, in the L1 cache, before the
	 * table); a node leaves it when it leaves the tree.
	 */
	uint32_t recent[QTREE_RECENT];
	uint64_t hinted; /* insertions placed by the hint */
};

/* the nodes a range search found, in the order the classic walk meets them */
struct qmatch {
	uint32_t *idx;
	size_t n, cap;
};

/* Forget the tree (its nodes go with qpool_release) and free its tables. */
void qtree_reset(struct qtree *t);

/* The node whose range holds @sector, first met from the root; 0 if none. */
uint32_t qtree_find(const struct qpool *p, struct qtree *t, uint64_t sector);

/*
 * Insert an I/O of @nsec sectors at @sector (nsec < 2^29). An I/O already queued at the
 * same start is replaced in place: its node is returned with the new length, *@replaced
 * set and the previous length in *@old_nsec. Otherwise a new node. The caller fills the
 * payload (zeroed for a new node, the previous I/O's for a replaced one). 0 when out of
 * memory.
 */
uint32_t qtree_insert(struct qpool *p, struct qtree *t, uint64_t sector, uint32_t nsec,
		      int *replaced, uint32_t *old_nsec);

/* The first node of the tree in sector order, and the one after node @i (0: none). */
uint32_t qtree_first(const struct qpool *p, const struct qtree *t);
uint32_t qtree_next(const struct qpool *p, uint32_t i);

/* Unlink node @i from the tree and give it back to the pool. */
void qtree_erase(struct qpool *p, struct qtree *t, uint32_t i);

/*
 * The nodes lying inside [@s, @e] into @m (emptied first), in the order of the classic
 * pruned pre-order walk, which may miss some when ranges overlap. -1 when out of memory.
 */
int qtree_collect(const struct qpool *p, struct qtree *t, uint64_t s, uint64_t e, struct qmatch *m);

/*
 * Warm the cache for searches of @n sectors (@n <= QTREE_PREFETCH_MAX) in trees @t[i]:
 * descend all of them in lockstep, one level per round, so that their cache misses
 * overlap instead of following one another. Changes nothing; the searches that follow
 * (even after a few insertions) find their nodes in the cache.
 */
#define QTREE_PREFETCH_MAX 32
void qtree_prefetch(const struct qpool *p, struct qtree *const *t, const uint64_t *sector,
		    size_t n);

#endif /* BTT_QTREE_H */
