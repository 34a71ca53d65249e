// SPDX-License-Identifier: GPL-2.0
/*
 * The real allocator as an oracle for test-heapemu: runs a script of allocation calls with
 * the C library's malloc and reports where each block landed (offset from the heap start)
 * and the word each new block held at offset 40 before it was filled. It must allocate
 * nothing else, so it uses no stdio: script on stdin, results on stdout, both binary.
 * Built without sanitizers (they replace malloc).
 *
 * Script record: u32 kind (1 malloc, 2 calloc, 3 realloc, 4 free), u32 slot, u32 size,
 * u32 serial. Result per allocating record: u64 offset (or ~0 outside the heap), u64 word.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OPS 200000
#define SLOTS 4096

struct op {
	uint32_t kind, slot, size, serial;
};

static struct op ops[MAX_OPS];
static uint64_t res[MAX_OPS * 2];
static void *slot[SLOTS];
static size_t slot_size[SLOTS];

static size_t read_all(int fd, void *buf, size_t max)
{
	size_t got = 0;

	while (got < max) {
		ssize_t n = read(fd, (char *)buf + got, max - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static void fill(uint64_t *p, size_t size, uint32_t serial)
{
	for (size_t i = 0; i + 8 <= size; i += 8)
		p[i / 8] = ((uint64_t)serial << 8) | 0x5a;
}

int main(void)
{
	uintptr_t base = (uintptr_t)sbrk(0);
	size_t n = read_all(0, ops, sizeof(ops)) / sizeof(ops[0]), nr = 0;

	for (size_t i = 0; i < n; i++) {
		struct op *o = &ops[i];
		void *p = NULL;

		if (o->slot >= SLOTS)
			return 2;
		if (o->kind == 4) {
			free(slot[o->slot]);
			slot[o->slot] = NULL;
			continue;
		}
		if (o->kind == 1)
			p = malloc(o->size);
		else if (o->kind == 2)
			p = calloc(1, o->size);
		else if (o->kind == 3)
			p = realloc(slot[o->slot], o->size);
		if (!p)
			return 3;
		if ((uintptr_t)p < base || (uintptr_t)p >= (uintptr_t)sbrk(0)) {
			res[nr++] = UINT64_MAX;
			res[nr++] = 0;
		} else {
			uint64_t w = 0;

			if (o->size >= 48 && o->kind != 3)
				memcpy(&w, (char *)p + 40, 8);
			res[nr++] = (uint64_t)((uintptr_t)p - base);
			res[nr++] = w;
		}
		if (o->kind == 3 && o->size > slot_size[o->slot])
			fill((uint64_t *)((char *)p + (slot_size[o->slot] & ~(size_t)7)),
			     o->size - (slot_size[o->slot] & ~(size_t)7), o->serial);
		else if (o->kind != 3)
			fill(p, o->size, o->serial);
		slot[o->slot] = p;
		slot_size[o->slot] = o->size;
	}
	for (size_t off = 0; off < nr * 8;) {
		ssize_t w = write(1, (char *)res + off, nr * 8 - off);

		if (w <= 0)
			return 4;
		off += (size_t)w;
	}
	return 0;
}
