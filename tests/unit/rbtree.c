// SPDX-License-Identifier: GPL-2.0
/*
 * Red-black tree: bottom-up insertion with recolouring and rotations, and erasure that
 * splices in the in-order successor, as in the textbook formulation.
 */
#include "rbtree.h"

static void change_child(struct rb_node *old, struct rb_node *new, struct rb_node *parent,
			 struct rb_root *root)
{
	if (!parent)
		root->node = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

static void rotate_left(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	y->parent = x->parent;
	change_child(x, y, x->parent, root);
	y->left = x;
	x->parent = y;
}

static void rotate_right(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	y->parent = x->parent;
	change_child(x, y, x->parent, root);
	y->right = x;
	x->parent = y;
}

void rb_insert_color(struct rb_node *z, struct rb_root *root)
{
	struct rb_node *p, *g, *u;

	while ((p = z->parent) && p->red) {
		g = p->parent;
		if (p == g->left) {
			u = g->right;
			if (u && u->red) {
				p->red = 0;
				u->red = 0;
				g->red = 1;
				z = g;
				continue;
			}
			if (z == p->right) {
				rotate_left(p, root);
				z = p;
				p = z->parent;
			}
			p->red = 0;
			g->red = 1;
			rotate_right(g, root);
		} else {
			u = g->left;
			if (u && u->red) {
				p->red = 0;
				u->red = 0;
				g->red = 1;
				z = g;
				continue;
			}
			if (z == p->left) {
				rotate_right(p, root);
				z = p;
				p = z->parent;
			}
			p->red = 0;
			g->red = 1;
			rotate_left(g, root);
		}
	}
	root->node->red = 0;
}

static void erase_fixup(struct rb_node *x, struct rb_node *parent, struct rb_root *root)
{
	struct rb_node *w;

	while (x != root->node && (!x || !x->red)) {
		if (x == parent->left) {
			w = parent->right;
			if (w->red) {
				w->red = 0;
				parent->red = 1;
				rotate_left(parent, root);
				w = parent->right;
			}
			if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
				w->red = 1;
				x = parent;
				parent = x->parent;
			} else {
				if (!w->right || !w->right->red) {
					w->left->red = 0;
					w->red = 1;
					rotate_right(w, root);
					w = parent->right;
				}
				w->red = parent->red;
				parent->red = 0;
				if (w->right)
					w->right->red = 0;
				rotate_left(parent, root);
				x = root->node;
				break;
			}
		} else {
			w = parent->left;
			if (w->red) {
				w->red = 0;
				parent->red = 1;
				rotate_right(parent, root);
				w = parent->left;
			}
			if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
				w->red = 1;
				x = parent;
				parent = x->parent;
			} else {
				if (!w->left || !w->left->red) {
					w->right->red = 0;
					w->red = 1;
					rotate_left(w, root);
					w = parent->left;
				}
				w->red = parent->red;
				parent->red = 0;
				if (w->left)
					w->left->red = 0;
				rotate_right(parent, root);
				x = root->node;
				break;
			}
		}
	}
	if (x)
		x->red = 0;
}

void rb_erase(struct rb_node *z, struct rb_root *root)
{
	struct rb_node *x, *parent, *y;
	int removed_red;

	if (!z->left || !z->right) {
		x = z->left ? z->left : z->right;
		parent = z->parent;
		removed_red = z->red;
		if (x)
			x->parent = parent;
		change_child(z, x, parent, root);
	} else {
		y = z->right;
		while (y->left)
			y = y->left;
		removed_red = y->red;
		x = y->right;
		if (y->parent == z) {
			parent = y;
		} else {
			parent = y->parent;
			parent->left = x;
			if (x)
				x->parent = parent;
			y->right = z->right;
			z->right->parent = y;
		}
		y->left = z->left;
		z->left->parent = y;
		y->parent = z->parent;
		change_child(z, y, z->parent, root);
		y->red = z->red;
	}
	if (!removed_red && root->node)
		erase_fixup(x, parent, root);
}

void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root)
{
	*new = *victim;
	if (victim->left)
		victim->left->parent = new;
	if (victim->right)
		victim->right->parent = new;
	change_child(victim, new, victim->parent, root);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->node;

	if (!n)
		return NULL;
	while (n->left)
		n = n->left;
	return n;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	struct rb_node *p;

	if (node->right) {
		node = node->right;
		while (node->left)
			node = node->left;
		return (struct rb_node *)node;
	}
	while ((p = node->parent) && node == p->right)
		node = p;
	return p;
}
