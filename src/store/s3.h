/* store/s3.h — S3 stores, "s3://bucket/prefix" (s3.c: open, settings,
 * erase; s3_put.c: PUT and multipart uploads; s3_list.c: ListObjectsV2;
 * s3_profile.c: the AWS shared config and credentials files). */
#ifndef ZC_STORE_S3_H
#define ZC_STORE_S3_H

#include "store/remote.h"

typedef struct {
    remote r;                /* must be first; r.base_url = the bucket's URL + encoded prefix + '/' */
    char *bucket_url;        /* the bucket's URL (listings); see bucket_url() in s3.c */
    char *prefix;            /* the key prefix below the bucket ("" or ending with '/'), not encoded */
    uint64_t multipart_min;  /* objects this large or larger go up in parts (ZCUBE_S3_MULTIPART_THRESHOLD) */
    uint64_t part_size;      /* (ZCUBE_S3_PART_SIZE) */
} s3_store;

/* What the AWS shared files hold for the profile in use ("" = not set). */
typedef struct {
    char name[256];
    char key_id[256], secret[256], token[4096];
    char region[64], endpoint[1024];
} s3_profile;
/* Read the profile (see s3_profile.c); an error names a missing named profile
 * or a half-given key pair. Wipe it with s3_profile_wipe. */
int s3_profile_load(s3_profile *p);
void s3_profile_wipe(s3_profile *p);

int s3_put(store *s, const char *key, const void *data, size_t size);
int s3_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);
int s3_list_prefix(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);
/* The text of the first <tag>...</tag> at or after *pos in xml, XML entities
 * decoded, zc__malloc'd; *pos moves past it. NULL if absent (or no memory:
 * then *oom is set). */
char *s3_xml_next(const char *xml, const char *tag, const char **pos, bool *oom);
/* A 2xx answer whose body is an S3 <Error> (CompleteMultipartUpload may send one): ZC_EIO naming it, else 0. */
int s3_body_error(const net_xfer *x, const char *what);

#endif
