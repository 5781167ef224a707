/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the unit test harness: TEST(name) { ... } registers a test;
 * CHECK* macros record the first failure of a test and return from it.
 */
#ifndef PROF_TEST_HARNESS_H
#define PROF_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

void t_register(const struct unit_test *t);
void t_fail(const char *file, int line, const char *expr);
void t_fail_int(const char *file, int line, const char *expr, long long a, long long b);
void t_fail_str(const char *file, int line, const char *expr, const char *a, const char *b);
bool t_failed(void);

#define TEST(name)                                                                         \
	static void test_##name(void);                                                     \
	static const struct unit_test unit_##name = { #name, test_##name };                \
	__attribute__((constructor)) static void register_##name(void)                     \
	{                                                                                  \
		t_register(&unit_##name);                                                  \
	}                                                                                  \
	static void test_##name(void)

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			t_fail(__FILE__, __LINE__, #c);                                    \
			return;                                                            \
		}                                                                          \
	} while (0)

#define CHECK_INT(a, op, b)                                                                \
	do {                                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (!(a_ op b_)) {                                                         \
			t_fail_int(__FILE__, __LINE__, #a " " #op " " #b, a_, b_);         \
			return;                                                            \
		}                                                                          \
	} while (0)

#define CHECK_STR(a, b)                                                                    \
	do {                                                                               \
		const char *a_ = (a), *b_ = (b);                                           \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                        \
			t_fail_str(__FILE__, __LINE__, #a " == " #b, a_, b_);              \
			return;                                                            \
		}                                                                          \
	} while (0)

/* Run a helper that may CHECK-fail, and stop the calling test if it did. */
#define CHECK_CALL(call)                                                                   \
	do {                                                                               \
		call;                                                                      \
		if (t_failed())                                                            \
			return;                                                            \
	} while (0)

/*
 * The test target NAME of this build ($BUILD/targets/NAME, else beside
 * unit-tests), as a real path kept until exit; NULL if it is not there.
 */
const char *t_target(const char *name);

#endif /* PROF_TEST_HARNESS_H */
