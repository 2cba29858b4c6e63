/* attach/marimo.c without a process: the ids marimo 0.25.2 gives a
 * notebook's cells (checked against CPython's random.Random(42)), the cells
 * found in a notebook's text (@app.cell with a signature over several
 * lines, hide_code, @app.function, @app.class_definition, the setup cell,
 * an unparsable cell taking an id), the temp file's lines mapped onto the
 * notebook's (a blank or comment line, or one past the cell, is no
 * mapping), and files that are not notebooks (a FIFO, /dev/zero). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "marimo.h"

static const char NB[] = "import marimo\n"                  /* 1 */
                         "\n"                               /* 2 */
                         "app = marimo.App()\n"             /* 3 */
                         "\n"                               /* 4 */
                         "with app.setup:\n"                /* 5 */
                         "    import math\n"                /* 6 */
                         "\n"                               /* 7 */
                         "\n"                               /* 8 */
                         "@app.cell\n"                      /* 9 */
                         "def _():\n"                       /* 10 */
                         "    import os\n"                  /* 11 */
                         "    return (os,)\n"               /* 12 */
                         "\n"                               /* 13 */
                         "\n"                               /* 14 */
                         "@app.cell(hide_code=True)\n"      /* 15 */
                         "def _(os):\n"                     /* 16 */
                         "    # caf\xc3\xa9 \xe2\x98\x95\n" /* 17 */
                         "\n"                               /* 18 */
                         "    x = 1\n"                      /* 19 */
                         "    while x < 3:\n"               /* 20 */
                         "        x += 1  # hot\n"          /* 21 */
                         "    x\n"                          /* 22 */
                         "    return\n"                     /* 23 */
                         "\n"                               /* 24 */
                         "\n"                               /* 25 */
                         "@app.function\n"                  /* 26 */
                         "def f(a):\n"                      /* 27 */
                         "    return a + 1\n"               /* 28 */
                         "\n"                               /* 29 */
                         "\n"                               /* 30 */
                         "app._unparsable_cell(\n"          /* 31 */
                         "    r\"\"\"x = (\"\"\",\n"        /* 32 */
                         ")\n"                              /* 33 */
                         "\n"                               /* 34 */
                         "\n"                               /* 35 */
                         "@app.cell\n"                      /* 36 */
                         "def _(\n"                         /* 37 */
                         "    os,\n"                        /* 38 */
                         "):\n"                             /* 39 */
                         "\n"                               /* 40 */
                         "    y = 2\n"                      /* 41 */
                         "    return\n"                     /* 42 */
                         "\n"                               /* 43 */
                         "\n"                               /* 44 */
                         "@app.class_definition\n"          /* 45 */
                         "class K:\n"                       /* 46 */
                         "    pass\n"                       /* 47 */
                         "\n"                               /* 48 */
                         "\n"                               /* 49 */
                         "if __name__ == \"__main__\":\n"   /* 50 */
                         "    app.run()\n";                 /* 51 */

int main(void)
{
    char ids[1000][8];
    marimo_ids(1000, ids);
    const char *want[] = {"Hbol", "MJUe", "vblA", "bkHC", "lEQa",
                          "PKri", "Xref", "SFPL", "BYtC", "RGSE"};
    for (int i = 0; i < 10; i++)
        CHECK_STR(ids[i], want[i]);
    CHECK_STR(ids[999], "gzgF"); /* Python: the 1000th of random.Random(42) */

    char id[64];
    CHECK(marimo_cell_id("/tmp/marimo_123/__marimo__cell_MJUe_.py", id, sizeof id));
    CHECK_STR(id, "MJUe");
    CHECK(marimo_cell_id("__marimo__cell_setup_.py", id, sizeof id));
    CHECK_STR(id, "setup");
    CHECK(!marimo_cell_id("/tmp/marimo_1/notebook.py", id, sizeof id));
    CHECK(!marimo_cell_id("/tmp/__marimo__cell_.py", id, sizeof id));

    struct marimo_nb nb;
    CHECK_EQ(marimo_nb_parse(&nb, NB, sizeof NB - 1), 0);
    /* setup, Hbol, MJUe, vblA (the function), bkHC (unparsable), lEQa, PKri */
    CHECK_EQ(nb.ncells, 7);
    CHECK_EQ(marimo_nb_line(&nb, "setup", 1), 6);
    CHECK_EQ(marimo_nb_line(&nb, "Hbol", 1), 11);
    CHECK_EQ(marimo_nb_line(&nb, "MJUe", 5), 21); /* the hot line */
    CHECK_EQ(marimo_nb_line(&nb, "MJUe", 3), 19);
    CHECK_EQ(marimo_nb_line(&nb, "MJUe", 1), 0);  /* a comment */
    CHECK_EQ(marimo_nb_line(&nb, "MJUe", 2), 0);  /* blank */
    CHECK_EQ(marimo_nb_line(&nb, "MJUe", 12), 0); /* past the cell */
    CHECK_EQ(marimo_nb_line(&nb, "vblA", 1), 27); /* def f: line 1 */
    CHECK_EQ(marimo_nb_line(&nb, "vblA", 2), 28);
    CHECK_EQ(marimo_nb_line(&nb, "bkHC", 1), 0); /* unparsable: no lines */
    CHECK_EQ(marimo_nb_line(&nb, "lEQa", 2), 41);
    CHECK_EQ(marimo_nb_line(&nb, "PKri", 1), 46);
    CHECK_EQ(marimo_nb_line(&nb, "Xref", 1), 0); /* no such cell */
    marimo_nb_free(&nb);

    CHECK_EQ(marimo_nb_parse(&nb, "print(1)\n", 9), -EINVAL);

    /* a notebook file; a FIFO and /dev/zero are not read */
    char dir[] = "/tmp/hotline-marimo-cells-XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/notebook.py", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fwrite(NB, 1, sizeof NB - 1, f) == sizeof NB - 1);
    if (f) fclose(f);
    CHECK_EQ(marimo_nb_load(&nb, path), 0);
    CHECK_STR(nb.path, path);
    CHECK_EQ(marimo_nb_line(&nb, "MJUe", 5), 21);
    marimo_nb_free(&nb);
    unlink(path);
    snprintf(path, sizeof path, "%s/fifo.py", dir);
    CHECK_EQ(mkfifo(path, 0600), 0);
    CHECK_EQ(marimo_nb_load(&nb, path), -EINVAL);
    unlink(path);
    CHECK(marimo_nb_load(&nb, "/dev/zero") < 0);
    rmdir(dir);
    return check_exit("attach_marimo_cells");
}
