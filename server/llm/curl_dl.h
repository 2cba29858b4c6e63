/* curl_dl: libcurl, loaded when "Optimize this" first needs it rather than
 * linked, so that the profiler itself (hotline run, view, attach, the
 * language server's hints) needs no network library on the user's machine
 * and a missing libcurl costs that one feature, with a sentence that says
 * so (issue 21: a wheel that runs where it was not built). curl's headers
 * are still needed to build (libcurl4-openssl-dev): its types, constants
 * and these functions' prototypes, which the table's types are taken from. */
#ifndef HOTLINE_LLM_CURL_DL_H
#define HOTLINE_LLM_CURL_DL_H

#include <curl/curl.h>
#include <stddef.h>

/* The library loaded: $HOTLINE_LIBCURL when set (tests name a missing
 * one), else this soname. */
#define CURL_DL_SONAME "libcurl.so.4"

struct curl_api {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_global_cleanup) *global_cleanup;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_multi_init) *multi_init;
    __typeof__(curl_multi_setopt) *multi_setopt;
    __typeof__(curl_multi_add_handle) *multi_add_handle;
    __typeof__(curl_multi_remove_handle) *multi_remove_handle;
    __typeof__(curl_multi_socket_action) *multi_socket_action;
    __typeof__(curl_multi_assign) *multi_assign;
    __typeof__(curl_multi_info_read) *multi_info_read;
    __typeof__(curl_multi_cleanup) *multi_cleanup;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
    __typeof__(curl_url) *url;
    __typeof__(curl_url_set) *url_set;
    __typeof__(curl_url_get) *url_get;
    __typeof__(curl_url_cleanup) *url_cleanup;
    __typeof__(curl_free) *free;
};

/* The table, loaded on the first call (thread-safe, once); NULL when the
 * library or one of its functions is missing, with the sentence for the
 * user in why (n > 0; the same sentence every time). */
const struct curl_api *curl_dl(char *why, size_t n);

#endif
