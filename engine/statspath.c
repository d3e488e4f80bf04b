// SPDX-License-Identifier: GPL-2.0-only
/*
 * statspath.c - the tswap_stats file from fio's side: its path checked at
 * init, so that a path that would fail at the end of the job fails before
 * any I/O and nothing of the user's is replaced; the file written at
 * cleanup (stats.c writes the JSON).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "stats.h"
#include "tswap.h"

#ifndef TSWAP_VERSION
#define TSWAP_VERSION "unknown"
#endif

static const char *file_type(mode_t m)
{
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISFIFO(m))
		return "FIFO";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISDIR(m))
		return "directory";
	return "special file";
}

/*
 * The absolute name of `path` with its directory resolved (the last
 * component kept as it is, existing or not): two spellings of one file
 * name ("./f", "d/../f", a symlinked directory) compare equal.
 */
static bool canon_name(const char *path, char *out, size_t outlen)
{
	char d[PATH_MAX], b[PATH_MAX], rd[PATH_MAX];

	snprintf(d, sizeof(d), "%s", path);
	snprintf(b, sizeof(b), "%s", path);
	if (!realpath(dirname(d), rd))
		return false;
	return snprintf(out, outlen, "%s/%s", rd, basename(b)) < (int)outlen;
}

/* Is the stats file (stat `st` if `exists`) one of the job's files? */
static bool stats_is_target(struct thread_data *td, const char *path,
			    const struct stat *st, bool exists)
{
	char cs[PATH_MAX], cf[PATH_MAX];
	struct fio_file *f;
	struct stat fst;
	unsigned int i;
	bool have_cs = canon_name(path, cs, sizeof(cs));

	for_each_file(td, f, i) {
		if (!f->file_name)
			continue;
		if (exists && !stat(f->file_name, &fst) &&
		    fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
			return true;
		if (have_cs && canon_name(f->file_name, cf, sizeof(cf)) &&
		    !strcmp(cs, cf))
			return true;
	}
	return false;
}

/* The names a tswap_stats template expands to, for this job. */
static struct tswap_stats_names stats_names(struct thread_data *td)
{
	struct tswap_stats_names v = {
		.job_name = td->o.name,
		.job_number = (int)td->thread_number - 1,
		.clone_number = (int)td->subjob_number,
		.file_name = td->files_index && td->files && td->files[0] ?
			td->files[0]->file_name : NULL,
		.pid = (long)getpid(),
	};

	return v;
}

/*
 * numjobs > 1 with a path that is the same for every clone (no %n; %p
 * differs only between processes): each job renames its stats over the
 * same file and only the last one survives.  Said once, by the first job.
 */
static void warn_shared_stats(struct thread_data *td, const char *tmpl)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct tswap_stats_names v = stats_names(td);

	if (td->o.numjobs < 2 || td->subjob_number)
		return;
	v.job_number = 0;
	v.clone_number = 0;
	v.pid = 1;
	if (tswap_stats_expand_path(tmpl, &v, a, sizeof(a)))
		return;
	v.job_number = 1;
	v.clone_number = 1;
	v.pid = td->o.use_thread ? 1 : 2;
	if (tswap_stats_expand_path(tmpl, &v, b, sizeof(b)) || strcmp(a, b))
		return;
	log_err("tswap: %s: tswap_stats=%s: numjobs=%u jobs write this one file, the last to end wins; add %%n (job number) to the path\n",
		td->o.name, tmpl, td->o.numjobs);
}

/*
 * Every tswap_stats path that would fail at the end of the job fails here,
 * before any I/O, and nothing of the user's is ever replaced: the stats
 * are written to PATH.XXXXXX and renamed over PATH (stats.c), so PATH must
 * be new or a regular file (a symlink to one is followed, and stays), not
 * one of the job's own files, and PATH.XXXXXX must be creatable.
 */
int tswap_check_stats_path(struct thread_data *td, struct tswap_data *ld,
			   const char *tmpl)
{
	char dir[PATH_MAX], probe[PATH_MAX + 16], real[PATH_MAX];
	const char *parent;
	struct stat st, lst;
	struct tswap_stats_names v = stats_names(td);
	bool exists;
	int ret, fd, flags;

	ret = tswap_stats_expand_path(tmpl, &v, ld->stats_path,
				      sizeof(ld->stats_path));
	if (ret == -EINVAL)
		return tswap_fail(td, EINVAL,
				  "tswap_stats=%s: unknown %%-escape, or $filename of a job without a file name (use %%j job name, %%n job number, %%p pid, %%%% for %%; fio's $jobname, $jobnum; $filename)",
				  tmpl);
	if (ret)
		return tswap_fail(td, -ret, "tswap_stats=%.64s...: path too long (%zu bytes, at most %d)",
				  tmpl, strlen(tmpl), PATH_MAX - 1);
	warn_shared_stats(td, tmpl);
	exists = !lstat(ld->stats_path, &lst);
	st = lst;
	if (exists && S_ISLNK(lst.st_mode)) {
		if (stat(ld->stats_path, &st))
			return tswap_fail(td, errno,
					  "tswap_stats=%s: is a symbolic link to nothing (%s); name a regular file or a new path",
					  ld->stats_path, strerror(errno));
		if (S_ISREG(st.st_mode)) {
			/* Write the file it points to; the link stays. */
			if (!realpath(ld->stats_path, real))
				return tswap_fail(td, errno, "tswap_stats=%s: cannot resolve the symbolic link: %s",
						  ld->stats_path, strerror(errno));
			snprintf(ld->stats_path, sizeof(ld->stats_path), "%s", real);
		}
	}
	if (exists && S_ISDIR(st.st_mode))
		return tswap_fail(td, EISDIR, "tswap_stats=%s: is a directory; name a file in it",
				  ld->stats_path);
	if (exists && !S_ISREG(st.st_mode))
		return tswap_fail(td, EINVAL,
				  "tswap_stats=%s: is a %s; the stats are written to a new file renamed over the path, which would replace it: name a regular file or a new path",
				  ld->stats_path, file_type(st.st_mode));
	if (stats_is_target(td, ld->stats_path, &st, exists))
		return tswap_fail(td, EINVAL,
				  "tswap_stats=%s: is a target file of the job; name another file",
				  ld->stats_path);
	if (exists) {
		/* rename() cannot replace an immutable or append-only file. */
		fd = open(ld->stats_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0) {
			flags = 0;
			ret = ioctl(fd, FS_IOC_GETFLAGS, &flags);
			close(fd);
			if (!ret && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
				return tswap_fail(td, EPERM,
						  "tswap_stats=%s: the file is %s (chattr); it cannot be replaced",
						  ld->stats_path,
						  flags & FS_IMMUTABLE_FL ? "immutable" : "append-only");
		}
	}
	/* The exact temporary name stats.c will use, with its length. */
	snprintf(dir, sizeof(dir), "%s", ld->stats_path);
	parent = dirname(dir);
	if (snprintf(probe, sizeof(probe), "%s.XXXXXX", ld->stats_path) >= PATH_MAX)
		return tswap_fail(td, ENAMETOOLONG,
				  "tswap_stats=%s: cannot create a file in %s: %s (the stats are written to PATH.XXXXXX, then renamed)",
				  ld->stats_path, parent, strerror(ENAMETOOLONG));
	fd = mkstemp(probe);
	if (fd < 0)
		return tswap_fail(td, errno,
				  "tswap_stats=%s: cannot create a file in %s: %s (the stats are written to PATH.XXXXXX, then renamed)",
				  ld->stats_path, parent, strerror(errno));
	close(fd);
	if (unlink(probe))
		return tswap_fail(td, errno,
				  "tswap_stats=%s: cannot remove a file in %s (%s): %s",
				  ld->stats_path, parent, probe, strerror(errno));
	return 0;
}

void tswap_write_stats(struct thread_data *td, struct tswap_data *ld)
{
	struct tswap_options *o = td->eo;
	struct tswap_stats st;
	struct tswap_stats_meta m = {
		.tswap_version = TSWAP_VERSION,
		.fio_version = TSWAP_FIO_VERSION,
		.job_name = td->o.name,
		.job_number = (int)td->thread_number - 1,
		.pid = (long)getpid(),
		.backend = ld->be->name,
		.submit = tswap_submit_names[o->submit],
		.window = tswap_window_names[o->window],
		.block_size = o->block_size,
		.queue_depth = o->queue_depth,
		.threads = o->threads,
		.pin = tswap_pin_names[o->pin],
		.pinned = ld->pin_locked,
		.alloc = tswap_alloc_names[o->alloc],
		.bounce = o->bounce,
		.bounce_ops = ld->bounce.ops,
		.bounce_bytes = ld->bounce.bytes,
		.bounce_alloc_ns = ld->bounce.alloc_ns,
		.bounce_copy_ns = ld->bounce.copy_ns,
		.bounce_free_ns = ld->bounce.free_ns,
		.fill = tswap_fill_names[o->fill],
		.fill_ops = ld->fill.ops,
		.fill_ahead_ops = ld->fill.ahead_ops,
		.fill_bytes = ld->fill.bytes,
		.fill_ns = ld->fill.ns,
		.operations = ld->ops,
		.op_errors = ld->op_errors,
		.op_short = ld->op_short,
		.elapsed_s = ld->t_first_ns && ld->t_last_ns > ld->t_first_ns ?
			(double)(ld->t_last_ns - ld->t_first_ns) / 1e9 : 0,
	};
	int ret;

	if (tswap_stats_init(&st, o->queue_depth)) {
		log_err("tswap: %s: tswap_stats=%s: out of memory\n", td->o.name,
			ld->stats_path);
		return;
	}
	tswap_sched_stats(ld->sched, &st);
	ret = tswap_stats_write_json(ld->stats_path, &m, &st);
	if (ret) {
		log_err("tswap: %s: tswap_stats=%s: cannot write: %s\n", td->o.name,
			ld->stats_path, strerror(-ret));
		td_verror(td, -ret, "tswap_stats");
	}
	tswap_stats_free(&st);
}
