/* store/url.h — the table of URL schemes zc_store_open dispatches on (url.c),
 * and the open function of each backend. */
#ifndef ZC_STORE_URL_H
#define ZC_STORE_URL_H

#include "store/store.h"

/* The folder a URL names: url itself when it is a path (no "scheme://"), the
 * path of a file:// URL, else NULL (another store: memory://, s3://, ...). */
const char *store_local_path(const char *url);

/* The URL of the folder (or S3 prefix) holding url's root, into parent, and
 * the root's name in it, into name. Returns 1, or 0 when there is none: the
 * filesystem's root, an S3 bucket, memory://, http(s)://, a name that does not
 * fit, or a last part "." or "..". */
int store_parent_url(const char *url, char *parent, size_t psize, char *name, size_t nsize);

/* Each takes the URL's rest after "scheme://" (fs: a path) or the whole URL (http, s3). */
int store_http_open(const char *url, unsigned flags, store **out);
int store_s3_open(const char *url, unsigned flags, store **out);

#endif
