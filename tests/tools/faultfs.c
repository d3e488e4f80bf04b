// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultfs.c - a test tool: a one-file FUSE filesystem that fails chosen
 * byte ranges for real, so that tswap's error paths run through the kernel
 * (io_submit / io_uring -> VFS -> FUSE -> completion with -errno), not a
 * mock.  Used by tests/faults-device.bats where the kernel has no
 * device-mapper `error` target; never installed.
 *
 *   faultfs [--eio=[r|w|rw]:START:LEN]... [--short=START:LEN]...
 *           [--delay-ms=N] BACKING MOUNTPOINT
 *
 * MOUNTPOINT/disk is a file of BACKING's size whose data lives in BACKING
 * (so a verified write can be read back).  Every open is direct I/O
 * (FOPEN_DIRECT_IO): each read or write request of the kernel reaches this
 * program, at most 128 KiB (the kernel's default max_pages) at a time.
 *
 *   --eio=OP:START:LEN   a request of kind OP (r, w or rw) that touches
 *                        [START, START+LEN) fails with EIO;
 *   --short=START:LEN    a read that touches [START, START+LEN) returns
 *                        only the bytes before START (0 if it starts
 *                        inside): a short read in the middle of the file;
 *   --delay-ms=N         every read and write sleeps N ms first (slow
 *                        device, for the kill tests).
 *
 * Runs in the foreground until unmounted (umount MOUNTPOINT) or killed;
 * SIGKILL makes the kernel abort the connection, and every request then
 * fails with ENOTCONN: the target vanishing under the job.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANGES 16
#define FILE_NAME "disk"

struct range {
	uint64_t start, len;
	bool r, w;
};

static struct range eio[MAX_RANGES], shrt[MAX_RANGES];
static unsigned int neio, nshort;
static unsigned int delay_ms;
static int backing_fd = -1;

static bool overlaps(const struct range *rg, uint64_t off, uint64_t len)
{
	return off < rg->start + rg->len && rg->start < off + len;
}

static void delay(void)
{
	struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L };

	if (delay_ms)
		nanosleep(&ts, NULL);
}

static int ffs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct stat b;

	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/" FILE_NAME))
		return -ENOENT;
	if (fstat(backing_fd, &b))
		return -errno;
	st->st_mode = S_IFREG | 0644;
	st->st_nlink = 1;
	st->st_size = b.st_size;
	st->st_blocks = b.st_blocks;
	st->st_blksize = 4096;
	st->st_mtim = b.st_mtim;
	st->st_ctim = b.st_ctim;
	return 0;
}

static int ffs_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		       off_t off, struct fuse_file_info *fi,
		       enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, FILE_NAME, NULL, 0, 0);
	return 0;
}

static int ffs_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/" FILE_NAME))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int ffs_read(const char *path, char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	unsigned int i;
	ssize_t n;

	(void)path;
	(void)fi;
	delay();
	for (i = 0; i < neio; i++)
		if (eio[i].r && overlaps(&eio[i], (uint64_t)off, len))
			return -EIO;
	for (i = 0; i < nshort; i++)
		if (overlaps(&shrt[i], (uint64_t)off, len)) {
			if ((uint64_t)off >= shrt[i].start)
				return 0;
			len = shrt[i].start - (uint64_t)off;
		}
	n = pread(backing_fd, buf, len, off);
	return n < 0 ? -errno : (int)n;
}

static int ffs_write(const char *path, const char *buf, size_t len, off_t off,
		     struct fuse_file_info *fi)
{
	unsigned int i;
	ssize_t n;

	(void)path;
	(void)fi;
	delay();
	for (i = 0; i < neio; i++)
		if (eio[i].w && overlaps(&eio[i], (uint64_t)off, len))
			return -EIO;
	n = pwrite(backing_fd, buf, len, off);
	return n < 0 ? -errno : (int)n;
}

static int ffs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/" FILE_NAME))
		return -ENOENT;
	return ftruncate(backing_fd, size) ? -errno : 0;
}

static int ffs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return 0;
}

static void *ffs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->direct_io = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = ffs_init,
	.getattr = ffs_getattr,
	.readdir = ffs_readdir,
	.open = ffs_open,
	.read = ffs_read,
	.write = ffs_write,
	.truncate = ffs_truncate,
	.fsync = ffs_fsync,
};

static void usage(void)
{
	fprintf(stderr, "usage: faultfs [--eio=r|w|rw:START:LEN]... [--short=START:LEN]... [--delay-ms=N] BACKING MOUNTPOINT\n");
	exit(2);
}

static void parse_range(const char *s, struct range *rg, bool with_op)
{
	char op[4] = "rw";
	const char *p = s;
	int n = 0;

	if (with_op) {
		if (sscanf(s, "%3[rw]:%n", op, &n) != 1 || !n)
			usage();
		p = s + n;
	}
	if (sscanf(p, "%" SCNu64 ":%" SCNu64, &rg->start, &rg->len) != 2 || !rg->len)
		usage();
	rg->r = strchr(op, 'r') != NULL;
	rg->w = strchr(op, 'w') != NULL;
}

int main(int argc, char **argv)
{
	char *fargv[8];
	int i, fargc = 0;

	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strncmp(argv[i], "--eio=", 6) && neio < MAX_RANGES)
			parse_range(argv[i] + 6, &eio[neio++], true);
		else if (!strncmp(argv[i], "--short=", 8) && nshort < MAX_RANGES)
			parse_range(argv[i] + 8, &shrt[nshort++], false);
		else if (!strncmp(argv[i], "--delay-ms=", 11))
			delay_ms = (unsigned int)strtoul(argv[i] + 11, NULL, 10);
		else
			usage();
	}
	if (argc - i != 2)
		usage();
	backing_fd = open(argv[i], O_RDWR | O_CLOEXEC);
	if (backing_fd < 0) {
		perror(argv[i]);
		return 1;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=tswap-faultfs";
	fargv[fargc++] = argv[i + 1];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
