/* attach/inject.c's gdb script, read back as gdb would run it: never gdb's
 * `call`; a breakpoint per stop and nothing done unless gdb stopped at one
 * of them; every hand-made call is followed, before any other command, by
 * all the saved registers put back; the code's words decode back to the
 * code, NUL included; code over the cap is refused. inject_find on this
 * process (not Python) says so. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "check.h"
#include "inject.h"

/* the line after the first one that starts with prefix at or after *pos */
static const char *line_after(const char *s, const char *prefix)
{
    const char *p = strstr(s, prefix);
    if (!p) return NULL;
    p = strchr(p, '\n');
    return p ? p + 1 : NULL;
}

int main(void)
{
    struct inject_target t;
    memset(&t, 0, sizeof t);
    t.pid = 1234;
    t.add_pending = 0x1000;
    t.run_string = 0x2000;
    t.mmap = 0x3000;
    t.stops[0] = 0x4000;
    t.stops[1] = 0x5000;
    t.nstops = 2;
    const char *code = "try:exec('print(1)')\nexcept BaseException:pass\n";
    char *buf = malloc(INJECT_SCRIPT_MAX);
    if (!CHECK(buf != NULL)) return 1;
    int n = inject_script(&t, code, buf, INJECT_SCRIPT_MAX);
    CHECK(n > 0 && (size_t)n == strlen(buf));

    CHECK(!strstr(buf, "\ncall ") && !strstr(buf, "print (") && !strstr(buf, "\"import"));
    CHECK(strstr(buf, "break *16384\n") && strstr(buf, "break *20480\n"));
    CHECK(strstr(buf, "handle SIGURG stop print nopass\n"));
    CHECK(strstr(buf, "if (long)$pc == 16384 || (long)$pc == 20480\n"));
    CHECK(strstr(buf, "else\nprintf \"HOTLINE nostop\\n\"\nend\ndetach\n"));

    /* each call: pc set, ..., continue, result kept, then the registers back */
    int calls = 0;
    for (const char *p = buf; (p = strstr(p, "continue\nset $h_ret = $rax\n")); p++) {
        const char *r = line_after(p, "set $h_at = (long)$pc\n");
        CHECK(r && !strncmp(r, "set $pc = $h_rip\nset $rsp = $h_rsp\nset $rax = $h_rax\n", 48));
        CHECK(strstr(r, "set $eflags = $h_eflags\n") != NULL);
        calls++;
    }
    CHECK(calls == 2);
    CHECK(strstr(buf, "set $pc = 12288\n") != NULL); /* mmap */
    CHECK(strstr(buf, "set $pc = 4096\n") != NULL);  /* Py_AddPendingCall */
    CHECK(strstr(buf, "set $rdi = 8192\nset $rsi = $h_buf\n") != NULL);
    /* the mmap call's registers are back before the first memory write */
    const char *w = strstr(buf, "set {long}($h_buf");
    const char *back = strstr(buf, "set $eflags = $h_eflags\n");
    CHECK(w && back && back < w);

    /* the words decode back to the code and its NUL */
    char got[256] = {0};
    size_t len = strlen(code), words = 0;
    for (const char *p = buf; (p = strstr(p, "set {long}($h_buf + ")); p++) {
        size_t off;
        long long v;
        if (!CHECK(sscanf(p, "set {long}($h_buf + %zu) = %lld", &off, &v) == 2)) break;
        if (!CHECK(off == words * 8 && off + 8 <= sizeof got)) break;
        memcpy(got + off, &v, 8);
        words++;
    }
    CHECK(words == (len + 1 + 7) / 8);
    CHECK(!memcmp(got, code, len + 1));

    char *big = malloc(INJECT_CODE_MAX + 2);
    if (!CHECK(big != NULL)) return 1;
    memset(big, 'x', INJECT_CODE_MAX + 1);
    big[INJECT_CODE_MAX + 1] = 0;
    CHECK(inject_script(&t, big, buf, INJECT_SCRIPT_MAX) == -E2BIG);
    CHECK(inject_script(&t, code, buf, 64) == -E2BIG); /* too small a buffer */
    free(big);
    free(buf);

    char why[512] = "";
    CHECK(inject_find(getpid(), &t, why, sizeof why) == ATTACH_ENOTPY);
    CHECK(strstr(why, "not a Python process") != NULL);
    CHECK(inject_find(0, &t, why, sizeof why) == -ESRCH);
    return check_exit("attach_inject");
}
