/* curl_dl: libcurl through dlopen (see curl_dl.h). */
#include "llm/curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct curl_api api;
static const struct curl_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    const char *name = getenv("HOTLINE_LIBCURL");
    if (!name || !*name) name = CURL_DL_SONAME;
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(failure, sizeof failure,
                 "Optimize this needs libcurl (%s), which could not be loaded (%s): install it "
                 "(Debian/Ubuntu: apt-get install libcurl4; Fedora: dnf install libcurl)",
                 name, e ? e : "not found");
        return;
    }
    /* one row per function: its field and its exported name */
    static const struct {
        size_t off;
        const char *sym;
    } rows[] = {
#define ROW(f, s) {offsetof(struct curl_api, f), s}
        ROW(global_init, "curl_global_init"),
        ROW(global_cleanup, "curl_global_cleanup"),
        ROW(easy_init, "curl_easy_init"),
        ROW(easy_setopt, "curl_easy_setopt"),
        ROW(easy_getinfo, "curl_easy_getinfo"),
        ROW(easy_cleanup, "curl_easy_cleanup"),
        ROW(easy_strerror, "curl_easy_strerror"),
        ROW(multi_init, "curl_multi_init"),
        ROW(multi_setopt, "curl_multi_setopt"),
        ROW(multi_add_handle, "curl_multi_add_handle"),
        ROW(multi_remove_handle, "curl_multi_remove_handle"),
        ROW(multi_socket_action, "curl_multi_socket_action"),
        ROW(multi_assign, "curl_multi_assign"),
        ROW(multi_info_read, "curl_multi_info_read"),
        ROW(multi_cleanup, "curl_multi_cleanup"),
        ROW(slist_append, "curl_slist_append"),
        ROW(slist_free_all, "curl_slist_free_all"),
        ROW(url, "curl_url"),
        ROW(url_set, "curl_url_set"),
        ROW(url_get, "curl_url_get"),
        ROW(url_cleanup, "curl_url_cleanup"),
        ROW(free, "curl_free"),
#undef ROW
    };
    _Static_assert(sizeof rows / sizeof rows[0] * sizeof(void (*)(void)) == sizeof(struct curl_api),
                   "a curl_api field without its row");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        void *f = dlsym(h, rows[i].sym);
        if (!f) {
            snprintf(failure, sizeof failure,
                     "Optimize this needs libcurl 7.62 or newer; %s has no %s", name, rows[i].sym);
            dlclose(h);
            return;
        }
        memcpy((char *)&api + rows[i].off, &f, sizeof f); /* a data pointer to a function's */
    }
    loaded = &api; /* kept loaded for the process's life, as a linked library would be */
}

const struct curl_api *curl_dl(char *why, size_t n)
{
    pthread_once(&once, load);
    if (!loaded && why && n) snprintf(why, n, "%s", failure);
    return loaded;
}
