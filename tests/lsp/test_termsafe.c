/* text/termsafe.c: what a terminal would take for a command is escaped,
 * the rest (printable UTF-8) passes unchanged, and a cut never splits a
 * character. */
#include <string.h>

#include "check.h"
#include "text/termsafe.h"

static void same(const char *in, const char *want)
{
    char buf[256];
    CHECK_STR(termsafe_str(buf, sizeof buf, in), want);
}

int main(void)
{
    same("plain text, ünïcödé, 日本, emoji \xf0\x9f\x94\xa5",
         "plain text, ünïcödé, 日本, emoji \xf0\x9f\x94\xa5");
    same("\x1b]0;title\x07", "\\x1b]0;title\\x07");
    same("a\x1b[2Jb", "a\\x1b[2Jb");
    same("tab\there\nnl\rcr\x7f", "tab\\x09here\\x0anl\\x0dcr\\x7f");
    same("c1 \xc2\x9b"
         "31m \xc2\x85",
         "c1 \\u009b31m \\u0085"); /* U+009B CSI, U+0085 NEL */
    same("raw \x9b"
         "31m",
         "raw \\x9b31m"); /* a lone C1 byte */
    same("\xc0\x9b overlong", "\\xc0\\x9b overlong");
    same("\xed\xa0\x80 surrogate", "\\xed\\xa0\\x80 surrogate");
    same("cut \xe6\x97", "cut \\xe6\\x97");
    same("bidi \xe2\x80\xae gnp.exe", "bidi \\u202e gnp.exe");
    same("\xc2\xa0nbsp stays", "\xc2\xa0nbsp stays");
    same(NULL, "");
    /* a cut: "..." and never half a character */
    char small[8];
    CHECK_STR(termsafe_str(small, sizeof small, "abcdefghij"), "abcd...");
    CHECK_STR(termsafe_str(small, sizeof small, "ab日本語"), "ab...");
    CHECK_STR(termsafe_str(small, sizeof small, "\x1b\x1b"), "\\x1b...");
    char tiny[2];
    CHECK_STR(termsafe_str(tiny, sizeof tiny, "\x1b"), "");
    /* the size bound holds for the worst case of every kind */
    const char *worst[] = {"\x1b\x1b\x1b\x1b", "\xc2\x9b\xc2\x9b", "\xe2\x80\xae\xe2\x80\xae",
                           "\xff\xfe"};
    for (size_t i = 0; i < sizeof worst / sizeof *worst; i++) {
        char buf[TERMSAFE_SIZE(8)];
        termsafe_str(buf, TERMSAFE_SIZE(strlen(worst[i])), worst[i]);
        CHECK(strstr(buf, "...") == NULL);
    }
    /* termsafe_char fills exactly TERMSAFE_CHAR_MAX bytes at most, no NUL
     * (the report's buffers are that size: ASan caught a NUL written past) */
    const char *one[] = {"\xc2\x9b", "\x1b", "\xe2\x80\xae", "a"};
    const size_t want[] = {6, 4, 6, 1};
    for (size_t i = 0; i < 4; i++) {
        char out[TERMSAFE_CHAR_MAX];
        size_t ol = 0;
        CHECK(termsafe_char(one[i], strlen(one[i]), out, &ol) == strlen(one[i]) || i == 1);
        CHECK(ol == want[i]);
    }
    return check_exit("termsafe");
}
