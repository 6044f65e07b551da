/* store/url.h — the table of URL schemes zc_store_open dispatches on (url.c),
 * and the open function of each backend. */
#ifndef ZC_STORE_URL_H
#define ZC_STORE_URL_H

#include "store/store.h"

/* The folder a URL names: url itself when it is a path (no "scheme://"), the
 * path of a file:// URL, else NULL (another store: memory://, s3://, ...). */
const char *store_local_path(const char *url);

/* Each takes the URL's rest after "scheme://" (fs: a path) or the whole URL (http, s3). */
int store_http_open(const char *url, unsigned flags, store **out);
int store_s3_open(const char *url, unsigned flags, store **out);

#endif
