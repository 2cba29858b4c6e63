/* pytext's reading of an answer and of the code around a region (issue 20,
 * item 6): the top-level definitions of a code block, the function around a
 * line by name (decorators, a nested def, async), and whether a loop
 * encloses a line inside its function. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/pytext.h"

static struct doc *open_doc(struct doc_store *s, const char *text)
{
    CHECK(doc_open(s, "file:///a.py", "python", 1, text, strlen(text)) == 0);
    return doc_find(s, "file:///a.py");
}

static void test_top_defs(void)
{
    char names[64];
    CHECK_EQ(pytext_top_defs("total += 1\n", names, sizeof names), 0);
    CHECK_STR(names, "");
    CHECK_EQ(pytext_top_defs("    def hot(n):\n        return 2 * n\n", names, sizeof names), 1);
    CHECK_STR(names, "hot ");
    /* nested defs and a def inside a string are not the top level */
    CHECK_EQ(pytext_top_defs("@cache\nasync def a(x):\n    def inner(): pass\n"
                             "s = '''\ndef fake(): pass\n'''\nclass K:\n    def m(self): pass\n",
                             names, sizeof names),
             2);
    CHECK_STR(names, "a K ");
    /* the cap cuts at a whole name */
    CHECK_EQ(pytext_top_defs("def abc(): pass\ndef defgh(): pass\n", names, 6), 1);
    CHECK_STR(names, "abc ");
}

static void test_enclosing_def(void)
{
    struct doc_store s;
    doc_store_init(&s);
    const char *text = "import x\n"                  /* 0 */
                       "\n"                          /* 1 */
                       "@deco\n"                     /* 2 */
                       "def hot(n):\n"               /* 3 */
                       "    total = 0\n"             /* 4 */
                       "    for i in range(n):\n"    /* 5 */
                       "        def inner(j):\n"     /* 6 */
                       "            return j\n"      /* 7 */
                       "        total += inner(i)\n" /* 8 */
                       "\n"                          /* 9 */
                       "    return total\n"          /* 10 */
                       "print(hot(3))\n";            /* 11 */
    struct doc *d = open_doc(&s, text);
    unsigned char *st = pytext_logical_starts(d->text, d->len, d->nlines, NULL);
    CHECK(st != NULL);
    uint32_t l0 = 0, l1 = 0;
    CHECK_EQ(pytext_enclosing_def(d, st, 8, "hot ", 0, &l0, &l1), 0);
    CHECK_EQ_U(l0, 3);
    CHECK_EQ_U(l1, 11);
    CHECK_EQ(pytext_enclosing_def(d, st, 8, "hot ", 1, &l0, &l1), 0);
    CHECK_EQ_U(l0, 2); /* from its decorator */
    CHECK_EQ(pytext_enclosing_def(d, st, 7, "inner hot ", 0, &l0, &l1), 0);
    CHECK_EQ_U(l0, 6); /* the innermost of the names */
    CHECK_EQ_U(l1, 8);
    CHECK_EQ(pytext_enclosing_def(d, st, 3, "hot ", 0, &l0, &l1), 0); /* the def line itself */
    CHECK_EQ_U(l0, 3);
    CHECK_EQ(pytext_enclosing_def(d, st, 8, "other ", 0, &l0, &l1), -ENOENT);
    CHECK_EQ(pytext_enclosing_def(d, st, 11, "hot ", 0, &l0, &l1), -ENOENT);
    /* loops: inside the for (not the for line itself); inner's body is in a function */
    CHECK_EQ(pytext_in_loop(d, st, 8), 1);
    CHECK_EQ(pytext_in_loop(d, st, 5), 0);
    CHECK_EQ(pytext_in_loop(d, st, 7), 0);
    CHECK_EQ(pytext_in_loop(d, st, 4), 0);
    free(st);
    doc_store_free(&s);
}

int main(void)
{
    test_top_defs();
    test_enclosing_def();
    return check_exit("pytext");
}
