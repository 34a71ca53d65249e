// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/strbuf.c: padding, the integer formatter, printf-style growth. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>

#include "blk/strbuf.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define L BLK_PAD_LEFT
#define Z BLK_PAD_ZERO

static void assert_sb(const struct blk_strbuf *sb, const char *want)
{
	if (sb->len != strlen(want) || memcmp(sb->buf, want, sb->len))
		print_error("got '%.*s', want '%s'\n", (int)sb->len, sb->buf, want);
	assert_int_equal(sb->len, strlen(want));
	assert_memory_equal(sb->buf, want, sb->len);
	assert_true(sb->alloc > sb->len);
}

static const struct pad_case {
	const char *s;
	int width, flags;
	const char *want;
} pad_cases[] = {
	{ "abc", 0, 0, "abc" },
	{ "abc", -4, 0, "abc" },
	{ "abc", 2, 0, "abc" },
	{ "abc", 3, 0, "abc" },
	{ "abc", 6, 0, "   abc" },
	{ "abc", 6, L, "abc   " },
	{ "abc", 6, Z, "000abc" },
	{ "abc", 6, L | Z, "abc   " },	/* as printf: '-' overrides '0' */
	{ "", 3, 0, "   " },
	{ "", 3, L, "   " },
	{ "", 0, 0, "" },
};

static void test_padded(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(pad_cases); i++) {
		struct blk_strbuf sb = BLK_STRBUF_INIT;
		const struct pad_case *c = &pad_cases[i];

		blk_strbuf_add_padded(&sb, c->s, strlen(c->s), c->width, c->flags);
		assert_sb(&sb, c->want);
		blk_strbuf_release(&sb);
	}
}

static const struct u64_case {
	uint64_t v;
	int width, flags;
	const char *want;
} u64_cases[] = {
	{ 0, 0, 0, "0" },
	{ 0, 3, 0, "  0" },
	{ 0, 3, Z, "000" },
	{ 7, 1, 0, "7" },
	{ 42, 5, 0, "   42" },
	{ 42, 5, L, "42   " },
	{ 42, 5, Z, "00042" },
	{ 42, 5, L | Z, "42   " },
	{ 123456, 3, 0, "123456" },
	{ 3456789, 9, Z, "003456789" },
	{ 1000000000, 0, 0, "1000000000" },
	{ 4294967295u, 0, 0, "4294967295" },
	{ UINT64_MAX, 0, 0, "18446744073709551615" },
	{ UINT64_MAX, 22, 0, "  18446744073709551615" },
	{ UINT64_MAX, 22, Z, "0018446744073709551615" },
};

static void test_u64(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(u64_cases); i++) {
		struct blk_strbuf sb = BLK_STRBUF_INIT;
		const struct u64_case *c = &u64_cases[i];

		blk_strbuf_add_u64(&sb, c->v, c->width, c->flags);
		assert_sb(&sb, c->want);
		blk_strbuf_release(&sb);
	}
}

static const struct s64_case {
	int64_t v;
	int width, flags;
	const char *want;
} s64_cases[] = {
	{ 0, 0, 0, "0" },
	{ 5, 3, 0, "  5" },
	{ -1, 0, 0, "-1" },
	{ -42, 0, 0, "-42" },
	{ -42, 5, 0, "  -42" },
	{ -42, 5, L, "-42  " },
	{ -42, 5, Z, "-0042" },		/* printf: sign before the zeros */
	{ -42, 2, Z, "-42" },
	{ -42, 0, Z, "-42" },
	{ -42, 5, L | Z, "-42  " },
	{ 42, 5, Z, "00042" },
	{ -2147483647 - 1, 0, 0, "-2147483648" },
	{ INT64_MAX, 0, 0, "9223372036854775807" },
	{ INT64_MIN, 0, 0, "-9223372036854775808" },
	{ INT64_MIN, 22, 0, "  -9223372036854775808" },
	{ INT64_MIN, 22, Z, "-009223372036854775808" },
};

static void test_s64(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(s64_cases); i++) {
		struct blk_strbuf sb = BLK_STRBUF_INIT;
		const struct s64_case *c = &s64_cases[i];

		blk_strbuf_add_s64(&sb, c->v, c->width, c->flags);
		assert_sb(&sb, c->want);
		blk_strbuf_release(&sb);
	}
}

/* The integer formatter agrees with printf over a spread of values, widths and flags. */
static void test_matches_printf(void **state)
{
	static const int64_t vals[] = { 0, 1, -1, 9, -9, 10, -10, 99, 100, -100, 65535, -65536,
					1234567, -7654321, INT32_MAX, INT32_MIN };
	static const int widths[] = { 0, 1, 2, 3, 5, 8, 12 };
	char want[64];

	(void)state;
	for (size_t i = 0; i < N(vals); i++) {
		for (size_t w = 0; w < N(widths); w++) {
			for (int fl = 0; fl < 3; fl++) {
				struct blk_strbuf sb = BLK_STRBUF_INIT;
				int width = widths[w];

				if (fl == 0)
					snprintf(want, sizeof(want), "%*" PRId64, width, vals[i]);
				else if (fl == 1)
					snprintf(want, sizeof(want), "%-*" PRId64, width, vals[i]);
				else
					snprintf(want, sizeof(want), "%0*" PRId64, width, vals[i]);
				blk_strbuf_add_s64(&sb, vals[i], width, fl == 0 ? 0 : fl == 1 ? L : Z);
				assert_sb(&sb, want);
				if (vals[i] >= 0) {
					blk_strbuf_reset(&sb);
					blk_strbuf_add_u64(&sb, (uint64_t)vals[i], width,
							   fl == 0 ? 0 : fl == 1 ? L : Z);
					assert_sb(&sb, want);
				}
				blk_strbuf_release(&sb);
			}
		}
	}
}

static void test_add_and_reset(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;

	(void)state;
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	blk_strbuf_addstr(&sb, "ab");
	blk_strbuf_addch(&sb, 'c');
	blk_strbuf_add(&sb, "defgh", 2);
	blk_strbuf_add_u64(&sb, 12, 3, 0);
	blk_strbuf_add_s64(&sb, -3, 0, 0);
	assert_sb(&sb, "abcde 12-3");
	blk_strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_non_null(sb.buf);
	blk_strbuf_addstr(&sb, "x");
	assert_sb(&sb, "x");
	blk_strbuf_release(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.alloc, 0);
	/* release leaves it re-initialised and usable; a second release is harmless */
	blk_strbuf_addch(&sb, 'y');
	assert_sb(&sb, "y");
	blk_strbuf_release(&sb);
	blk_strbuf_release(&sb);
}

/* Appending byte by byte across many growth steps keeps every byte. */
static void test_growth(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;

	(void)state;
	for (int i = 0; i < 100000; i++)
		blk_strbuf_addch(&sb, (char)('a' + i % 26));
	assert_int_equal(sb.len, 100000);
	assert_true(sb.alloc > sb.len);
	for (int i = 0; i < 100000; i++)
		assert_int_equal(sb.buf[i], 'a' + i % 26);
	blk_strbuf_grow(&sb, 1000000);
	assert_true(sb.alloc >= sb.len + 1000000 + 1);
	assert_int_equal(sb.len, 100000);
	assert_int_equal(sb.buf[99999], 'a' + 99999 % 26);
	blk_strbuf_release(&sb);

	/* padding larger than the whole buffer */
	blk_strbuf_add_padded(&sb, "z", 1, 5000, 0);
	assert_int_equal(sb.len, 5000);
	assert_int_equal(sb.buf[0], ' ');
	assert_int_equal(sb.buf[4998], ' ');
	assert_int_equal(sb.buf[4999], 'z');
	blk_strbuf_release(&sb);
	blk_strbuf_add_u64(&sb, 1, 3000, BLK_PAD_LEFT);
	assert_int_equal(sb.len, 3000);
	assert_int_equal(sb.buf[0], '1');
	assert_int_equal(sb.buf[2999], ' ');
	blk_strbuf_release(&sb);
}

static void vaddf_helper(struct blk_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void vaddf_helper(struct blk_strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	blk_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

static void test_addf(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	char big[5000], want[16384];
	size_t wl = 0;

	(void)state;
	/* into an unallocated buffer */
	blk_strbuf_addf(&sb, "%d-%s", 42, "x");
	assert_sb(&sb, "42-x");
	assert_int_equal(sb.buf[sb.len], '\0');
	blk_strbuf_release(&sb);

	/* an empty result */
	blk_strbuf_addf(&sb, "%s", "");
	assert_int_equal(sb.len, 0);
	blk_strbuf_release(&sb);

	/* exact fits and growth: appends that cross the allocation many times */
	memset(big, 'B', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 40; i++) {
		int n = snprintf(want + wl, sizeof(want) - wl, "[%03d:%.*s]", i, i * 7, big);

		blk_strbuf_addf(&sb, "[%03d:%.*s]", i, i * 7, big);
		wl += (size_t)n;
		assert_int_equal(sb.len, wl);
		assert_memory_equal(sb.buf, want, wl);
	}
	/* one append larger than everything so far */
	blk_strbuf_addf(&sb, "%s|%s", big, "end");
	assert_int_equal(sb.len, wl + sizeof(big) - 1 + 4);
	assert_memory_equal(sb.buf, want, wl);
	assert_memory_equal(sb.buf + wl, big, sizeof(big) - 1);
	assert_memory_equal(sb.buf + wl + sizeof(big) - 1, "|end", 4);
	assert_int_equal(sb.buf[sb.len], '\0');
	blk_strbuf_release(&sb);

	/* a result that exactly fills the remaining space, then one more byte */
	blk_strbuf_grow(&sb, 10);
	{
		size_t room = sb.alloc - sb.len - 1;
		char fill[4096];

		assert_true(room < sizeof(fill));
		memset(fill, 'f', room);
		fill[room] = '\0';
		blk_strbuf_addf(&sb, "%s", fill);
		assert_int_equal(sb.len, room);
		blk_strbuf_addf(&sb, "%c", 'g');
		assert_int_equal(sb.len, room + 1);
		assert_int_equal(sb.buf[room], 'g');
		assert_int_equal(sb.buf[room - 1], 'f');
	}
	blk_strbuf_release(&sb);

	/* the va_list variant */
	blk_strbuf_addstr(&sb, "a");
	vaddf_helper(&sb, "%s%u", "b", 7u);
	assert_sb(&sb, "ab7");
	blk_strbuf_release(&sb);
}

/* ---- the raw pointer writers (blk_strbuf_reserve() + blk_put_*()) ---- */

static const struct put_case {
	char kind;		/* 'u' put_u64, 'l' put_u64_left, 's' put_s64, 'S' put_str */
	int64_t v;
	const char *str;
	int width;
	char pad;
	const char *want;
} put_cases[] = {
	{ 'u', 0, NULL, 0, ' ', "0" },
	{ 'u', 42, NULL, 5, ' ', "   42" },
	{ 'u', 42, NULL, 5, '0', "00042" },
	{ 'u', 42, NULL, 1, ' ', "42" },
	{ 'u', 3456789, NULL, 9, '0', "003456789" },
	{ 'u', 123456, NULL, 5, ' ', "123456" },
	{ 'l', 0, NULL, 3, 0, "0  " },
	{ 'l', 16, NULL, 3, 0, "16 " },
	{ 'l', 65536, NULL, 3, 0, "65536" },
	{ 'l', 7, NULL, 0, 0, "7" },
	{ 's', 0, NULL, 2, 0, " 0" },
	{ 's', 12, NULL, 2, 0, "12" },
	{ 's', -1, NULL, 8, 0, "      -1" },
	{ 's', -12345678, NULL, 8, 0, "-12345678" },
	{ 's', -2147483647 - 1, NULL, 8, 0, "-2147483648" },
	{ 's', INT64_MIN, NULL, 0, 0, "-9223372036854775808" },
	{ 's', INT64_MAX, NULL, 0, 0, "9223372036854775807" },
	{ 'S', 0, "Q", 2, 0, " Q" },
	{ 'S', 0, "UT", 2, 0, "UT" },
	{ 'S', 0, "WS", 3, 0, " WS" },
	{ 'S', 0, "FRFASM", 3, 0, "FRFASM" },
	{ 'S', 0, "", 2, 0, "  " },
	{ 'S', 0, "dd", 0, 0, "dd" },
};

static void test_put_writers(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(put_cases); i++) {
		const struct put_case *c = &put_cases[i];
		struct blk_strbuf sb = BLK_STRBUF_INIT;
		char *p, *start;

		blk_strbuf_addstr(&sb, "<");
		start = p = blk_strbuf_reserve(&sb, 64);
		assert_ptr_equal(p, sb.buf + sb.len);
		assert_true(sb.alloc - sb.len >= 64 + 1);
		switch (c->kind) {
		case 'u':
			p = blk_put_u64(p, (uint64_t)c->v, c->width, c->pad);
			break;
		case 'l':
			p = blk_put_u64_left(p, (uint64_t)c->v, c->width);
			break;
		case 's':
			p = blk_put_s64(p, c->v, c->width);
			break;
		default:
			p = blk_put_str(p, c->str, c->width);
			break;
		}
		sb.len += (size_t)(p - start);
		blk_strbuf_addch(&sb, '>');
		if (sb.len != strlen(c->want) + 2 || memcmp(sb.buf + 1, c->want, strlen(c->want)))
			print_error("case %zu: got '%.*s', want '<%s>'\n", i, (int)sb.len, sb.buf,
				    c->want);
		assert_int_equal(sb.len, strlen(c->want) + 2);
		assert_memory_equal(sb.buf + 1, c->want, strlen(c->want));
		assert_int_equal(sb.buf[sb.len - 1], '>');
		blk_strbuf_release(&sb);
	}
}

/* The raw writers agree with the checked ones over a spread of values and widths. */
static void test_put_matches_add(void **state)
{
	static const int64_t vals[] = { 0, 5, -5, 99, -100, 65535, 1234567, -7654321,
					INT32_MAX, INT32_MIN };

	(void)state;
	for (size_t i = 0; i < N(vals); i++) {
		for (int width = 0; width < 13; width++) {
			struct blk_strbuf a = BLK_STRBUF_INIT, b = BLK_STRBUF_INIT;
			char *p;

			blk_strbuf_add_s64(&a, vals[i], width, 0);
			p = blk_strbuf_reserve(&b, 32);
			b.len += (size_t)(blk_put_s64(p, vals[i], width) - p);
			assert_int_equal(a.len, b.len);
			assert_memory_equal(a.buf, b.buf, a.len);
			if (vals[i] >= 0) {
				blk_strbuf_reset(&a);
				blk_strbuf_reset(&b);
				blk_strbuf_add_u64(&a, (uint64_t)vals[i], width, BLK_PAD_LEFT);
				p = blk_strbuf_reserve(&b, 32);
				b.len += (size_t)(blk_put_u64_left(p, (uint64_t)vals[i], width) - p);
				assert_int_equal(a.len, b.len);
				assert_memory_equal(a.buf, b.buf, a.len);
			}
			blk_strbuf_release(&a);
			blk_strbuf_release(&b);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_padded),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_s64),
		cmocka_unit_test(test_matches_printf),
		cmocka_unit_test(test_add_and_reset),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_addf),
		cmocka_unit_test(test_put_writers),
		cmocka_unit_test(test_put_matches_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
