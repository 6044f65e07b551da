/* store/url.h — the table of URL schemes zc_store_open dispatches on (url.c),
 * and the open function of each backend. */
#ifndef ZC_STORE_URL_H
#define ZC_STORE_URL_H

#include "store/store.h"

/* Each takes the URL's rest after "scheme://" (fs: a path) or the whole URL (http, s3). */
int store_http_open(const char *url, unsigned flags, store **out);
int store_s3_open(const char *url, unsigned flags, store **out);

#endif
