// SPDX-License-Identifier: GPL-2.0-only
/*
 * stats.c - counters, latency histograms and the tswap_stats JSON file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stats.h"

int tswap_stats_init(struct tswap_stats *s, unsigned int queue_depth)
{
	memset(s, 0, sizeof(*s));
	s->queue_depth = queue_depth;
	s->blocks_per_submit = calloc(queue_depth + 1, sizeof(uint64_t));
	s->inflight_at_submit = calloc(queue_depth + 1, sizeof(uint64_t));
	if (!s->blocks_per_submit || !s->inflight_at_submit) {
		tswap_stats_free(s);
		return -ENOMEM;
	}
	tswap_stats_reset(s);
	return 0;
}

void tswap_stats_free(struct tswap_stats *s)
{
	free(s->blocks_per_submit);
	free(s->inflight_at_submit);
	s->blocks_per_submit = NULL;
	s->inflight_at_submit = NULL;
}

void tswap_stats_reset(struct tswap_stats *s)
{
	uint64_t *bps = s->blocks_per_submit, *ias = s->inflight_at_submit;
	unsigned int q = s->queue_depth;

	memset(s, 0, sizeof(*s));
	s->queue_depth = q;
	s->blocks_per_submit = bps;
	s->inflight_at_submit = ias;
	if (bps)
		memset(bps, 0, (q + 1) * sizeof(*bps));
	if (ias)
		memset(ias, 0, (q + 1) * sizeof(*ias));
	s->submit_lat.min_ns = UINT64_MAX;
	s->wait_lat.min_ns = UINT64_MAX;
	s->op_lat.min_ns = UINT64_MAX;
}

static unsigned int lat_index(uint64_t v)
{
	unsigned int msb, e;

	if (v < TSWAP_LAT_SUB)
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v);
	e = msb - TSWAP_LAT_SUB_BITS + 1;
	return e * TSWAP_LAT_SUB + (unsigned int)((v >> (e - 1)) - TSWAP_LAT_SUB);
}

/* Middle of the values that fall into bucket idx. */
static uint64_t lat_value(unsigned int idx)
{
	unsigned int e = idx / TSWAP_LAT_SUB, m = idx % TSWAP_LAT_SUB;
	uint64_t lower;

	if (!e)
		return m;
	lower = (uint64_t)(TSWAP_LAT_SUB + m) << (e - 1);
	return lower + ((1ull << (e - 1)) >> 1);
}

void tswap_lat_add(struct tswap_lat *l, uint64_t ns)
{
	l->count++;
	l->sum_ns += ns;
	if (ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
	l->bucket[lat_index(ns)]++;
}

uint64_t tswap_lat_percentile(const struct tswap_lat *l, double p)
{
	uint64_t rank, seen = 0, v;
	unsigned int i;

	if (!l->count)
		return 0;
	rank = (uint64_t)((p / 100.0) * (double)l->count + 0.5);
	if (rank < 1)
		rank = 1;
	if (rank > l->count)
		rank = l->count;
	for (i = 0; i < TSWAP_LAT_BUCKETS; i++) {
		seen += l->bucket[i];
		if (seen >= rank)
			break;
	}
	v = lat_value(i);
	/* The exact extremes are known: never report outside them. */
	if (v < l->min_ns)
		v = l->min_ns;
	if (v > l->max_ns)
		v = l->max_ns;
	return v;
}

static void lat_merge(struct tswap_lat *d, const struct tswap_lat *s)
{
	unsigned int i;

	if (!s->count)
		return;
	d->count += s->count;
	d->sum_ns += s->sum_ns;
	if (s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	for (i = 0; i < TSWAP_LAT_BUCKETS; i++)
		d->bucket[i] += s->bucket[i];
}

void tswap_stats_merge(struct tswap_stats *d, const struct tswap_stats *s)
{
	unsigned int i;

	d->parts += s->parts;
	d->blocks += s->blocks;
	d->bytes += s->bytes;
	d->block_errors += s->block_errors;
	d->short_blocks += s->short_blocks;
	d->submit_calls += s->submit_calls;
	d->submit_eagain += s->submit_eagain;
	d->wait_calls += s->wait_calls;
	d->worker_usr_ns += s->worker_usr_ns;
	d->worker_sys_ns += s->worker_sys_ns;
	for (i = 0; i <= d->queue_depth && i <= s->queue_depth; i++) {
		d->blocks_per_submit[i] += s->blocks_per_submit[i];
		d->inflight_at_submit[i] += s->inflight_at_submit[i];
	}
	lat_merge(&d->submit_lat, &s->submit_lat);
	lat_merge(&d->wait_lat, &s->wait_lat);
	lat_merge(&d->op_lat, &s->op_lat);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_hist(FILE *f, const char *key, const uint64_t *h, unsigned int n)
{
	unsigned int i;
	int first = 1;

	fprintf(f, "  \"%s\": {", key);
	for (i = 0; i <= n; i++) {
		if (!h[i])
			continue;
		fprintf(f, "%s\"%u\": %llu", first ? "" : ", ", i,
			(unsigned long long)h[i]);
		first = 0;
	}
	fprintf(f, "},\n");
}

static void json_lat(FILE *f, const char *key, const struct tswap_lat *l)
{
	double us = 1e-3;

	if (!l->count) {
		fprintf(f, "  \"%s\": {\"count\": 0, \"min\": 0, \"mean\": 0, \"p50\": 0, \"p99\": 0, \"max\": 0},\n",
			key);
		return;
	}
	fprintf(f, "  \"%s\": {\"count\": %llu, \"min\": %.3f, \"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n",
		key, (unsigned long long)l->count, (double)l->min_ns * us,
		(double)l->sum_ns / (double)l->count * us,
		(double)tswap_lat_percentile(l, 50.0) * us,
		(double)tswap_lat_percentile(l, 99.0) * us,
		(double)l->max_ns * us);
}

static void json_write(FILE *f, const struct tswap_stats_meta *m,
		       const struct tswap_stats *s)
{
	double gbs = m->elapsed_s > 0 ? (double)s->bytes / m->elapsed_s / 1e9 : 0;

	fprintf(f, "{\n  \"tswap_version\": ");
	json_str(f, m->tswap_version);
	fprintf(f, ",\n  \"fio_version\": ");
	json_str(f, m->fio_version);
	fprintf(f, ",\n  \"job\": ");
	json_str(f, m->job_name);
	fprintf(f, ",\n  \"jobnum\": %d,\n  \"pid\": %ld,\n  \"backend\": ",
		m->job_number, m->pid);
	json_str(f, m->backend);
	fprintf(f, ",\n  \"submit\": ");
	json_str(f, m->submit);
	fprintf(f, ",\n  \"window\": ");
	json_str(f, m->window);
	fprintf(f, ",\n  \"block_size\": %llu,\n  \"queue_depth\": %u,\n"
		   "  \"threads\": %u,\n  \"io_contexts\": %u,\n",
		(unsigned long long)m->block_size, m->queue_depth, m->threads,
		m->threads);
	fprintf(f, "  \"pin\": ");
	json_str(f, m->pin);
	fprintf(f, ",\n  \"pinned\": %s,\n  \"alloc\": ", m->pinned ? "true" : "false");
	json_str(f, m->alloc ? m->alloc : "fio");
	fprintf(f, ",\n");
	fprintf(f, "  \"bounce\": %s,\n  \"bounce_ops\": %llu,\n  \"bounce_bytes\": %llu,\n"
		   "  \"bounce_alloc_ns\": %llu,\n  \"bounce_copy_ns\": %llu,\n"
		   "  \"bounce_free_ns\": %llu,\n",
		m->bounce ? "true" : "false", (unsigned long long)m->bounce_ops,
		(unsigned long long)m->bounce_bytes, (unsigned long long)m->bounce_alloc_ns,
		(unsigned long long)m->bounce_copy_ns, (unsigned long long)m->bounce_free_ns);
	fprintf(f, "  \"fill\": ");
	json_str(f, m->fill ? m->fill : "none");
	fprintf(f, ",\n  \"fill_ops\": %llu,\n  \"fill_ahead_ops\": %llu,\n"
		   "  \"fill_bytes\": %llu,\n  \"fill_ns\": %llu,\n",
		(unsigned long long)m->fill_ops, (unsigned long long)m->fill_ahead_ops,
		(unsigned long long)m->fill_bytes, (unsigned long long)m->fill_ns);
	fprintf(f, "  \"operations\": %llu,\n  \"op_errors\": %llu,\n  \"op_short\": %llu,\n",
		(unsigned long long)m->operations, (unsigned long long)m->op_errors,
		(unsigned long long)m->op_short);
	fprintf(f, "  \"parts\": %llu,\n  \"blocks\": %llu,\n  \"bytes\": %llu,\n"
		   "  \"block_errors\": %llu,\n  \"short_blocks\": %llu,\n",
		(unsigned long long)s->parts, (unsigned long long)s->blocks,
		(unsigned long long)s->bytes, (unsigned long long)s->block_errors,
		(unsigned long long)s->short_blocks);
	fprintf(f, "  \"submit_calls\": %llu,\n  \"submit_eagain\": %llu,\n  \"wait_calls\": %llu,\n",
		(unsigned long long)s->submit_calls, (unsigned long long)s->submit_eagain,
		(unsigned long long)s->wait_calls);
	fprintf(f, "  \"worker_cpu_usr_s\": %.6f,\n  \"worker_cpu_sys_s\": %.6f,\n",
		(double)s->worker_usr_ns / 1e9, (double)s->worker_sys_ns / 1e9);
	json_hist(f, "blocks_per_submit", s->blocks_per_submit, s->queue_depth);
	json_hist(f, "inflight_at_submit", s->inflight_at_submit, s->queue_depth);
	json_lat(f, "submit_latency_us", &s->submit_lat);
	json_lat(f, "wait_latency_us", &s->wait_lat);
	json_lat(f, "op_latency_us", &s->op_lat);
	fprintf(f, "  \"elapsed_s\": %.6f,\n  \"gbs\": %.6f\n}\n", m->elapsed_s, gbs);
}

int tswap_stats_write_json(const char *path, const struct tswap_stats_meta *m,
			   const struct tswap_stats *s)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	json_write(f, m, s);
	/* mkstemp() makes 0600: a stats file is for everyone to read. */
	if (fflush(f) || ferror(f) || fchmod(fd, 0644) || fsync(fd))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* $filename: `name` with '/' made '_', leading '/' dropped, at out + *n. */
static int put_file_name(const char *name, char *out, size_t outlen, size_t *n)
{
	while (*name == '/')
		name++;
	if (!*name)
		return -EINVAL;
	for (; *name; name++) {
		if (*n + 1 >= outlen)
			return -ENAMETOOLONG;
		out[(*n)++] = *name == '/' ? '_' : *name;
	}
	return 0;
}

int tswap_stats_expand_path(const char *tmpl, const struct tswap_stats_names *v,
			    char *out, size_t outlen)
{
	size_t n = 0;
	int w, ret;

	for (; *tmpl; tmpl++) {
		if (*tmpl == '$') {
			if (!strncasecmp(tmpl, "$jobname", 8)) {
				w = snprintf(out + n, outlen - n, "%s", v->job_name);
				tmpl += 7;
			} else if (!strncasecmp(tmpl, "$jobnum", 7)) {
				w = snprintf(out + n, outlen - n, "%d", v->clone_number);
				tmpl += 6;
			} else if (!strncasecmp(tmpl, "$filename", 9)) {
				if (!v->file_name)
					return -EINVAL;
				ret = put_file_name(v->file_name, out, outlen, &n);
				if (ret)
					return ret;
				tmpl += 8;
				continue;
			} else {
				w = snprintf(out + n, outlen - n, "$");
			}
			if (w < 0 || (size_t)w >= outlen - n)
				return -ENAMETOOLONG;
			n += (size_t)w;
			continue;
		}
		if (*tmpl != '%') {
			if (n + 1 >= outlen)
				return -ENAMETOOLONG;
			out[n++] = *tmpl;
			continue;
		}
		tmpl++;
		switch (*tmpl) {
		case 'j':
			w = snprintf(out + n, outlen - n, "%s", v->job_name);
			break;
		case 'n':
			w = snprintf(out + n, outlen - n, "%d", v->job_number);
			break;
		case 'p':
			w = snprintf(out + n, outlen - n, "%ld", v->pid);
			break;
		case '%':
			w = snprintf(out + n, outlen - n, "%%");
			break;
		default:
			return -EINVAL;
		}
		if (w < 0 || (size_t)w >= outlen - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	if (n >= outlen)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}
