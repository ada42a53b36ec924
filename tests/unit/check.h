/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* check.h - minimal test registry: CHECK() records, TEST() runs, and the
 * runner ends with the line "N passed, N failed" (one per test). */
#ifndef AFCD_TEST_CHECK_H
#define AFCD_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

/* weak: one copy shared by every file of a runner built from several */
__attribute__((weak)) int check_failed_in_test;
__attribute__((weak)) int tests_passed, tests_failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		check_failed_in_test++;					\
		fprintf(stderr, "    %s:%d: CHECK(%s) failed: ",		\
			__FILE__, __LINE__, #cond);			\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
	}								\
} while (0)

#define CHECK_EQ(a, b) CHECK((unsigned long long)(a) == (unsigned long long)(b), \
			     "%s = %llu, %s = %llu", #a, (unsigned long long)(a), \
			     #b, (unsigned long long)(b))

static inline void run_test(const char *name, void (*fn)(void), const char *filter)
{
	if (filter && !strstr(name, filter))
		return;
	check_failed_in_test = 0;
	fn();
	if (check_failed_in_test) {
		tests_failed++;
		printf("FAIL %s\n", name);
	} else {
		tests_passed++;
		printf("ok   %s\n", name);
	}
	fflush(stdout);
}

#define TEST(fn) run_test(#fn, fn, filter)

static inline int test_summary(void)
{
	printf("%d passed, %d failed\n", tests_passed, tests_failed);
	return tests_failed ? 1 : 0;
}

#endif
