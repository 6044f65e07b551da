/* store/s3_put.c — writes to S3: one PUT, or for objects of
 * multipart_min bytes or more a multipart upload whose parts go up
 * concurrently; any failure aborts the upload, so no partial object is left
 * (S3 makes an object visible only when the upload completes). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/s3.h"

int s3_body_error(const net_xfer *x, const char *what)
{
    char body[NET_ERRBODY_MAX]; /* the body is not NUL-ended: its start, with an end */
    size_t n = x->got < sizeof body - 1 ? x->got : sizeof body - 1;
    if (x->dst && n) memcpy(body, x->dst, n);
    body[x->dst ? n : 0] = 0;
    if (!strstr(body, "<Error>")) return 0;
    const char *pos = body;
    bool oom = false;
    char *code = s3_xml_next(body, "Code", &pos, &oom);
    int rc = zc__err(ZC_EIO, "%s: S3 error %s", what, code ? code : "(no code)");
    zc__free(code);
    return rc;
}

/* Run one request; 0 if it got a 2xx answer (x keeps the answer: release it). */
static int run1(remote *r, net_xfer *x)
{
    ZC_TRY(net_run(&r->net, x, 1));
    if (x->status < 0) return zc__err(x->status, "%s", x->errmsg);
    if (x->code < 200 || x->code >= 300) {
        int rc = remote_answer_error(x);
        if (rc == ZC_ENOENT || rc == ZC_ERANGE) {
            char u[512];
            net_url_for_msg(x->url, u, sizeof u);
            rc = zc__err(ZC_EIO, "%s %s: HTTP %ld", x->method ? x->method : "GET", u, x->code);
        }
        return rc;
    }
    return 0;
}

static int put_single(remote *r, const char *key, const void *data, size_t size)
{
    net_xfer x = {.method = "PUT", .hdrs = r->put_hdrs, .body = data, .body_len = size, .want_len = NET_ALL};
    if (!(x.url = remote_url(r, key, NULL))) return ZC_ENOMEM;
    int rc = run1(r, &x);
    net_xfer_release(&x);
    zc__free((char *)x.url);
    return rc;
}

static void mp_abort(remote *r, const char *key, const char *qid)
{
    char q[600];
    snprintf(q, sizeof q, "?uploadId=%s", qid);
    net_xfer x = {.method = "DELETE", .hdrs = r->hdrs, .want_len = NET_ALL};
    if (!(x.url = remote_url(r, key, q))) return;
    zc__err_kept kept; /* the first failure's message */
    zc__err_keep(&kept);
    net_run(&r->net, &x, 1);
    zc__err_restore(&kept);
    net_xfer_release(&x);
    zc__free((char *)x.url);
}

/* Upload the parts concurrently, then complete; the XML body names each part's ETag. */
static int mp_parts(s3_store *t, const char *key, const char *qid, const unsigned char *data, size_t size)
{
    remote *r = &t->r;
    size_t np = (size_t)((size + t->part_size - 1) / t->part_size);
    if (np > 10000) return zc__err(ZC_EINVAL, "%zu parts of %llu bytes: S3 allows 10,000 (raise ZCUBE_S3_PART_SIZE)",
                                   np, (unsigned long long)t->part_size);
    net_xfer *xs = zc__calloc(np, sizeof *xs);
    char *xml = zc__malloc(np * 160 + 128);
    int rc = xs && xml ? 0 : ZC_ENOMEM;
    size_t built = 0;
    for (; rc == 0 && built < np; built++) {
        char q[640];
        snprintf(q, sizeof q, "?partNumber=%zu&uploadId=%s", built + 1, qid);
        size_t off = built * (size_t)t->part_size;
        xs[built] = (net_xfer){.method = "PUT", .hdrs = r->put_hdrs, .body = data + off,
                               .body_len = size - off < t->part_size ? size - off : (size_t)t->part_size,
                               .want_len = NET_ALL};
        if (!(xs[built].url = remote_url(r, key, q))) rc = ZC_ENOMEM;
    }
    if (rc == 0) rc = net_run(&r->net, xs, np);
    size_t len = 0;
    if (rc == 0) len = (size_t)sprintf(xml, "<CompleteMultipartUpload>");
    for (size_t i = 0; rc == 0 && i < np; i++) {
        if (xs[i].status < 0) rc = zc__err(xs[i].status, "%s", xs[i].errmsg);
        else if (xs[i].code < 200 || xs[i].code >= 300) rc = remote_answer_error(&xs[i]);
        else if (!xs[i].etag[0] || strchr(xs[i].etag, '<'))
            rc = zc__err(ZC_EIO, "part %zu of \"%s\": no usable ETag in the answer", i + 1, key);
        else len += (size_t)sprintf(xml + len, "<Part><PartNumber>%zu</PartNumber><ETag>%s</ETag></Part>", i + 1,
                                    xs[i].etag);
    }
    for (size_t i = 0; xs && i < built; i++) {
        net_xfer_release(&xs[i]);
        zc__free((char *)xs[i].url);
    }
    zc__free(xs);
    if (rc == 0) {
        len += (size_t)sprintf(xml + len, "</CompleteMultipartUpload>");
        char q[600];
        snprintf(q, sizeof q, "?uploadId=%s", qid);
        net_xfer x = {.method = "POST", .hdrs = r->hdrs, .body = xml, .body_len = len, .want_len = NET_ALL};
        if (!(x.url = remote_url(r, key, q))) rc = ZC_ENOMEM;
        if (rc == 0) rc = run1(r, &x);
        if (rc == 0) rc = s3_body_error(&x, "completing the multipart upload");
        net_xfer_release(&x);
        zc__free((char *)x.url);
    }
    zc__free(xml);
    return rc;
}

static int put_multipart(s3_store *t, const char *key, const void *data, size_t size)
{
    remote *r = &t->r;
    net_xfer x = {.method = "POST", .hdrs = r->hdrs, .want_len = NET_ALL};
    if (!(x.url = remote_url(r, key, "?uploads="))) return ZC_ENOMEM;
    int rc = run1(r, &x);
    char *id = NULL;
    if (rc == 0) {
        const char *pos = x.dst ? (const char *)x.dst : "";
        bool oom = false;
        /* the answer is not NUL-ended: the XML fits in what we read; copy it with an end */
        char *body = zc__malloc(x.got + 1);
        if (body) {
            memcpy(body, x.dst ? x.dst : (unsigned char *)"", x.got);
            body[x.got] = 0;
            pos = body;
            id = s3_xml_next(body, "UploadId", &pos, &oom);
            zc__free(body);
        }
        if (!id) rc = body && !oom ? zc__err(ZC_EIO, "starting a multipart upload of \"%s\": no UploadId", key)
                                   : ZC_ENOMEM;
    }
    net_xfer_release(&x);
    zc__free((char *)x.url);
    if (rc < 0) return rc;
    size_t qlen = 0;
    char *qid = remote_encode(NULL, &qlen, id, false);
    zc__free(id);
    if (!qid) return ZC_ENOMEM;
    if (qlen > 500) rc = zc__err(ZC_EIO, "multipart upload id too long (%zu bytes)", qlen);
    else if ((rc = mp_parts(t, key, qid, data, size)) < 0) mp_abort(r, key, qid);
    zc__free(qid);
    return rc;
}

int s3_put(store *s, const char *key, const void *data, size_t size)
{
    s3_store *t = (s3_store *)s;
    if (size >= t->multipart_min && size > t->part_size) return put_multipart(t, key, data, size);
    return put_single(&t->r, key, data, size);
}
