/* store/s3.c — S3 stores: "s3://bucket/prefix", read and write.
 *
 * Settings come from the environment as AWS tools take them:
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or
 * AWS_DEFAULT_REGION (default us-east-1), AWS_ENDPOINT_URL (an S3-compatible
 * server: path-style addressing, else virtual-hosted;
 * ZCUBE_S3_ADDRESSING=path|virtual overrides), ZCUBE_S3_ANONYMOUS=1 (public
 * buckets: requests unsigned); what they leave unset, from the profile of the
 * AWS shared files (s3_profile.c). Requests are signed with libcurl's own SigV4
 * (CURLOPT_AWS_SIGV4); it needs x-amz-content-sha256 added (we send
 * UNSIGNED-PAYLOAD) and query strings sorted and percent-encoded by us. The
 * secret lives only in the transfer pool's userpwd (wiped at close): it is
 * never part of a URL, a message or the store's url. */
#include "store/s3.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/url.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int s3_erase(store *s, const char *key)
{
    remote *r = (remote *)s;
    net_xfer x = {.method = "DELETE", .hdrs = r->hdrs, .want_len = NET_ALL};
    if (!(x.url = remote_url(r, key, NULL))) return ZC_ENOMEM;
    int rc = net_run(&r->net, &x, 1);
    if (rc == 0 && x.status < 0) rc = zc__err(x.status, "%s", x.errmsg);
    else if (rc == 0 && (x.code < 200 || x.code >= 300) && x.code != 404) rc = remote_answer_error(&x);
    net_xfer_release(&x);
    zc__free((char *)x.url);
    return rc;
}

static void s3_close(store *s)
{
    s3_store *t = (s3_store *)s;
    remote_fini(&t->r);
    zc__free(t->bucket_url);
    zc__free(t->prefix);
    zc__free(t);
}

static const store_vtable s3_vt = {
    .version = 1,
    .scheme = "s3",
    .get_many = remote_get_many,
    .get_many_each = remote_get_many_each,
    .put = s3_put,
    .erase = s3_erase,
    .size = remote_size,
    .list_dir = s3_list_dir,
    .close = s3_close,
    .list_prefix = s3_list_prefix,
};

static int env_bytes(const char *name, uint64_t lo, uint64_t *v)
{
    const char *e = env(name);
    if (!e) return 0;
    char *end;
    unsigned long long x = strtoull(e, &end, 10);
    if (*end || x < lo) return zc__err(ZC_EINVAL, "%s=\"%s\": expected a number of bytes >= %llu", name, e,
                                       (unsigned long long)lo);
    *v = x;
    return 0;
}

/* Bucket URL, listings are asked of: "<endpoint>/<bucket>" (path-style: no
 * trailing '/', which s3rver signs differently) or "<scheme>://<bucket>.<host>/". */
static int bucket_url(const char *bucket, const char *region, const char *endpoint, char **out)
{
    const char *ep = endpoint, *mode = env("ZCUBE_S3_ADDRESSING");
    char aws[256];
    if (!ep) {
        snprintf(aws, sizeof aws, "https://s3.%s.amazonaws.com", region);
        ep = aws;
    }
    bool path = endpoint != NULL;
    if (mode && !strcmp(mode, "path")) path = true;
    else if (mode && !strcmp(mode, "virtual")) path = false;
    else if (mode) return zc__err(ZC_EINVAL, "ZCUBE_S3_ADDRESSING=\"%s\": expected path or virtual", mode);
    const char *hs = strstr(ep, "://");
    if (!hs) return zc__err(ZC_EINVAL, "AWS_ENDPOINT_URL=\"%s\" is not a URL (http://host:port)", ep);
    size_t n = strlen(ep);
    while (n && ep[n - 1] == '/') n--;
    size_t cap = n + strlen(bucket) + 8;
    char *u = zc__malloc(cap);
    if (!u) return ZC_ENOMEM;
    if (path) snprintf(u, cap, "%.*s/%s", (int)n, ep, bucket);
    else snprintf(u, cap, "%.*s%s.%.*s/", (int)(hs + 3 - ep), ep, bucket, (int)(n - (size_t)(hs + 3 - ep)), hs + 3);
    *out = u;
    return 0;
}

/* Settings from the environment, else from the profile; *token: the session
 * token that goes with the keys used (NULL: none). */
static int configure(s3_store *t, const char *bucket, const s3_profile *prof, net_conf *conf, const char **token)
{
    const char *region = env("AWS_REGION");
    if (!region) region = env("AWS_DEFAULT_REGION");
    if (!region) region = prof->region[0] ? prof->region : "us-east-1";
    const char *endpoint = env("AWS_ENDPOINT_URL");
    if (!endpoint && prof->endpoint[0]) endpoint = prof->endpoint;
    ZC_TRY(net_conf_from_env(conf));
    ZC_TRY(net_conf_ca(conf, "AWS_CA_BUNDLE"));
    t->multipart_min = 64ull << 20;
    t->part_size = 16ull << 20;
    ZC_TRY(env_bytes("ZCUBE_S3_MULTIPART_THRESHOLD", 1, &t->multipart_min));
    ZC_TRY(env_bytes("ZCUBE_S3_PART_SIZE", 1, &t->part_size));
    ZC_TRY(bucket_url(bucket, region, endpoint, &t->bucket_url));
    *token = NULL;
    const char *anon = env("ZCUBE_S3_ANONYMOUS");
    if (anon && strcmp(anon, "0")) return 0;
    const char *id = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    if (id && secret) {
        *token = env("AWS_SESSION_TOKEN");
    } else if (prof->key_id[0]) {
        id = prof->key_id;
        secret = prof->secret;
        *token = prof->token[0] ? prof->token : NULL;
    } else {
        return zc__err(ZC_EINVAL, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put "
                                  "them in the AWS credentials file (profile '%s'), or set ZCUBE_S3_ANONYMOUS=1 "
                                  "for a public bucket", prof->name);
    }
    snprintf(conf->sigv4, sizeof conf->sigv4, "aws:amz:%s:s3", region);
    size_t n = strlen(id) + strlen(secret) + 2;
    if (!(conf->userpwd = zc__malloc(n))) return ZC_ENOMEM;
    snprintf(conf->userpwd, n, "%s:%s", id, secret);
    return 0;
}

/* Headers every request carries: the payload hash SigV4 needs (libcurl does
 * not add it) and the session token; PUTs also say what they send (else
 * libcurl sends a form's Content-Type). */
static struct curl_slist *header_list(const char *token, bool put)
{
    struct curl_slist *h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD"), *h2 = h;
    if (h && token) {
        size_t n = strlen(token) + 32;
        char *line = zc__malloc(n);
        h2 = NULL;
        if (line) {
            snprintf(line, n, "x-amz-security-token: %s", token);
            h2 = curl_slist_append(h, line);
            memset(line, 0, n);
            zc__free(line);
        }
    }
    if (h2 && put) h2 = curl_slist_append(h, "Content-Type: application/octet-stream");
    if (!h2) curl_slist_free_all(h);
    return h2 ? h : NULL;
}

static int headers(remote *r, const char *token)
{
    r->hdrs = header_list(token, false);
    r->put_hdrs = header_list(token, true);
    return r->hdrs && r->put_hdrs ? 0 : ZC_ENOMEM;
}

int store_s3_open(const char *url, unsigned flags, store **out)
{
    const char *b = url + 5; /* after "s3://" */
    size_t blen = strcspn(b, "/");
    if (!blen) return zc__err(ZC_EINVAL, "store url \"%s\" names no bucket (s3://BUCKET/PREFIX)", url);
    const char *p = b + blen;
    while (*p == '/') p++;
    size_t plen = strlen(p);
    while (plen && p[plen - 1] == '/') plen--;
    if (plen) {
        char tmp[STORE_KEY_MAX + 1];
        if (plen > STORE_KEY_MAX) return zc__err(ZC_EINVAL, "store url \"%s\": prefix too long", url);
        memcpy(tmp, p, plen);
        tmp[plen] = 0;
        int rc = store_key_check(tmp);
        if (rc < 0) return zc__err_wrap(rc, "store url \"%s\"", url);
    }
    s3_store *t = zc__calloc(1, sizeof *t);
    char *bucket = zc__malloc(blen + 1);
    if (!t || !bucket || !(t->prefix = zc__malloc(plen + 2))) {
        zc__free(t ? t->prefix : NULL);
        zc__free(t);
        zc__free(bucket);
        return ZC_ENOMEM;
    }
    memcpy(bucket, b, blen);
    bucket[blen] = 0;
    memcpy(t->prefix, p, plen);
    memcpy(t->prefix + plen, "/", 2);
    if (!plen) t->prefix[0] = 0; /* the bucket's root: "" */
    net_conf conf = {0};
    s3_profile *prof = zc__calloc(1, sizeof *prof); /* ~6 KiB: not on a thread's stack */
    const char *token = NULL;
    int rc = prof ? s3_profile_load(prof) : ZC_ENOMEM;
    if (rc == 0) rc = configure(t, bucket, prof, &conf, &token);
    zc__free(bucket);
    char *base = NULL;
    size_t blen2 = 0;
    if (rc == 0) { /* keys go below "<bucket url>/<prefix>" */
        blen2 = strlen(t->bucket_url);
        base = zc__malloc(blen2 + 2);
        if (base) {
            memcpy(base, t->bucket_url, blen2 + 1);
            if (base[blen2 - 1] != '/') memcpy(base + blen2++, "/", 2);
        }
        if (!base || !(base = remote_encode(base, &blen2, t->prefix, true))) rc = ZC_ENOMEM;
    }
    if (rc == 0) {
        rc = remote_init(&t->r, &s3_vt, url, flags, base, &conf);
        conf.userpwd = NULL; /* the pool owns it now */
        if (rc == 0) rc = headers(&t->r, token);
    }
    if (prof) s3_profile_wipe(prof);
    zc__free(prof);
    zc__free(base);
    if (conf.userpwd) {
        memset(conf.userpwd, 0, strlen(conf.userpwd));
        zc__free(conf.userpwd);
    }
    if (rc < 0) {
        if (t->r.base.vt) s3_close(&t->r.base);
        else {
            zc__free(t->bucket_url);
            zc__free(t->prefix);
            zc__free(t);
        }
        return rc;
    }
    *out = &t->r.base;
    return 0;
}
