/* file:// URIs <-> file system paths (RFC 3986 percent-encoding, as VS Code
 * and Neovim write them). */
#ifndef HOTLINE_URI_H
#define HOTLINE_URI_H

/* New string: the path of a file:// URI, percent-decoded; NULL if uri is not a
 * file URI or on ENOMEM. */
char *lsp_uri_to_path(const char *uri);
/* New string: the file:// URI of an absolute path; NULL on ENOMEM. */
char *lsp_path_to_uri(const char *path);

#endif
