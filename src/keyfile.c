/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * keyfile.c - key files: the one strict parser of the format (shared by
 * csrf_ctx_load_key_file in keyring.c) and the operator's calls that
 * create, rotate, retire and list keys. A key file is text, one key a
 * line, "key ID CREATED HEX64 [sign]", '#' comments. Every write goes to
 * a temporary file in the same directory, is fsynced, renamed (or, for a
 * new file, linked so that an existing file is never replaced) over the
 * target, and the directory is fsynced, so a reader sees the old file or
 * the new one, never half of one. A new file is mode 0600; a rewrite
 * gives the new file the old one's owner, group, access ACL and
 * read/write bits less the world's, so the readers an operator chose keep
 * the file, or is refused when the caller cannot keep them. Neither
 * keeps an ACL the new file inherits from the directory's default ACL:
 * a write never gives the file readers it did not have. A rewrite
 * through a symlink replaces the file the link resolves to, in that
 * file's directory; the link stays.
 *
 * The path is resolved once: the file's directory is opened (each
 * component without following a link) and every later step (lock, read,
 * temporary file, the check that the name still holds the file read,
 * rename, sync) goes through that descriptor, so a user who owns a
 * directory of the path cannot swap it for a symlink midway. Calls that
 * rewrite a file hold an flock on the lock file .csrf-key.lock in its
 * directory (mode 0600; waiting at most csrfi_keyfile_lock_wait_ms for
 * it; the file is removed when the rewrite is done, and temporary
 * files a killed rewrite left are removed by the next), so two
 * operators rotating at once both get their key. A
 * rewrite refuses a file with a second hard link, and, as root, a file
 * whose directory someone other than root and the file's owner can
 * write; as root, new refuses such a directory too. Comments of a file
 * are not kept across a rewrite.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define KF_FIELDS_MAX 5

/* An all-zero key is a placeholder or a buffer never filled: anyone can
 * guess it. */
int csrfi_key_is_zero(const uint8_t key[CSRF_KEY_LEN])
{
	static const uint8_t zero[CSRF_KEY_LEN];
	return csrfi_ct_eq(key, zero, CSRF_KEY_LEN);
}

/* ---- the parser ---- */

typedef struct {
	csrfi_keyfile_data *d;
	size_t lineno;
	size_t sign_line; /* line of the key flagged sign; 0 none yet */
	char line[CSRF_KEYFILE_LINE_MAX];
	size_t line_len;
	size_t total; /* bytes fed so far */
	char *err;
	size_t err_cap;
} kf_parser;

static csrf_reason kf_fail(kf_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static csrf_reason kf_fail(kf_parser *p, const char *fmt, ...)
{
	if (p->err && p->err_cap) {
		/* lineno 0: an error of the whole file, not of a line */
		int off = p->lineno ? snprintf(p->err, p->err_cap, "line %zu: ", p->lineno) : 0;
		if (off >= 0 && (size_t)off < p->err_cap) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(p->err + off, p->err_cap - (size_t)off, fmt, ap);
			va_end(ap);
		}
	}
	return CSRF_ERR_CONFIG;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int field_is(const char *s, size_t n, const char *lit)
{
	csrf_slice f = {s, n};
	return csrfi_slice_eq(f, lit);
}

/* One line without its newline. */
static csrf_reason kf_line(kf_parser *p, const char *s, size_t n)
{
	const char *f[KF_FIELDS_MAX];
	size_t fl[KF_FIELDS_MAX];
	size_t nf = 0;
	size_t i = 0;
	uint64_t id, created;
	csrfi_keyfile_data *d = p->d;

	if (n > 0 && s[n - 1] == '\r')
		n--;
	for (size_t j = 0; j < n; j++) {
		if (s[j] == '#') {
			n = j;
			break;
		}
	}
	for (size_t j = 0; j < n; j++) {
		unsigned char c = (unsigned char)s[j];
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return kf_fail(p, "control or non-ASCII byte");
	}

	while (i < n) {
		while (i < n && is_blank(s[i]))
			i++;
		if (i == n)
			break;
		if (nf == KF_FIELDS_MAX)
			return kf_fail(p, "too many fields (expected \"key ID CREATED HEX64 [sign]\")");
		f[nf] = s + i;
		while (i < n && !is_blank(s[i]))
			i++;
		fl[nf] = (size_t)(s + i - f[nf]);
		nf++;
	}
	if (nf == 0)
		return CSRF_OK;

	if (!field_is(f[0], fl[0], "key"))
		return kf_fail(p, "expected \"key ID CREATED HEX64 [sign]\"");
	if (nf < 4)
		return kf_fail(p, "missing fields (expected \"key ID CREATED HEX64 [sign]\")");
	if (!(csrfx_parse_u64(f[1], fl[1], UINT32_MAX, &id) == CSRF_OK) || id == 0)
		return kf_fail(p, "key id must be a decimal number from 1 to 4294967295");
	if (!(csrfx_parse_u64(f[2], fl[2], INT64_MAX, &created) == CSRF_OK))
		return kf_fail(p, "creation time must be decimal unix seconds");
	if (fl[3] != 2 * CSRF_KEY_LEN)
		return kf_fail(p, "key must be exactly %d hex digits", 2 * CSRF_KEY_LEN);
	if (nf == 5 && !field_is(f[4], fl[4], "sign"))
		return kf_fail(p, "unknown flag (only \"sign\" may follow the key)");
	for (size_t k = 0; k < d->n; k++)
		if (d->keys[k].id == id)
			return kf_fail(p, "duplicate key id %u", (unsigned)id);
	if (d->n == CSRF_KEYS_MAX)
		return kf_fail(p, "more than %d keys", CSRF_KEYS_MAX);
	if (nf == 5 && p->sign_line)
		return kf_fail(p, "a second key flagged sign (line %zu has the first)", p->sign_line);

	csrfi_keyfile_entry *e = &d->keys[d->n];
	if (csrfx_hex_decode(f[3], CSRF_KEY_LEN, e->key) != CSRF_OK)
		return kf_fail(p, "key must be exactly %d hex digits", 2 * CSRF_KEY_LEN);
	if (csrfi_key_is_zero(e->key)) {
		csrfi_wipe(e->key, sizeof e->key);
		return kf_fail(p, "the key is all zero (a placeholder, not a secret): make keys with csrf-key");
	}
	e->id = (uint32_t)id;
	e->created = (int64_t)created;
	e->signing = nf == 5;
	if (e->signing) {
		d->signing = d->n;
		p->sign_line = p->lineno;
	}
	d->n++;
	return CSRF_OK;
}

static void kf_begin(kf_parser *p, csrfi_keyfile_data *d, char *err, size_t err_cap)
{
	memset(p, 0, sizeof *p);
	memset(d, 0, sizeof *d);
	p->d = d;
	p->lineno = 1;
	p->err = err;
	p->err_cap = err_cap;
	if (err && err_cap)
		err[0] = '\0';
}

/* Splits bytes into lines; a line is parsed when its newline arrives. */
static csrf_reason kf_feed(kf_parser *p, const char *buf, size_t len)
{
	if (len > CSRF_KEYFILE_MAX - p->total) {
		p->lineno = 0;
		return kf_fail(p, "larger than %d bytes", CSRF_KEYFILE_MAX);
	}
	p->total += len;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			csrf_reason r = kf_line(p, p->line, p->line_len);
			if (r != CSRF_OK)
				return r;
			p->line_len = 0;
			p->lineno++;
		} else if (p->line_len == CSRF_KEYFILE_LINE_MAX) {
			return kf_fail(p, "longer than %d bytes", CSRF_KEYFILE_LINE_MAX);
		} else {
			p->line[p->line_len++] = buf[i];
		}
	}
	return CSRF_OK;
}

static csrf_reason kf_end(kf_parser *p)
{
	csrf_reason r = CSRF_OK;

	if (p->line_len > 0)
		r = kf_line(p, p->line, p->line_len);
	p->lineno = 0;
	if (r == CSRF_OK && p->d->n == 0)
		r = kf_fail(p, "no keys in the file");
	if (r == CSRF_OK && !p->sign_line)
		r = kf_fail(p, "no key is flagged sign (exactly one must be)");
	return r;
}

void csrfi_keyfile_data_wipe(csrfi_keyfile_data *d)
{
	if (d)
		csrfi_wipe(d, sizeof *d);
}

static csrf_reason kf_done(kf_parser *p, csrf_reason r)
{
	if (r != CSRF_OK)
		csrfi_keyfile_data_wipe(p->d);
	csrfi_wipe(p->line, sizeof p->line);
	return r;
}

csrf_reason csrfi_keyfile_parse(const char *buf, size_t len, csrfi_keyfile_data *out, char *err, size_t err_cap)
{
	kf_parser p;
	csrf_reason r;

	if (!out || (!buf && len))
		return CSRF_ERR_ARG;
	kf_begin(&p, out, err, err_cap);
	r = kf_feed(&p, buf, len);
	if (r == CSRF_OK)
		r = kf_end(&p);
	return kf_done(&p, r);
}

static csrf_reason io_fail(char *err, size_t err_cap, const char *what, int e)
{
	if (err && err_cap)
		snprintf(err, err_cap, "%s: %s", what, strerror(e));
	return CSRF_ERR_IO;
}

/* Reads and parses the open file fd (a regular file: the caller
 * checked). */
static csrf_reason kf_read_fd(int fd, csrfi_keyfile_data *out, char *err, size_t err_cap)
{
	kf_parser p;
	char chunk[4096];
	csrf_reason r = CSRF_OK;

	kf_begin(&p, out, err, err_cap);
	for (;;) {
		ssize_t got = read(fd, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = io_fail(err, err_cap, "cannot read", errno);
			break;
		}
		if (got == 0) {
			r = kf_end(&p);
			break;
		}
		r = kf_feed(&p, chunk, (size_t)got);
		if (r != CSRF_OK)
			break;
	}
	csrfi_wipe(chunk, sizeof chunk);
	return kf_done(&p, r);
}

/* The mode bits a key file that servers load must not have: any of the
 * world's, and the group's write (as sshd with private keys). The
 * operator's calls (list, and a rewrite, which leaves the world's bits
 * out) still read such a file. */
#define KF_LOOSE_MODE 0027

/* Reads path's file; strict (servers loading keys) refuses a file with
 * KF_LOOSE_MODE bits. */
static csrf_reason kf_read_path(const char *path, int strict, csrfi_keyfile_data *out, char *err, size_t err_cap)
{
	struct stat st;
	csrf_reason r;
	int fd;

	if (!path || !out)
		return CSRF_ERR_ARG;
	memset(out, 0, sizeof *out);
	if (err && err_cap)
		err[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return io_fail(err, err_cap, "cannot open", errno);
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return io_fail(err, err_cap, "cannot stat", e);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return io_fail(err, err_cap, "cannot read", S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
	}
	if (strict && (st.st_mode & KF_LOOSE_MODE)) {
		close(fd);
		if (err && err_cap)
			snprintf(err, err_cap,
			         "%s is mode %04o: a key file must not be readable or writable by others, nor writable "
			         "by its group (whoever reads a key can forge tokens); run chmod 0640 (readers in its "
			         "group) or chmod 0600 on it",
			         path, (unsigned)(st.st_mode & 07777));
		return CSRF_ERR_CONFIG;
	}
	r = kf_read_fd(fd, out, err, err_cap);
	close(fd);
	return r;
}

csrf_reason csrfi_keyfile_read(const char *path, csrfi_keyfile_data *out, char *err, size_t err_cap)
{
	return kf_read_path(path, 1, out, err, err_cap);
}

/* ---- writing ---- */

/* How long a rewrite waits for the directory lock another process holds
 * (milliseconds), and the call that syncs the directory after the
 * rename. Variables so that the unit tests can shorten the wait and make
 * the sync fail. */
unsigned csrfi_keyfile_lock_wait_ms = 10000;
int (*csrfi_keyfile_sync_dir)(int fd) = fsync;

/* The file a call works on: its directory, opened once and locked, and
 * its name there. Every later step is relative to dir, so renaming or
 * swapping a directory of the path for a symlink midway changes nothing.
 * A rewrite also holds the file it read (rfd) and what fstat said of it. */
typedef struct {
	int dir;
	char base[NAME_MAX + 1];
	int rfd;
	struct stat st;
} kf_target;

/* Sets err's message (printf-style) and returns code. */
static csrf_reason op_fail(csrf_error *err, csrf_reason code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static csrf_reason op_fail(csrf_error *err, csrf_reason code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Opens the directory dir (an absolute path without symlinks, as
 * realpath gives) one component at a time, each with O_NOFOLLOW: a
 * component that became a symlink since realpath fails (ELOOP). The
 * directories on the way are opened O_PATH (search permission is all a
 * caller may have there), the last one for reading (flock, fsync). */
static int open_dir_nofollow(const char *dir)
{
	char comp[NAME_MAX + 2];
	const char *p = dir;
	int fd = AT_FDCWD;

	while (*p == '/')
		p++;
	if (*p == '\0')
		return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n > NAME_MAX) {
			if (fd != AT_FDCWD)
				close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		/* the first component by its absolute name ("/" itself is
		 * root's; qemu-user's -L also maps "/" to its sysroot) */
		size_t o = fd == AT_FDCWD;
		comp[0] = '/';
		memcpy(comp + o, p, n);
		comp[o + n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		int next = openat(fd, comp, (*p ? O_PATH : O_RDONLY) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (fd != AT_FDCWD)
			close(fd);
		errno = e;
		if (next < 0)
			return -1;
		fd = next;
	}
	return fd;
}

/* Splits full (absolute, from realpath) into its directory and the last
 * component. */
static int split_path(const char *full, char *dir, size_t dir_cap, char *base)
{
	const char *slash = strrchr(full, '/');
	size_t n;

	if (!slash || strlen(slash + 1) > NAME_MAX || dir_cap < 2)
		return 0;
	memcpy(base, slash + 1, strlen(slash + 1) + 1);
	n = slash == full ? 1 : (size_t)(slash - full);
	if (n + 1 > dir_cap)
		return 0;
	memcpy(dir, full, n);
	dir[n] = '\0';
	return 1;
}

/* Where path's file lives, symlinks resolved once, here: follow (a
 * rewrite) resolves the whole path, so a link stands for the file it
 * names; else (new) only the directory part, and the last component is
 * created as it is. */
static csrf_reason kf_resolve(const char *path, int follow, char *dir, size_t dir_cap, char *base, csrf_error *err)
{
	char full[PATH_MAX], parent[PATH_MAX];
	const char *name = strrchr(path, '/');

	if (follow) {
		if (!realpath(path, full))
			return op_fail(err, CSRF_ERR_IO, "cannot open: %s", strerror(errno));
	} else {
		size_t n = name ? (size_t)(name - path) : 0;
		name = name ? name + 1 : path;
		if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
			return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(EISDIR));
		if (n + 1 > sizeof parent)
			return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(ENAMETOOLONG));
		if (path[0] == '/' && n == 0)
			n = 1;
		memcpy(parent, n ? path : ".", n ? n : 1);
		parent[n ? n : 1] = '\0';
		if (!realpath(parent, full))
			return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(errno));
		size_t fl = strlen(full);
		if (fl + 1 + strlen(name) + 1 > sizeof full)
			return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(ENAMETOOLONG));
		if (fl > 1)
			full[fl++] = '/';
		memcpy(full + fl, name, strlen(name) + 1);
	}
	if (!split_path(full, dir, dir_cap, base))
		return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(ENAMETOOLONG));
	return CSRF_OK;
}

/* The lock file of a directory's key files, beside them. */
#define KF_LOCK_NAME ".csrf-key.lock"

/* Read-modify-write calls on key files of one directory take turns: an
 * exclusive flock on a lock file of their own in the directory (the key
 * file itself is replaced by each rename, so it cannot carry the lock;
 * the directory cannot either: anyone who can open it could hold that
 * lock and stop every rotation). The lock file is mode 0600 and never
 * followed through a link; as root, only a regular file of root's or of
 * the directory's owner is used (another user's could be held by that
 * user), and it is given to the directory's owner. The holder removes
 * the lock file before it lets go (unlock_dir), so a rewrite leaves
 * nothing behind in the directory (a package's purge finds it as it was);
 * a waiter that gets the lock of a file no longer named so starts again
 * on the new one. The wait for it is bounded all the same. *lock
 * receives the descriptor. */
static csrf_reason lock_dir(int dir, int *lock, csrf_error *err)
{
	unsigned waited = 0;
	int created;
	struct stat ls, ds, now;

again:
	/* created here, or another's (then never given away below) */
	created = 1;
	*lock = openat(dir, KF_LOCK_NAME, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
	               0600);
	if (*lock < 0 && errno == EEXIST) {
		created = 0;
		*lock = openat(dir, KF_LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (*lock < 0 && errno == ENOENT && waited++ < csrfi_keyfile_lock_wait_ms)
			goto again; /* its holder removed it between the two opens */
	}
	if (*lock < 0)
		return op_fail(err, CSRF_ERR_IO, "cannot open the lock file %s in the key file's directory: %s",
		               KF_LOCK_NAME, strerror(errno));
	if (fstat(*lock, &ls) != 0 || fstat(dir, &ds) != 0)
		return op_fail(err, CSRF_ERR_IO, "cannot stat the lock file %s: %s", KF_LOCK_NAME, strerror(errno));
	if (!S_ISREG(ls.st_mode))
		return op_fail(err, CSRF_ERR_IO, "the lock file %s is not a regular file: remove it", KF_LOCK_NAME);
	/* a hard link names another file too (one of root's, where a user
	 * may link it): never given away below, whatever it is (0 links: its
	 * holder removed it just now, the check after the flock retries) */
	if (ls.st_nlink > 1)
		return op_fail(err, CSRF_ERR_IO, "the lock file %s has %lu hard links: remove it", KF_LOCK_NAME,
		               (unsigned long)ls.st_nlink);
	if (geteuid() == 0 && ls.st_uid != 0 && ls.st_uid != ds.st_uid)
		return op_fail(err, CSRF_ERR_IO,
		               "the lock file %s belongs to uid %u, neither root nor the directory's owner; as "
		               "root, csrf-key does not use it: remove it",
		               KF_LOCK_NAME, (unsigned)ls.st_uid);
	/* root's lock file in another user's directory goes to that user,
	 * who may rewrite the key files there too (and could replace the
	 * lock file anyway), should root's rewrite die before removing it;
	 * only a file this call created: whatever else is there is not
	 * root's to give */
	if (created && geteuid() == 0 && ls.st_uid != ds.st_uid && fchown(*lock, ds.st_uid, (gid_t)-1) != 0)
		return op_fail(err, CSRF_ERR_IO, "cannot give the lock file %s to the directory's owner: %s",
		               KF_LOCK_NAME, strerror(errno));
	for (;;) {
		if (flock(*lock, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return op_fail(err, CSRF_ERR_IO, "cannot lock %s: %s", KF_LOCK_NAME, strerror(errno));
		if (waited >= csrfi_keyfile_lock_wait_ms)
			return op_fail(err, CSRF_ERR_IO,
			               "the key file's directory is locked by another process (it holds %s; waited %u "
			               "ms); nothing was changed",
			               KF_LOCK_NAME, waited);
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
		waited += 20;
	}
	/* The holder before removed the name while this call waited: the
	 * lock of an unnamed file excludes no one. */
	if (fstatat(dir, KF_LOCK_NAME, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != ls.st_dev ||
	    now.st_ino != ls.st_ino) {
		close(*lock);
		*lock = -1;
		if (waited >= csrfi_keyfile_lock_wait_ms)
			return op_fail(err, CSRF_ERR_IO,
			               "the key file's directory is locked by another process (it holds %s; waited %u "
			               "ms); nothing was changed",
			               KF_LOCK_NAME, waited);
		waited++;
		goto again;
	}
	return CSRF_OK;
}

/* Removes the lock file while still holding it, then lets go. */
static void unlock_dir(int dir, int lock)
{
	unlinkat(dir, KF_LOCK_NAME, 0);
	close(lock);
}

/* A temporary file of kf_write's: ".csrf-key-" 16 hex digits ".tmp". */
static int is_tmp_name(const char *n)
{
	static const char pre[] = ".csrf-key-", suf[] = ".tmp";
	size_t lp = sizeof pre - 1, ls = sizeof suf - 1;

	if (strlen(n) != lp + 16 + ls || memcmp(n, pre, lp) != 0 || memcmp(n + lp + 16, suf, ls) != 0)
		return 0;
	for (size_t i = lp; i < lp + 16; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return 0;
	return 1;
}

/* Temporary files are written only under the lock: one found while
 * holding it was left by a rewrite that died before its rename (a crash,
 * a kill -9, a power cut). Such a file holds keys; it goes. */
static void remove_leftovers(int dir)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	struct stat st;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (is_tmp_name(e->d_name) && fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			unlinkat(dir, e->d_name, 0);
	closedir(d);
}

/* As root, a rewrite (or a new file) happens only in a directory that
 * no one but root and the file's owner can change (as sshd's StrictModes): whoever else
 * can write there could plant the file, or swap it midway, and have root
 * write where, and for whom, they chose. */
static csrf_reason check_dir(const kf_target *t, csrf_error *err)
{
	struct stat ds;

	if (geteuid() != 0)
		return CSRF_OK;
	if (fstat(t->dir, &ds) != 0)
		return op_fail(err, CSRF_ERR_IO, "cannot stat the file's directory: %s", strerror(errno));
	if (ds.st_mode & 022)
		return op_fail(err, CSRF_ERR_IO,
		               "the file's directory is writable by its group or others (mode %04o); as root, "
		               "csrf-key rewrites a key file only in a directory that only root or the file's "
		               "owner can write",
		               (unsigned)(ds.st_mode & 07777));
	if (ds.st_uid != 0 && ds.st_uid != t->st.st_uid)
		return op_fail(err, CSRF_ERR_IO,
		               "the file's directory belongs to uid %u, neither root nor the file's owner (uid "
		               "%u); as root, csrf-key does not rewrite a key file there",
		               (unsigned)ds.st_uid, (unsigned)t->st.st_uid);
	return CSRF_OK;
}

/* Opens the file to rewrite, without following a link (the path was
 * resolved already: a link there now was put there since), and checks
 * it is one that may be rewritten. */
static csrf_reason open_target(kf_target *t, csrf_error *err)
{
	t->rfd = openat(t->dir, t->base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (t->rfd < 0)
		return op_fail(err, CSRF_ERR_IO, "cannot open: %s", strerror(errno));
	if (fstat(t->rfd, &t->st) != 0)
		return op_fail(err, CSRF_ERR_IO, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(t->st.st_mode))
		return op_fail(err, CSRF_ERR_IO, "cannot read: %s", strerror(S_ISDIR(t->st.st_mode) ? EISDIR : EINVAL));
	if (t->st.st_nlink > 1)
		return op_fail(err, CSRF_ERR_IO,
		               "the file has %lu hard links; a rewrite replaces one name and servers reading "
		               "another would keep the old keys: remove the other links (use a symlink)",
		               (unsigned long)t->st.st_nlink);
	return check_dir(t, err);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		p += w;
		n -= (size_t)w;
	}
	return 1;
}

/* The text of a key file; *len its length. 0 when cap is too small. */
static int kf_format(const csrfi_keyfile_data *d, char *buf, size_t cap, size_t *len)
{
	static const char head[] = "# libcsrf key file: key ID CREATED HEX64 [sign]. Secret: keep it mode 0600.\n";
	size_t o = sizeof head - 1;

	if (cap < o)
		return 0;
	memcpy(buf, head, o);
	for (size_t i = 0; i < d->n; i++) {
		const csrfi_keyfile_entry *e = &d->keys[i];
		int w = snprintf(buf + o, cap - o, "key %u %lld ", (unsigned)e->id, (long long)e->created);
		if (w < 0 || (size_t)w >= cap - o)
			return 0;
		o += (size_t)w;
		if (cap - o < 2 * CSRF_KEY_LEN + sizeof " sign\n")
			return 0;
		csrfx_hex_encode(e->key, CSRF_KEY_LEN, buf + o);
		o += 2 * CSRF_KEY_LEN;
		if (e->signing) {
			memcpy(buf + o, " sign", 5);
			o += 5;
		}
		buf[o++] = '\n';
	}
	*len = o;
	return 1;
}

/* The mode of a rewritten file: the old file's read and write bits for
 * owner and group. Never the world's (a key file is a secret), never
 * execute, setuid, setgid or sticky. */
#define KF_KEEP_MODE 0660

/* The name of a POSIX access ACL, as an extended attribute. */
#define KF_ACL_XATTR "system.posix_acl_access"

/* Gives fd (the new file, still empty) the access old had: its owner
 * (root only can give a file away), its group (root, or a member of the
 * group), its access ACL when it has one (copied as it is: with an ACL
 * the group bits of the mode are its mask), its mode masked by
 * KF_KEEP_MODE. When the owner, a group that could read the old file or
 * the ACL cannot be kept, the rewrite is refused: replacing the file
 * would take it away from its readers (or give it to readers the ACL
 * kept out), and every server reading it as that user or group would
 * fail. */
static csrf_reason keep_access(int fd, const kf_target *t, csrf_error *err)
{
	const struct stat *old = &t->st;
	mode_t mode = old->st_mode & KF_KEEP_MODE;
	uid_t uid = geteuid() == 0 ? old->st_uid : (uid_t)-1;
	int chown_errno = 0;
	char acl[4096];
	struct stat now;

	if (fchown(fd, uid, old->st_gid) != 0)
		chown_errno = errno;
	if (fstat(fd, &now) != 0)
		return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(errno));
	if (now.st_uid != old->st_uid && (mode & 0600))
		return op_fail(err, CSRF_ERR_IO,
		               "the file belongs to uid %u and a new file cannot be given to it (%s); run "
		               "csrf-key as that user or as root, so that the file keeps its owner",
		               (unsigned)old->st_uid, strerror(chown_errno ? chown_errno : EPERM));
	if (now.st_gid != old->st_gid && (mode & 0060))
		return op_fail(err, CSRF_ERR_IO,
		               "group %u may read the file and a new file cannot be given to that group (%s); its "
		               "readers would lose it: run csrf-key as root or as a member of the group",
		               (unsigned)old->st_gid, strerror(chown_errno ? chown_errno : EPERM));
	ssize_t acl_len = fgetxattr(t->rfd, KF_ACL_XATTR, acl, sizeof acl);
	if (acl_len < 0 && errno != ENODATA && errno != ENOTSUP)
		return op_fail(err, CSRF_ERR_IO, "cannot read the file's access ACL: %s", strerror(errno));
	if (acl_len > 0 && fsetxattr(fd, KF_ACL_XATTR, acl, (size_t)acl_len, 0) != 0)
		return op_fail(err, CSRF_ERR_IO,
		               "the file has an access ACL that cannot be copied to the new file (%s); nothing "
		               "was changed",
		               strerror(errno));
	/* After the ACL: chmod sets its mask (the old one: the old group
	 * bits) and its other entry (none). */
	if (fchmod(fd, mode) != 0)
		return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(errno));
	return CSRF_OK;
}

/* A file created in a directory with a default ACL gets that ACL as its
 * access ACL: users it names could read a new key file, or a rewritten
 * one the old file kept them out of. The new file starts without one;
 * keep_access copies the old file's own ACL, if it has one. */
static csrf_reason drop_inherited_acl(int fd, csrf_error *err)
{
	if (fremovexattr(fd, KF_ACL_XATTR) == 0 || errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP)
		return CSRF_OK;
	return op_fail(err, CSRF_ERR_IO, "cannot remove the ACL the new file inherited from its directory: %s",
	               strerror(errno));
}

/* A fresh name for the temporary file in the target's directory. */
static csrf_reason tmp_name(char *name, size_t cap)
{
	uint8_t rnd[8];
	char hex[2 * sizeof rnd + 1];

	if (csrf_random(rnd, sizeof rnd) != CSRF_OK)
		return CSRF_ERR_RANDOM;
	csrfx_hex_encode(rnd, sizeof rnd, hex);
	hex[2 * sizeof rnd] = '\0';
	snprintf(name, cap, ".csrf-key-%s.tmp", hex);
	return CSRF_OK;
}

/* Writes d to t's file atomically, the reason in err on failure.
 * exclusive: create the file, mode 0600, failing when it exists; else
 * replace the file t->rfd was read from, keeping its owner, group, ACL
 * and mode (keep_access), and only if the name still holds that file. */
static csrf_reason kf_write(const kf_target *t, const csrfi_keyfile_data *d, int exclusive, csrf_error *err)
{
	char tmp[64];
	char text[4096];
	size_t len = 0;
	csrf_reason r;
	struct stat now;
	int fd, e, linked = 0;

	if (!kf_format(d, text, sizeof text, &len)) {
		csrfi_wipe(text, sizeof text);
		return op_fail(err, CSRF_ERR_INTERNAL, "%s", csrf_reason_str(CSRF_ERR_INTERNAL));
	}
	if (tmp_name(tmp, sizeof tmp) != CSRF_OK) {
		csrfi_wipe(text, sizeof text);
		return op_fail(err, CSRF_ERR_RANDOM, "the random generator failed");
	}
	fd = openat(t->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		csrfi_wipe(text, sizeof text);
		return op_fail(err, CSRF_ERR_IO, "cannot write the file: %s", strerror(errno));
	}
	r = drop_inherited_acl(fd, err);
	if (r == CSRF_OK && !exclusive)
		r = keep_access(fd, t, err);
	if (r == CSRF_OK) {
		r = CSRF_ERR_IO;
		if (!write_all(fd, text, len) || fsync(fd) != 0)
			op_fail(err, r, "cannot write the file: %s", strerror(errno));
		else if (e = close(fd), fd = -1, e != 0)
			op_fail(err, r, "cannot write the file: %s", strerror(errno));
		else if (exclusive) {
			/* Never replace an existing file: renameat2 with
			 * RENAME_NOREPLACE, or linkat where the file system
			 * lacks it; both refuse an existing target. */
			if (renameat2(t->dir, tmp, t->dir, t->base, RENAME_NOREPLACE) == 0)
				r = CSRF_OK;
			else if ((errno == EINVAL || errno == ENOSYS) && linkat(t->dir, tmp, t->dir, t->base, 0) == 0)
				r = CSRF_OK, linked = 1;
			else if (errno == EEXIST)
				op_fail(err, r, "the file already exists (use rotate)");
			else
				op_fail(err, r, "cannot write the file: %s", strerror(errno));
		} else if (fstatat(t->dir, t->base, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != t->st.st_dev ||
		           now.st_ino != t->st.st_ino) {
			op_fail(err, r,
			        "the file was replaced or removed by another process during the rewrite; nothing "
			        "was changed: run the command again");
		} else if (renameat(t->dir, tmp, t->dir, t->base) == 0) {
			r = CSRF_OK;
		} else {
			op_fail(err, r, "cannot write the file: %s", strerror(errno));
		}
	}
	csrfi_wipe(text, sizeof text);
	if (fd >= 0)
		close(fd);
	if (r != CSRF_OK) {
		unlinkat(t->dir, tmp, 0);
		return r;
	}
	if (linked)
		unlinkat(t->dir, tmp, 0);
	/* Some file systems cannot sync a directory; the rename stands. */
	if (csrfi_keyfile_sync_dir(t->dir) != 0 && errno != EINVAL && errno != EROFS)
		return op_fail(err, CSRF_ERR_IO,
		               "the file was replaced, but syncing its directory failed (%s): a crash before the "
		               "system writes it back may bring the old file back",
		               strerror(errno));
	return CSRF_OK;
}

/* ---- the operator's calls ---- */

static csrf_reason new_key(csrfi_keyfile_entry *e, uint32_t id)
{
	csrf_reason r = csrf_random(e->key, sizeof e->key);
	if (r != CSRF_OK)
		return r;
	e->id = id;
	e->created = csrfi_now(0);
	e->signing = 1;
	return CSRF_OK;
}

/* Reads the file for a read-modify-write, the reason in err. */
static csrf_reason read_for(const kf_target *t, csrfi_keyfile_data *d, csrf_error *err)
{
	char msg[CSRF_ERROR_MAX];
	csrf_reason r = kf_read_fd(t->rfd, d, msg, sizeof msg);
	if (r != CSRF_OK)
		return op_fail(err, r, "%s", msg);
	return CSRF_OK;
}

typedef struct {
	int signing; /* add: the new (or staged) key signs */
	uint32_t id; /* retire: the key; add: the id that signs or was staged */
} op_args;

typedef csrf_reason (*locked_op)(const kf_target *t, op_args *a, csrf_error *err);

/* Runs op on path's file with its directory open and its lock file locked: calls that
 * rewrite a file take turns. follow (a rewrite): a path that is a
 * symlink stands for the file it resolves to, whose directory is locked
 * and receives the new file (the link itself is left as it is); the file
 * is opened for op, which reads it from t->rfd. The path is resolved
 * once, here; every later step goes through the directory's descriptor. */
static csrf_reason with_lock(const char *path, int follow, locked_op op, op_args *a, csrf_error *err)
{
	char dir[PATH_MAX];
	kf_target t;
	csrf_reason r;
	int lock = -1;

	if (err)
		err->msg[0] = '\0';
	if (!path || !*path)
		return op_fail(err, CSRF_ERR_ARG, "no file name");
	memset(&t, 0, sizeof t);
	t.rfd = -1;
	r = kf_resolve(path, follow, dir, sizeof dir, t.base, err);
	if (r != CSRF_OK)
		return r;
	t.dir = open_dir_nofollow(dir);
	if (t.dir < 0)
		return op_fail(err, CSRF_ERR_IO, "cannot open the file's directory: %s", strerror(errno));
	r = lock_dir(t.dir, &lock, err);
	if (r != CSRF_OK && lock >= 0) {
		close(lock); /* not held: the name is left to its holder */
		lock = -1;
	}
	if (r == CSRF_OK && follow) {
		r = open_target(&t, err);
	} else if (r == CSRF_OK) {
		/* new: the file will be the caller's; as root, the same
		 * directory check as a rewrite's */
		t.st.st_uid = geteuid();
		r = check_dir(&t, err);
	}
	if (r == CSRF_OK) {
		remove_leftovers(t.dir); /* in a directory the checks above accepted */
		r = op(&t, a, err);
	}
	if (t.rfd >= 0)
		close(t.rfd);
	if (lock >= 0)
		unlock_dir(t.dir, lock);
	close(t.dir);
	return r;
}

static csrf_reason new_locked(const kf_target *t, op_args *a, csrf_error *err)
{
	csrfi_keyfile_data d;
	(void)a;
	memset(&d, 0, sizeof d);
	csrf_reason r = new_key(&d.keys[0], 1);
	if (r != CSRF_OK)
		return op_fail(err, r, "the random generator failed");
	d.n = 1;
	d.signing = 0;
	r = kf_write(t, &d, 1, err);
	csrfi_keyfile_data_wipe(&d);
	return r;
}

CSRF_API csrf_reason csrf_keyfile_new(const char *path, csrf_error *err)
{
	return with_lock(path, 0, new_locked, &(op_args){0}, err);
}

/* A staged key: one that does not sign yet but is newer than the signing
 * key (csrf_keyfile_stage adds them; rotate promotes the oldest). The
 * index of the oldest, or d->n when there is none. */
static size_t oldest_staged(const csrfi_keyfile_data *d)
{
	size_t best = d->n;
	uint32_t sign_id = d->keys[d->signing].id;
	for (size_t i = 0; i < d->n; i++)
		if (d->keys[i].id > sign_id && (best == d->n || d->keys[i].id < d->keys[best].id))
			best = i;
	return best;
}

/* Adds a key with the next id; it signs when a->signing is set. */
static csrf_reason add_locked(const kf_target *t, op_args *a, csrf_error *err)
{
	csrfi_keyfile_data d;
	uint32_t max = 0;
	csrf_reason r = read_for(t, &d, err);
	if (r != CSRF_OK)
		return r;
	if (a->signing) {
		/* A staged key has reached every server that reloaded since
		 * it was staged: it signs, and nothing new is added. */
		size_t st = oldest_staged(&d);
		if (st < d.n) {
			for (size_t i = 0; i < d.n; i++)
				d.keys[i].signing = 0;
			d.keys[st].signing = 1;
			d.signing = st;
			a->id = d.keys[st].id;
			r = kf_write(t, &d, 0, err);
			csrfi_keyfile_data_wipe(&d);
			return r;
		}
	}
	for (size_t i = 0; i < d.n; i++)
		if (d.keys[i].id > max)
			max = d.keys[i].id;
	if (max == UINT32_MAX) {
		csrfi_keyfile_data_wipe(&d);
		return op_fail(err, CSRF_ERR_CONFIG,
		               "key id 4294967295, the last one, is in use: no id is left for a new key; start a "
		               "new file with csrf-key new (its key has id 1) and give it to the servers");
	}
	if (d.n == CSRF_KEYS_MAX) {
		csrfi_keyfile_data_wipe(&d);
		return op_fail(err, CSRF_ERR_CONFIG, "the file holds %d keys already; retire an old one first",
		               CSRF_KEYS_MAX);
	}
	r = new_key(&d.keys[d.n], max + 1);
	if (r != CSRF_OK) {
		csrfi_keyfile_data_wipe(&d);
		return op_fail(err, r, "the random generator failed");
	}
	if (a->signing) {
		for (size_t i = 0; i < d.n; i++)
			d.keys[i].signing = 0;
		d.signing = d.n;
	} else {
		d.keys[d.n].signing = 0;
	}
	d.n++;
	a->id = max + 1;
	r = kf_write(t, &d, 0, err);
	csrfi_keyfile_data_wipe(&d);
	return r;
}

static csrf_reason retire_locked(const kf_target *t, op_args *a, csrf_error *err)
{
	csrfi_keyfile_data d;
	size_t i;
	csrf_reason r = read_for(t, &d, err);
	if (r != CSRF_OK)
		return r;
	for (i = 0; i < d.n; i++)
		if (d.keys[i].id == a->id)
			break;
	if (i == d.n || d.keys[i].signing) {
		int unknown = i == d.n;
		csrfi_keyfile_data_wipe(&d);
		if (unknown)
			return op_fail(err, CSRF_ERR_CONFIG, "no key with id %u", (unsigned)a->id);
		return op_fail(err, CSRF_ERR_CONFIG, "key %u is the signing key; rotate first", (unsigned)a->id);
	}
	memmove(&d.keys[i], &d.keys[i + 1], (d.n - i - 1) * sizeof d.keys[0]);
	d.n--;
	csrfi_wipe(&d.keys[d.n], sizeof d.keys[0]);
	if (d.signing > i)
		d.signing--;
	r = kf_write(t, &d, 0, err);
	csrfi_keyfile_data_wipe(&d);
	return r;
}

static csrf_reason add_key(const char *path, int signing, uint32_t *new_id, csrf_error *err)
{
	op_args a = {signing, 0};
	csrf_reason r = with_lock(path, 1, add_locked, &a, err);
	if (r == CSRF_OK && new_id)
		*new_id = a.id;
	return r;
}

CSRF_API csrf_reason csrf_keyfile_rotate(const char *path, uint32_t *new_id, csrf_error *err)
{
	return add_key(path, 1, new_id, err);
}

CSRF_API csrf_reason csrf_keyfile_stage(const char *path, uint32_t *new_id, csrf_error *err)
{
	return add_key(path, 0, new_id, err);
}

CSRF_API csrf_reason csrf_keyfile_retire(const char *path, uint32_t id, csrf_error *err)
{
	return with_lock(path, 1, retire_locked, &(op_args){0, id}, err);
}

CSRF_API csrf_reason csrf_keyfile_list(const char *path, csrf_key_info *out, size_t cap, size_t *n, csrf_error *err)
{
	csrfi_keyfile_data d;
	csrf_reason r;

	if (err)
		err->msg[0] = '\0';
	if (n)
		*n = 0;
	if (!path || !n || (!out && cap))
		return op_fail(err, CSRF_ERR_ARG, "invalid argument");
	char msg[CSRF_ERROR_MAX];
	r = kf_read_path(path, 0, &d, msg, sizeof msg);
	if (r != CSRF_OK)
		return op_fail(err, r, "%s", msg);
	*n = d.n;
	for (size_t i = 0; i < d.n && i < cap; i++) {
		out[i].id = d.keys[i].id;
		out[i].created = d.keys[i].created;
		out[i].signing = d.keys[i].signing;
	}
	csrfi_keyfile_data_wipe(&d);
	if (*n > cap)
		return op_fail(err, CSRF_ERR_BUFFER, "the file holds %zu keys, more than %zu", *n, cap);
	return CSRF_OK;
}
