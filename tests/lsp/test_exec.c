/* core/lsp_exec.c's call text: the expression on the program's line that
 * entered a library function, for the live status line's chain
 * ("gmm.fit → sklearn.mixture._base.BaseMixture.fit → … → inner"). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/lsp_exec.h"

static void call(const char *line, const char *fn, const char *want)
{
    char buf[80];
    lsp_exec_call_text(line, strlen(line), fn, buf, sizeof buf);
    if (strcmp(buf, want)) fprintf(stderr, "%s / %s: got \"%s\"\n", line, fn, buf);
    CHECK_STR(buf, want);
}

int main(void)
{
    call("        gmm.fit(temp)", "BaseMixture.fit", "gmm.fit");
    call("model.fit (x)", "fit", "model.fit");
    call("y = self.enc.transform(x).fit(z)", "Pipe.fit", "fit"); /* after a call: its name */
    call("été = données.fit(x)  # 🎉", "BaseMixture.fit", "données.fit");
    call("refit(x); fit(y)", "fit", "fit");             /* not the end of "refit" */
    call("fitted = model.fit_transform(x)", "fit", ""); /* no call of fit */
    call("a @ b", "matmul", "");
    call("np.dot(a, b)", "numpy.core.multiarray.dot", "np.dot");
    call("gmm.fit(temp)", "", "");
    char small[4];
    lsp_exec_call_text("gmm.fit(x)", 10, "fit", small, sizeof small);
    CHECK_STR(small, "gmm"); /* cut to the buffer */
    /* only the bytes given: the rest of a longer buffer is not read */
    char line[] = "gmm.fit(x)";
    char out[16];
    lsp_exec_call_text(line, 6, "fit", out, sizeof out);
    CHECK_STR(out, "");
    return check_exit("exec");
}
