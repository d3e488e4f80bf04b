// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_stats_path.c - the tswap_stats path template (stats.h,
 * tswap_stats_expand_path): %j %n %p %%, fio's filename_format keywords
 * $jobname and $jobnum, $filename kept to one path component, and the
 * errors.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

static const struct tswap_stats_names names = {
	.job_name = "swap",
	.job_number = 5,
	.clone_number = 2,
	.file_name = "/dev/nvme0n1",
	.pid = 4242,
};

/* expand TMPL with `v`; the result, or NULL on an error (its code in *ret). */
static const char *expand(const char *tmpl, const struct tswap_stats_names *v, int *ret)
{
	static char out[PATH_MAX];

	*ret = tswap_stats_expand_path(tmpl, v, out, sizeof(out));
	return *ret ? NULL : out;
}

static void test_percent_escapes(void **state)
{
	int ret;

	(void)state;
	assert_string_equal(expand("/tmp/%j.%n.%p.json", &names, &ret), "/tmp/swap.5.4242.json");
	assert_string_equal(expand("100%%-%j", &names, &ret), "100%-swap");
	assert_null(expand("/tmp/%x", &names, &ret));
	assert_int_equal(ret, -EINVAL);
	assert_null(expand("/tmp/%", &names, &ret));
	assert_int_equal(ret, -EINVAL);
}

static void test_fio_keywords(void **state)
{
	int ret;

	(void)state;
	/* $jobnum is fio's: the clone number, not %n's thread number */
	assert_string_equal(expand("/tmp/$jobname.$jobnum.json", &names, &ret), "/tmp/swap.2.json");
	/* fio matches its keywords without regard to case */
	assert_string_equal(expand("/tmp/$JobName-$JOBNUM", &names, &ret), "/tmp/swap-2");
	/* other '$' are kept as fio keeps them ($filenum, $clientuid too) */
	assert_string_equal(expand("/tmp/a$b$$filenum$", &names, &ret), "/tmp/a$b$$filenum$");
	assert_string_equal(expand("/tmp/$jobnam", &names, &ret), "/tmp/$jobnam");
}

static void test_filename_one_component(void **state)
{
	struct tswap_stats_names v = names;
	int ret;

	(void)state;
	assert_string_equal(expand("/tmp/stats-$filename.json", &v, &ret), "/tmp/stats-dev_nvme0n1.json");
	v.file_name = "../../etc/passwd";
	assert_string_equal(expand("/tmp/$filename", &v, &ret), "/tmp/.._.._etc_passwd");
	v.file_name = "//a//b/";
	assert_string_equal(expand("/tmp/$FILENAME", &v, &ret), "/tmp/a__b_");
	v.file_name = "scratch.swap";
	assert_string_equal(expand("$filename.stats", &v, &ret), "scratch.swap.stats");
	/* no file name: refused, not an empty component */
	v.file_name = NULL;
	assert_null(expand("/tmp/$filename", &v, &ret));
	assert_int_equal(ret, -EINVAL);
	v.file_name = "///";
	assert_null(expand("/tmp/$filename", &v, &ret));
	assert_int_equal(ret, -EINVAL);
}

static void test_too_long(void **state)
{
	struct tswap_stats_names v = names;
	char out[16];

	(void)state;
	assert_int_equal(tswap_stats_expand_path("/tmp/%j", &v, out, sizeof(out)), 0);
	assert_string_equal(out, "/tmp/swap");
	assert_int_equal(tswap_stats_expand_path("/tmp/$filename", &v, out, sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(tswap_stats_expand_path("/tmp/$jobname.jsonxy", &v, out, sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(tswap_stats_expand_path("/tmp/0123456789a", &v, out, sizeof(out)), -ENAMETOOLONG);
	/* exactly fits: 15 characters and the NUL */
	assert_int_equal(tswap_stats_expand_path("/tmp/$jobname.jsonx", &v, out, sizeof(out)), 0);
	assert_string_equal(out, "/tmp/swap.jsonx");
	v.file_name = "abcdefghij";
	assert_int_equal(tswap_stats_expand_path("/tmp/$filename", &v, out, sizeof(out)), 0);
	assert_string_equal(out, "/tmp/abcdefghij");
	v.file_name = "abcdefghijk";
	assert_int_equal(tswap_stats_expand_path("/tmp/$filename", &v, out, sizeof(out)), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percent_escapes),
		cmocka_unit_test(test_fio_keywords),
		cmocka_unit_test(test_filename_one_component),
		cmocka_unit_test(test_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
