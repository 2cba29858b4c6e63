/* Unit tests for sampling/agent_paths.c, the include / exclude rule the
 * agent and attach share (docs/configuration.md). */
#include "agent_paths.h"
#include "check.h"

static void test_match(void)
{
    CHECK(agent_path_match("/p/app", "/p/app"));
    CHECK(agent_path_match("/p/app", "/p/app/x.py"));
    CHECK(agent_path_match("/p/app/", "/p/app/x.py"));
    CHECK(!agent_path_match("/p/app", "/p/apple.py"));
    CHECK(agent_path_match("*/site-packages/*", "/v/lib/site-packages/np/a.py"));
    CHECK(!agent_path_match("*/site-packages/*", "/v/lib/x.py"));
    CHECK(agent_path_match("/p/*.py", "/p/sub/x.py")); /* '*' crosses '/' */
}

static void test_profiled(void)
{
    const char *inc[] = {"/p"}, *exc[] = {"*/site-packages/*"};
    CHECK(agent_path_profiled(inc, 1, exc, 1, "/p/main.py"));
    CHECK(!agent_path_profiled(inc, 1, exc, 1, "/q/main.py"));
    CHECK(!agent_path_profiled(inc, 1, exc, 1, "/p/site-packages/m.py")); /* exclude wins */
    CHECK(agent_path_profiled(NULL, 0, exc, 1, "/q/main.py"));            /* no include: all */
    /* relative names only by a relative include pattern */
    CHECK(!agent_path_profiled(NULL, 0, exc, 1, "<string>"));
    CHECK(!agent_path_profiled(inc, 1, exc, 1, "<ipython-input-3-abc>"));
    const char *rel[] = {"/p", "<ipython-input-*"};
    CHECK(agent_path_profiled(rel, 2, exc, 1, "<ipython-input-3-abc>"));
    CHECK(!agent_path_profiled(rel, 2, exc, 1, "<string>"));
    /* a Jupyter cell's file: the user's code wherever the include points,
     * unless excluded */
    const char *cell = "/tmp/ipykernel_4242/2345678901.py";
    CHECK(agent_path_is_kernel_cell(cell));
    CHECK(agent_path_profiled(inc, 1, exc, 1, cell));
    const char *exc2[] = {"/tmp/*"};
    CHECK(!agent_path_profiled(inc, 1, exc2, 1, cell));
    CHECK(!agent_path_is_kernel_cell("/tmp/ipykernel_4242/lib.py"));
    CHECK(!agent_path_is_kernel_cell("/tmp/ipykernel_/123.py"));
    CHECK(!agent_path_is_kernel_cell("/tmp/ipykernel_42x/123.py"));
    CHECK(!agent_path_is_kernel_cell("/tmp/xipykernel_42/123.py"));
    CHECK(!agent_path_is_kernel_cell("/tmp/ipykernel_42/.py"));
    CHECK(!agent_path_is_kernel_cell("/123.py"));
    CHECK(!agent_path_is_kernel_cell("ipykernel_42/123.py"));
    CHECK(agent_path_is_kernel_cell("/ipykernel_42/123.py"));
    CHECK(!agent_path_profiled(inc, 1, exc, 1, "/tmp/ipykernel_4242/lib.py"));
}

int main(void)
{
    test_match();
    test_profiled();
    return check_exit("agent_paths");
}
