/* <root>/.hotline (hotdir.h). It holds what a cloned repository may also
 * carry, so it is untrusted input: it must be a real directory, never a
 * symlink. What we write there holds the program's argv and source: the
 * directory is 0700, and a .gitignore of `*` keeps it out of commits. */
#include "core/hotdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "core/facilities.h"

int lsp_hotline_dir(struct lsp_facilities *s, char *buf, size_t n)
{
    if (!s->root_path) return -ENOENT;
    if ((size_t)snprintf(buf, n, "%s/.hotline", s->root_path) >= n) return -ENAMETOOLONG;
    return 0;
}

int lsp_real_dir(const char *dir, struct stat *st)
{
    if (lstat(dir, st)) return -errno;
    if (S_ISLNK(st->st_mode)) return -ELOOP;
    return S_ISDIR(st->st_mode) ? 0 : -ENOTDIR;
}

int lsp_hotline_dir_make(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0700) && errno != EEXIST) return -errno;
    int rc = lsp_real_dir(dir, &st);
    if (rc) return rc;
    if (st.st_uid == geteuid() && (st.st_mode & 077) && chmod(dir, 0700)) return -errno;
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/.gitignore", dir) >= sizeof path)
        return -ENAMETOOLONG;
    /* only when missing: a .gitignore the user wrote stays theirs */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        static const char text[] = "# written by hotline: profiles hold argv and source\n*\n";
        ssize_t w = write(fd, text, sizeof text - 1);
        close(fd);
        if (w != (ssize_t)sizeof text - 1) return -EIO;
    }
    return 0;
}
