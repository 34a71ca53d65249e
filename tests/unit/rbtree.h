/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An intrusive pointer red-black tree, the model the unit tests check btt against: btt's
 * outputs depend on the shape of the classic btt's trees (the order in which a completion
 * visits the queued I/Os it covers, the seek median walk), and btt/model/qtree.c and
 * btt/report/seekstat.c rebuild those shapes with this algorithm, step for step.
 */
#ifndef BTT_RBTREE_H
#define BTT_RBTREE_H

#include <stddef.h>

struct rb_node {
	struct rb_node *parent, *left, *right;
	int red;
};

struct rb_root {
	struct rb_node *node;
};

#define RB_ROOT_INIT \
	{            \
		NULL \
	}
#define rb_entry(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Attach @node as the child *@link of @parent (red, no children); then call rb_insert_color. */
static inline void rb_link_node(struct rb_node *node, struct rb_node *parent, struct rb_node **link)
{
	node->parent = parent;
	node->left = node->right = NULL;
	node->red = 1;
	*link = node;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root);
void rb_erase(struct rb_node *node, struct rb_root *root);
/* Put @new in @victim's place (same colour and links); @victim leaves the tree. */
void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root);
struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);

#endif /* BTT_RBTREE_H */
