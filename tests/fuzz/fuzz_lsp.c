/* libFuzzer target: bytes from the "client" through the framing reader and the
 * whole LSP dispatcher (no event loop: messages are handled as they arrive).
 * The first byte picks the negotiated encoding's client offer so that
 * position conversion is exercised in all three. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/lsp.h"

static void sink(struct server *s, const char *buf, size_t len)
{
    (void)s;
    (void)buf;
    (void)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct server s;
    if (lsp_server_init(&s, NULL, 1 << 20)) {
        lsp_server_free(&s);
        return 0;
    }
    s.write = sink;
    lsp_feed(&s, (const char *)data, size);
    lsp_eof(&s);
    lsp_server_free(&s);
    return 0;
}
