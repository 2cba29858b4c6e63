/* ipykernel's cell file names (server/text/cellname.c). Alone: the path
 * rule (which names are cell files, and the hash they carry). With
 * arguments, a helper of tests/lsp/test_cellname.py, which checks the hash
 * against ipykernel's own function:
 *   test_cellname --hash FILE...   prints the cell name hash of each file's bytes
 *   test_cellname --parse PATH...  prints the hash a path carries, or "none" */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/cellname.h"

static int hash_files(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp) {
            perror(argv[i]);
            return 2;
        }
        size_t cap = 1 << 16, n = 0, r;
        char *buf = malloc(cap);
        while (buf && (r = fread(buf + n, 1, cap - n, fp)) > 0) {
            n += r;
            if (n == cap) {
                char *b = realloc(buf, cap *= 2);
                if (!b) free(buf);
                buf = b;
            }
        }
        fclose(fp);
        if (!buf) return 2;
        printf("%u\n", (unsigned)cellname_ipykernel_hash(buf, n));
        free(buf);
    }
    return 0;
}

static int parse_paths(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        uint32_t h;
        if (cellname_ipykernel_parse(argv[i], &h))
            printf("none\n");
        else
            printf("%u\n", (unsigned)h);
    }
    return 0;
}

static void parse_rule(void)
{
    uint32_t h = 7;
    CHECK_EQ(cellname_ipykernel_parse("/tmp/ipykernel_123/4294967295.py", &h), 0);
    CHECK_EQ_U(h, 4294967295u);
    CHECK_EQ(cellname_ipykernel_parse("/tmp/x/ipykernel_1/0.py", &h), 0);
    CHECK_EQ_U(h, 0);
    CHECK_EQ(cellname_ipykernel_parse("ipykernel_1/5.py", NULL), 0); /* relative tempdir */
    const char *no[] = {
        "/tmp/ipykernel_123/4294967296.py", /* over 32 bits */
        "/tmp/ipykernel_123/012.py",        /* str() writes no leading zero */
        "/tmp/ipykernel_123/12.pyc",
        "/tmp/ipykernel_123/.py",
        "/tmp/ipykernel_123/1a.py",
        "/tmp/ipykernel_/12.py",
        "/tmp/ipykernel_12x/12.py",
        "/tmp/xipykernel_12/12.py",
        "/tmp/ipykernel_12/sub/12.py",
        "/12.py",
        "12.py",
        "<ipython-input-3-abc>",
        "/tmp/ipykernel_1/99999999999.py",
    };
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        check_report(cellname_ipykernel_parse(no[i], NULL) == -ENOENT, __FILE__, __LINE__,
                     "%s taken for a cell file", no[i]);
    CHECK_EQ(cellname_ipykernel_parse(NULL, NULL), -ENOENT);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--hash")) return hash_files(argc - 2, argv + 2);
    if (argc > 1 && !strcmp(argv[1], "--parse")) return parse_paths(argc - 2, argv + 2);
    parse_rule();
    return check_exit("cellname");
}
