/* tests/test_store.c — stores: keys, URLs, fs (pread and io_uring engines) and
 * memory backends, ranges, batches, concurrency, atomic puts, listing,
 * read-only handles, allocation failures. */
#define _GNU_SOURCE
#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "exec/rmtree.h"
#include "harness.h"
#include "store/fs.h"
#include "store/s3.h"
#include "store/store.h"
#include "store/url.h"

/* ------------------------------------------------------------------ helpers */

enum { K_PREAD, K_URING, K_MEM };
static const char *kind_name[] = {"pread", "uring", "mem"};

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/zc_store_XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static void rmtree(char *dir)
{
    if (dir) exec_rm_tree(dir);
    free(dir);
}

static int temp_count;
static int count_temp(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag;
    if (strstr(path + ftw->base, ".tmp.")) temp_count++;
    return 0;
}

static int temp_files(const char *dir)
{
    temp_count = 0;
    nftw(dir, count_temp, 16, FTW_PHYS);
    return temp_count;
}

/* A store of the given kind; *dir gets the folder (fs) or NULL. */
static store *open_kind(int kind, char **dir)
{
    static atomic_int counter;
    store *s = NULL;
    *dir = NULL;
    if (kind == K_MEM) {
        char url[64];
        snprintf(url, sizeof url, "memory://test-%d-%d", (int)getpid(), atomic_fetch_add(&counter, 1));
        CHECK_OK(zc_store_open(url, 0, &s));
        return s;
    }
    *dir = make_tmpdir();
    CHECK(*dir != NULL);
    CHECK_OK(zc_store_open(*dir, 0, &s));
    if (s) CHECK_OK(store_fs_set_io(s, kind == K_URING ? FS_IO_URING : FS_IO_PREAD));
    return s;
}

/* A *_uring test: body(K_URING) where io_uring works, and it must show the
 * engine ran (the ring's read counter rose); skipped where zcube was built
 * without liburing or the kernel refuses io_uring_setup (the engine would
 * fall back to pread and the test would prove nothing). */
static void with_uring(void (*body)(int kind))
{
    if (!store_fs_uring_works())
        SKIP("io_uring unusable: zcube built without liburing (liburing-dev, scripts/install-deps.sh) "
             "or io_uring_setup refused by the kernel");
    uint64_t before = store_fs_uring_reads();
    int skips = harness_skips;
    body(K_URING);
    if (harness_skips == skips) CHECK(store_fs_uring_reads() > before);
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

static void free_reqs(store_req *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].data != r[i].buf) zc__free(r[i].data);
}

/* ------------------------------------------------------------------ keys, URLs */

TEST(key_rules)
{
    const char *good[] = {"a", "a/b/c", "c/0/1", ".zarray", "a/.zattrs", "..a", "a..", "a/...", "\xc3\xa9/x", "0.0.0"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK_OK(store_key_check(good[i]));
    struct { const char *key, *why; } bad[] = {
        {"", "empty"}, {"/etc/passwd", "leading '/'"}, {"../x", "'..'"}, {"a/../../x", "'..'"},
        {"./a", "'.'"}, {"a/.", "'.'"}, {"a//b", "empty segment"}, {"a/", "trailing"},
        {"a\\b", "backslash"}, {"a\x01" "b", "control"}, {"a\x7f", "control"}, {"..", "'..'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_ERR(store_key_check(bad[i].key), ZC_EINVAL, bad[i].why);
        if (bad[i].key[0] && !strchr(bad[i].key, '\\') && !strpbrk(bad[i].key, "\x01\x7f"))
            CHECK(strstr(zc_errmsg(), bad[i].key) != NULL);
    }
    CHECK_ERR(store_key_check("a\\b"), ZC_EINVAL, "\"a\\\\b\"");
    CHECK_ERR(store_key_check(NULL), ZC_EINVAL, "NULL");
    char *longkey = malloc(STORE_KEY_MAX + 2);
    memset(longkey, 'k', STORE_KEY_MAX + 1);
    longkey[STORE_KEY_MAX] = 0;
    CHECK_OK(store_key_check(longkey));
    longkey[STORE_KEY_MAX] = 'k';
    longkey[STORE_KEY_MAX + 1] = 0;
    CHECK_ERR(store_key_check(longkey), ZC_EINVAL, "longer than 4096");
    free(longkey);
    CHECK_OK(store_prefix_check(""));
    CHECK_OK(store_prefix_check("a/"));
    CHECK_OK(store_prefix_check("a/b"));
    CHECK_ERR(store_prefix_check("/a"), ZC_EINVAL, "leading");
    CHECK_ERR(store_prefix_check("a//"), ZC_EINVAL, NULL);
    CHECK_ERR(store_prefix_check("../"), ZC_EINVAL, "'..'");
    CHECK_ERR(store_prefix_check("/"), ZC_EINVAL, NULL);
}

TEST(open_urls)
{
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
    unsetenv("AWS_PROFILE");
    unsetenv("AWS_DEFAULT_PROFILE");
    char *dir = make_tmpdir();
    zc_store *s = NULL;
    CHECK_OK(zc_store_open(dir, 0, &s));
    CHECK(s && !strcmp(s->vt->scheme, "file"));
    zc_store_close(s);
    char url[256];
    snprintf(url, sizeof url, "file://%s", dir);
    CHECK_OK(zc_store_open(url, 0, &s));
    CHECK(s && !strcmp(s->vt->scheme, "file") && !strcmp(s->url, dir));
    zc_store_close(s);
    snprintf(url, sizeof url, "FILE://%s", dir);
    CHECK_OK(zc_store_open(url, ZC_STORE_READONLY, &s));
    CHECK(s && (s->flags & ZC_STORE_READONLY));
    zc_store_close(s);
    CHECK_OK(zc_store_open("memory://urls", 0, &s));
    CHECK(s && !strcmp(s->vt->scheme, "memory") && !strcmp(s->url, "memory://urls"));
    zc_store_close(s);
    /* HTTP(S) stores open without a request and are read-only. */
    CHECK_OK(zc_store_open("http://example.com/a.zarr", 0, &s));
    CHECK(s && !strcmp(s->vt->scheme, "http") && (s->flags & ZC_STORE_READONLY));
    CHECK_ERR(store_put(s, "k", "x", 1), ZC_EINVAL, "read-only");
    zc_store_close(s);
    CHECK_ERR(zc_store_open("https://example.com/a.zarr", ZC_STORE_CREATE, &s), ZC_EUNSUPPORTED, "read-only");
    CHECK(s == NULL);
    CHECK_ERR(zc_store_open("ftp://example.com/a", 0, &s), ZC_EUNSUPPORTED, "\"ftp\"");
    /* S3: credentials from the environment, or anonymous; never in the store's url. */
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("ZCUBE_S3_ANONYMOUS");
    CHECK_ERR(zc_store_open("s3://bucket/x", 0, &s), ZC_EINVAL, "AWS_ACCESS_KEY_ID");
    CHECK_ERR(zc_store_open("s3:///x", 0, &s), ZC_EINVAL, "no bucket");
    setenv("ZCUBE_S3_ANONYMOUS", "1", 1);
    CHECK_OK(zc_store_open("s3://bucket/x/", 0, &s));
    CHECK(s && !strcmp(s->vt->scheme, "s3") && !strcmp(s->url, "s3://bucket/x/"));
    zc_store_close(s);
    CHECK_ERR(zc_store_open("s3://bucket/x/../y", 0, &s), ZC_EINVAL, "..");
    unsetenv("ZCUBE_S3_ANONYMOUS");
    CHECK_ERR(zc_store_open("file://", 0, &s), ZC_EINVAL, "no path");
    CHECK_ERR(zc_store_open(NULL, 0, &s), ZC_EINVAL, "NULL");
    CHECK_ERR(zc_store_open(dir, 0x80, &s), ZC_EINVAL, "flags");
    CHECK_ERR(zc_store_open("", 0, &s), ZC_EINVAL, "empty");
    /* "://" after something that is not a scheme: a path. */
    snprintf(url, sizeof url, "%s/x://y", dir);
    CHECK_ERR(zc_store_open(url, 0, &s), ZC_ENOENT, "x://y");
    zc_store_close(NULL);
    rmtree(dir);
}

/* Where an s3:// store sends its requests: path-style with an endpoint,
 * virtual-hosted on AWS, either by ZCUBE_S3_ADDRESSING; keys and prefixes
 * percent-encoded; bad settings refused by name. No request is sent. */
#define CHECK_STR(got, want)                                                        \
    do {                                                                            \
        const char *g_ = (got);                                                     \
        if (!g_ || strcmp(g_, want)) fprintf(stderr, "got \"%s\", want \"%s\"\n", g_ ? g_ : "(null)", want); \
        CHECK(g_ && !strcmp(g_, want));                                             \
    } while (0)

TEST(s3_addressing)
{
    static const char *const vars[] = {"AWS_ENDPOINT_URL", "ZCUBE_S3_ADDRESSING", "AWS_REGION", "AWS_DEFAULT_REGION",
                                       "ZCUBE_S3_ANONYMOUS", "ZCUBE_IO_RETRIES", "ZCUBE_IO_COALESCE_GAP"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETKEY", 1);
    zc_store *s = NULL;
    CHECK_OK(zc_store_open("s3://bk/a b/c+d", 0, &s));
    s3_store *t = (s3_store *)s;
    CHECK_STR(t->r.base_url, "https://bk.s3.us-east-1.amazonaws.com/a%20b/c%2Bd/");
    CHECK_STR(t->bucket_url, "https://bk.s3.us-east-1.amazonaws.com/");
    CHECK_STR(t->prefix, "a b/c+d/");
    char *u = remote_url(&t->r, "x/é~.0", "?q=1");
    CHECK_STR(u, "https://bk.s3.us-east-1.amazonaws.com/a%20b/c%2Bd/x/%C3%A9~.0?q=1");
    zc__free(u);
    CHECK(strstr(s->url, "SECRETKEY") == NULL && s->io_depth == 64);
    zc_store_close(s);
    setenv("AWS_DEFAULT_REGION", "eu-west-3", 1);
    setenv("ZCUBE_S3_ADDRESSING", "path", 1);
    CHECK_OK(zc_store_open("s3://bk", 0, &s));
    CHECK_STR(((s3_store *)s)->r.base_url, "https://s3.eu-west-3.amazonaws.com/bk/");
    zc_store_close(s);
    unsetenv("ZCUBE_S3_ADDRESSING");
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/", 1);
    setenv("ZCUBE_IO_CONCURRENCY", "8", 1);
    CHECK_OK(zc_store_open("s3://bk/p", 0, &s));
    CHECK_STR(((s3_store *)s)->r.base_url, "http://127.0.0.1:9000/bk/p/");
    CHECK_STR(((s3_store *)s)->bucket_url, "http://127.0.0.1:9000/bk");
    CHECK(s->io_depth == 8);
    zc_store_close(s);
    setenv("ZCUBE_S3_ADDRESSING", "virtual", 1);
    CHECK_OK(zc_store_open("s3://bk/p", 0, &s));
    CHECK_STR(((s3_store *)s)->r.base_url, "http://bk.127.0.0.1:9000/p/");
    zc_store_close(s);
    setenv("ZCUBE_S3_ADDRESSING", "sideways", 1);
    CHECK_ERR(zc_store_open("s3://bk/p", 0, &s), ZC_EINVAL, "ZCUBE_S3_ADDRESSING");
    unsetenv("ZCUBE_S3_ADDRESSING");
    setenv("ZCUBE_IO_RETRIES", "lots", 1);
    CHECK_ERR(zc_store_open("s3://bk/p", 0, &s), ZC_EINVAL, "ZCUBE_IO_RETRIES");
    CHECK_ERR(zc_store_open("http://h/p", 0, &s), ZC_EINVAL, "ZCUBE_IO_RETRIES");
    unsetenv("ZCUBE_IO_RETRIES");
    setenv("ZCUBE_IO_COALESCE_GAP", "-1", 1);
    CHECK_ERR(zc_store_open("s3://bk/p", 0, &s), ZC_EINVAL, "ZCUBE_IO_COALESCE_GAP");
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    unsetenv("ZCUBE_IO_CONCURRENCY");
}

/* The group above a store's root, for the consolidated indexes of zarr/group.c. */
static void check_parent(const char *url, const char *parent, const char *name)
{
    char p[64], n[16];
    int has = store_parent_url(url, p, sizeof p, n, sizeof n);
    if (!parent) {
        if (has) fprintf(stderr, "%s: got parent \"%s\", want none\n", url, p);
        CHECK(!has);
        return;
    }
    CHECK(has);
    if (has) {
        CHECK_STR(p, parent);
        CHECK_STR(n, name);
    }
}

TEST(parent_urls)
{
    check_parent("/tmp/a/b.zarr", "/tmp/a", "b.zarr");
    check_parent("/tmp/a/b.zarr//", "/tmp/a", "b.zarr");
    check_parent("/tmp", "/", "tmp");
    check_parent("/", NULL, NULL);
    check_parent("out", ".", "out");
    check_parent("a//b", "a", "b");
    check_parent("./x", ".", "x");
    check_parent(".", NULL, NULL);
    check_parent("../x", "..", "x");
    check_parent("..", NULL, NULL);
    check_parent("file:///tmp/x", "file:///tmp", "x");
    check_parent("file:///x", "file:///", "x");
    check_parent("file://rel", "file://.", "rel");
    check_parent("s3://bucket/ds/v", "s3://bucket/ds", "v");
    check_parent("s3://bucket/ds/", "s3://bucket/", "ds");
    check_parent("s3://bucket/", NULL, NULL);
    check_parent("s3://bucket", NULL, NULL);
    check_parent("s3://bucket/a?x=1", NULL, NULL);
    check_parent("memory://a/b", NULL, NULL);
    check_parent("http://host/a/b", NULL, NULL);
    check_parent("/tmp/a-name-longer-than-sixteen", NULL, NULL);
}

/* Credentials, region and endpoint from the AWS shared files when the
 * environment does not give them; the environment wins. No request is sent. */
TEST(s3_profiles)
{
    static const char *const vars[] = {"AWS_ENDPOINT_URL", "ZCUBE_S3_ADDRESSING", "AWS_REGION", "AWS_DEFAULT_REGION",
                                       "ZCUBE_S3_ANONYMOUS", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                       "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    char *dir = make_tmpdir(), creds[512], config[512];
    snprintf(creds, sizeof creds, "%s/credentials", dir);
    snprintf(config, sizeof config, "%s/config", dir);
    write_text(creds, "# comment\n[default]\naws_access_key_id=DEFID\naws_secret_access_key = DEFSECRET\n\n"
                      "[zc]\r\n  aws_access_key_id = ZCID \r\naws_secret_access_key = ZCSECRET\r\n"
                      "aws_session_token = ZCTOKEN\r\n[half]\naws_secret_access_key = X\n");
    write_text(config, "[default]\nregion = eu-north-1\n; comment\n[profile zc]\nregion = ap-south-1\n"
                       "endpoint_url = http://127.0.0.1:9/\n[profile cfgonly]\naws_access_key_id = CFGID\n"
                       "aws_secret_access_key = CFGSECRET\n");
    setenv("AWS_SHARED_CREDENTIALS_FILE", creds, 1);
    setenv("AWS_CONFIG_FILE", config, 1);
    zc_store *s = NULL;
    CHECK_OK(zc_store_open("s3://bk/p", 0, &s));
    s3_store *t = (s3_store *)s;
    CHECK_STR(t->bucket_url, "https://bk.s3.eu-north-1.amazonaws.com/");
    CHECK_STR(t->r.net.conf.sigv4, "aws:amz:eu-north-1:s3");
    CHECK_STR(t->r.net.conf.userpwd, "DEFID:DEFSECRET");
    CHECK(t->r.hdrs && !t->r.hdrs->next); /* no token */
    zc_store_close(s);
    setenv("AWS_PROFILE", "zc", 1);
    CHECK_OK(zc_store_open("s3://bk/p", 0, &s));
    t = (s3_store *)s;
    CHECK_STR(t->r.base_url, "http://127.0.0.1:9/bk/p/"); /* endpoint_url: path-style */
    CHECK_STR(t->r.net.conf.sigv4, "aws:amz:ap-south-1:s3");
    CHECK_STR(t->r.net.conf.userpwd, "ZCID:ZCSECRET");
    CHECK(t->r.hdrs && t->r.hdrs->next && !strcmp(t->r.hdrs->next->data, "x-amz-security-token: ZCTOKEN"));
    zc_store_close(s);
    /* the environment wins, key by key as the AWS CLI takes them */
    setenv("AWS_ACCESS_KEY_ID", "ENVID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
    setenv("AWS_REGION", "us-west-2", 1);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:10", 1);
    CHECK_OK(zc_store_open("s3://bk/p", 0, &s));
    t = (s3_store *)s;
    CHECK_STR(t->r.base_url, "http://127.0.0.1:10/bk/p/");
    CHECK_STR(t->r.net.conf.sigv4, "aws:amz:us-west-2:s3");
    CHECK_STR(t->r.net.conf.userpwd, "ENVID:ENVSECRET");
    CHECK(t->r.hdrs && !t->r.hdrs->next); /* the profile's token goes with its keys only */
    zc_store_close(s);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_REGION");
    unsetenv("AWS_ENDPOINT_URL");
    setenv("AWS_PROFILE", "cfgonly", 1); /* keys in the config file only */
    CHECK_OK(zc_store_open("s3://bk", 0, &s));
    CHECK_STR(((s3_store *)s)->r.net.conf.userpwd, "CFGID:CFGSECRET");
    zc_store_close(s);
    setenv("AWS_PROFILE", "half", 1);
    CHECK_ERR(zc_store_open("s3://bk", 0, &s), ZC_EINVAL, "has aws_secret_access_key but not aws_access_key_id");
    /* a token that does not fit is refused, not cut short */
    char big[6000];
    snprintf(big, sizeof big, "[long]\naws_access_key_id = A\naws_secret_access_key = B\naws_session_token = ");
    size_t bl = strlen(big);
    memset(big + bl, 't', 5000);
    big[bl + 5000] = 0;
    write_text(creds, big);
    setenv("AWS_PROFILE", "long", 1);
    CHECK_ERR(zc_store_open("s3://bk", 0, &s), ZC_EINVAL, "aws_session_token in");
    setenv("AWS_PROFILE", "missing", 1);
    CHECK_ERR(zc_store_open("s3://bk", 0, &s), ZC_EINVAL, "AWS profile 'missing'");
    CHECK(strstr(zc_errmsg(), creds) != NULL);
    setenv("ZCUBE_S3_ANONYMOUS", "1", 1);
    CHECK_ERR(zc_store_open("s3://bk", 0, &s), ZC_EINVAL, "AWS profile 'missing'");
    unsetenv("AWS_PROFILE");
    CHECK_OK(zc_store_open("s3://bk", 0, &s)); /* anonymous: the default profile's region, no keys */
    CHECK_STR(((s3_store *)s)->bucket_url, "https://bk.s3.eu-north-1.amazonaws.com/");
    CHECK(((s3_store *)s)->r.net.conf.userpwd == NULL);
    zc_store_close(s);
    unsetenv("ZCUBE_S3_ANONYMOUS");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
    CHECK_ERR(zc_store_open("s3://bk", 0, &s), ZC_EINVAL, "credentials file (profile 'default')");
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
    unsetenv("AWS_CONFIG_FILE");
    rmtree(dir);
}

TEST(fs_open_missing_and_create)
{
    char *dir = make_tmpdir();
    char path[512];
    zc_store *s = NULL;
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    CHECK_ERR(zc_store_open(path, 0, &s), ZC_ENOENT, path);
    CHECK(s == NULL);
    CHECK_OK(zc_store_open(path, ZC_STORE_CREATE, &s));
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_OK(store_put(s, "k", "v", 1));
    zc_store_close(s);
    CHECK_OK(zc_store_open(path, 0, &s)); /* exists now */
    zc_store_close(s);
    snprintf(path, sizeof path, "%s/a/b/c/k", dir);
    CHECK_ERR(zc_store_open(path, 0, &s), ZC_EINVAL, "not a folder");
    CHECK_ERR(zc_store_open(path, ZC_STORE_CREATE, &s), ZC_EINVAL, "not a folder");
    /* A file in the way of mkdir -p. */
    snprintf(path, sizeof path, "%s/a/b/c/k/deeper", dir);
    CHECK(zc_store_open(path, ZC_STORE_CREATE, &s) < 0 && s == NULL);
    rmtree(dir);
}

/* ------------------------------------------------------------------ round trips */

static void roundtrip(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    void *data;
    size_t n;
    uint64_t sz;
    CHECK_OK(store_put(s, "zarr.json", "{}", 2));
    CHECK_OK(store_get(s, "zarr.json", &data, &n));
    CHECK(n == 2 && !memcmp(data, "{}", 2));
    zc__free(data);
    CHECK_OK(store_put(s, "zarr.json", "{\"a\":1}", 7)); /* replace with a longer value */
    CHECK_OK(store_get(s, "zarr.json", &data, &n));
    CHECK(n == 7 && !memcmp(data, "{\"a\":1}", 7));
    zc__free(data);
    CHECK_OK(store_put(s, "zarr.json", "x", 1)); /* and a shorter one */
    CHECK_OK(store_size(s, "zarr.json", &sz));
    CHECK(sz == 1);
    CHECK_OK(store_put(s, "deep/er/c/0/0", "chunk", 5)); /* folders created on the way */
    CHECK_OK(store_get(s, "deep/er/c/0/0", &data, &n));
    CHECK(n == 5 && !memcmp(data, "chunk", 5));
    zc__free(data);
    CHECK_OK(store_put(s, "empty", NULL, 0));
    CHECK_OK(store_get(s, "empty", &data, &n));
    CHECK(n == 0 && data != NULL);
    zc__free(data);
    CHECK_OK(store_size(s, "empty", &sz));
    CHECK(sz == 0);
    size_t big = 3u << 20;
    unsigned char *v = malloc(big);
    fill_pattern(v, big, 7);
    CHECK_OK(store_put(s, "big", v, big));
    CHECK_OK(store_get(s, "big", &data, &n));
    CHECK(n == big && !memcmp(data, v, big));
    zc__free(data);
    free(v);
    CHECK_OK(store_erase(s, "deep/er/c/0/0"));
    CHECK_OK(store_erase(s, "deep/er/c/0/0")); /* absent: fine */
    CHECK_ERR(store_get(s, "deep/er/c/0/0", &data, &n), ZC_ENOENT, "deep/er/c/0/0");
    CHECK(data == NULL && n == 0);
    CHECK_ERR(store_size(s, "deep/er/c/0/0", &sz), ZC_ENOENT, "deep/er/c/0/0");
    CHECK_ERR(store_get(s, "never", &data, &n), ZC_ENOENT, s->url);
    CHECK_ERR(store_put(s, "x", NULL, 3), ZC_EINVAL, "NULL");
    if (dir) CHECK(temp_files(dir) == 0);
    zc_store_close(s);
    rmtree(dir);
}

TEST(roundtrip_fs) { roundtrip(K_PREAD); }
TEST(roundtrip_mem) { roundtrip(K_MEM); }

/* ------------------------------------------------------------------ ranges */

static void ranges(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    unsigned char v[1000];
    fill_pattern(v, sizeof v, 1);
    CHECK_OK(store_put(s, "obj", v, sizeof v));
    CHECK_OK(store_put(s, "sub/other", "hello", 5));
    unsigned char buf50[50], buf49[49];
    store_req r[] = {
        {.key = "obj", .offset = 10, .length = 20},                       /* 0: middle */
        {.key = "obj", .length = STORE_TO_END},                           /* 1: all */
        {.key = "obj", .offset = 990, .length = STORE_TO_END},            /* 2: tail */
        {.key = "obj", .offset = 1000, .length = STORE_TO_END},           /* 3: empty at end */
        {.key = "obj", .offset = 1000, .length = 0},                      /* 4: zero length */
        {.key = "obj", .offset = 1001, .length = 0},                      /* 5: past the end */
        {.key = "obj", .offset = 995, .length = 10},                      /* 6: crosses the end */
        {.key = "obj", .length = 16, .from_end = true},                   /* 7: last 16 */
        {.key = "obj", .offset = 16, .length = 16, .from_end = true},     /* 8: 16 before those */
        {.key = "obj", .length = 1001, .from_end = true},                 /* 9: too long */
        {.key = "obj", .length = STORE_TO_END, .from_end = true},         /* 10: all */
        {.key = "obj", .offset = 100, .length = 50, .buf = buf50, .buf_cap = 50}, /* 11: into buf */
        {.key = "obj", .offset = 0, .length = 50, .buf = buf49, .buf_cap = 49},   /* 12: buf too small */
        {.key = "obj", .offset = UINT64_MAX - 5, .length = 10},           /* 13: overflow */
        {.key = "missing/key", .length = STORE_TO_END},                   /* 14: absent */
        {.key = "sub", .length = STORE_TO_END},                           /* 15: a folder (fs) */
        {.key = "sub/other", .offset = 1, .length = 3},                   /* 16: another object */
        {.key = "obj", .offset = 10, .length = 20},                       /* 17: same as 0 */
        {.key = "obj", .offset = 30, .length = 5},                        /* 18: adjacent to 0 */
        {.key = "obj", .offset = 20, .length = 20},                       /* 19: overlaps 0 */
    };
    size_t n = sizeof r / sizeof *r;
    CHECK_OK(store_get_many(s, r, n));
    CHECK(r[0].status == 0 && r[0].size == 20 && !memcmp(r[0].data, v + 10, 20) && r[0].total == 1000);
    CHECK(r[1].status == 0 && r[1].size == 1000 && !memcmp(r[1].data, v, 1000));
    CHECK(r[2].status == 0 && r[2].size == 10 && !memcmp(r[2].data, v + 990, 10));
    CHECK(r[3].status == 0 && r[3].size == 0 && r[3].data != NULL);
    CHECK(r[4].status == 0 && r[4].size == 0 && r[4].data != NULL);
    CHECK(r[5].status == ZC_ERANGE && r[5].data == NULL && r[5].total == 1000);
    CHECK(r[6].status == ZC_ERANGE && r[6].data == NULL);
    CHECK(r[7].status == 0 && r[7].size == 16 && !memcmp(r[7].data, v + 984, 16));
    CHECK(r[8].status == 0 && r[8].size == 16 && !memcmp(r[8].data, v + 968, 16));
    CHECK(r[9].status == ZC_ERANGE);
    CHECK(r[10].status == 0 && r[10].size == 1000 && !memcmp(r[10].data, v, 1000));
    CHECK(r[11].status == 0 && r[11].data == buf50 && r[11].size == 50 && !memcmp(buf50, v + 100, 50));
    CHECK(r[12].status == ZC_EINVAL && r[12].data == NULL);
    CHECK(r[13].status == ZC_ERANGE);
    CHECK(r[14].status == ZC_ENOENT && r[14].data == NULL);
    CHECK(r[15].status == ZC_ENOENT);
    CHECK(r[16].status == 0 && r[16].size == 3 && !memcmp(r[16].data, "ell", 3));
    CHECK(r[17].status == 0 && r[17].size == 20 && !memcmp(r[17].data, v + 10, 20) && r[17].data != r[0].data);
    CHECK(r[18].status == 0 && r[18].size == 5 && !memcmp(r[18].data, v + 30, 5));
    CHECK(r[19].status == 0 && r[19].size == 20 && !memcmp(r[19].data, v + 20, 20));
    CHECK(strstr(zc_errmsg(), "too small") != NULL); /* the batch's detail names the failure */
    free_reqs(r, n);
    /* An invalid key fails the whole batch before any read. */
    store_req bad[] = {{.key = "obj", .length = 5}, {.key = "../obj", .length = 5}};
    CHECK_ERR(store_get_many(s, bad, 2), ZC_EINVAL, "../obj");
    CHECK(bad[0].data == NULL && bad[0].status == ZC_ECANCELED && bad[1].status == ZC_EINVAL);
    CHECK_OK(store_get_many(s, NULL, 0));
    zc_store_close(s);
    rmtree(dir);
}

TEST(ranges_pread) { ranges(K_PREAD); }
TEST(ranges_uring) { with_uring(ranges); }
TEST(ranges_mem) { ranges(K_MEM); }

/* ------------------------------------------------------------------ big batches */

#define NFILES 3000
#define SHARD (1u << 20)

static void key_of(char *k, size_t cap, int i) { snprintf(k, cap, "c/%d/%d", i / 100, i % 100); }
static size_t size_of(int i) { return (size_t)(i * 7919) % 6000; }

static void big_batch(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    unsigned char *v = malloc(8000), *shard = malloc(SHARD);
    char (*keys)[32] = malloc(NFILES * sizeof *keys);
    for (int i = 0; i < NFILES; i++) {
        key_of(keys[i], sizeof keys[i], i);
        fill_pattern(v, size_of(i), (unsigned)i);
        CHECK_OK(store_put(s, keys[i], v, size_of(i)));
    }
    fill_pattern(shard, SHARD, 99);
    CHECK_OK(store_put(s, "shard", shard, SHARD));
    uint64_t before = store_fs_uring_reads();

    /* Every file whole, every 10th missing, plus 2000 ranges of the shard
     * interleaved with them: adjacent runs (coalesced), a descending stretch,
     * overlaps and repeats, zero lengths; then an adjacent run at the end. */
    size_t nshard = 2000, n = NFILES + NFILES / 10 + nshard, q = 0, j = 0;
    store_req *r = calloc(n, sizeof *r);
    for (int i = 0; i < NFILES; i++) {
        r[q++] = (store_req){.key = keys[i], .length = STORE_TO_END};
        if (i % 10 == 3) r[q++] = (store_req){.key = "c/none/x", .length = STORE_TO_END};
        if (i % 3 == 0) {
            uint64_t off = j < 500 ? j * 300 : j < 800 ? (1999 - j) * 400 : (j % 7) * 100;
            r[q++] = (store_req){.key = "shard", .offset = off, .length = j % 11 == 0 ? 0 : 300};
            j++;
        }
    }
    for (; j < nshard; j++) r[q++] = (store_req){.key = "shard", .offset = 700000 + (j - 1000) * 256, .length = 256};
    CHECK(q == n && j == nshard);
    CHECK_OK(store_get_many(s, r, n));
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        if (!strcmp(r[k].key, "c/none/x")) {
            bad += r[k].status != ZC_ENOENT;
        } else if (!strcmp(r[k].key, "shard")) {
            uint64_t len = r[k].length;
            bad += r[k].status != 0 || r[k].size != len || (len && memcmp(r[k].data, shard + r[k].offset, len));
        } else {
            int i = (int)(strtol(r[k].key + 2, NULL, 10) * 100 + strtol(strchr(r[k].key + 2, '/') + 1, NULL, 10));
            fill_pattern(v, size_of(i), (unsigned)i);
            bad += r[k].status != 0 || r[k].size != size_of(i) || memcmp(r[k].data, v, size_of(i));
        }
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "%s: %d bad requests of %zu\n", kind_name[kind], bad, n);
    free_reqs(r, n);
    if (kind == K_PREAD) CHECK(store_fs_uring_reads() == before);
    free(r);
    free(keys);
    free(shard);
    free(v);
    zc_store_close(s);
    rmtree(dir);
}

TEST(big_batch_pread) { big_batch(K_PREAD); }
TEST(big_batch_uring) { with_uring(big_batch); }
TEST(big_batch_mem) { big_batch(K_MEM); }

/* A sysfs file claims 4096 bytes but holds a few: the first read comes back
 * short, the next finds the end. Both engines must resume after the short read
 * and then report ZC_EIO for that request only. */
static void short_reads(int kind)
{
    const char *sys = "/sys/devices/system/cpu/online";
    struct stat st;
    if (stat(sys, &st) != 0 || st.st_size != 4096) SKIP("no %s of size 4096 (sysfs) to read short", sys);
    char *dir;
    store *s = open_kind(kind, &dir);
    char link[600];
    snprintf(link, sizeof link, "%s/sys", dir);
    CHECK(symlink(sys, link) == 0);
    CHECK_OK(store_put(s, "ok", "fine", 4));
    store_req r[] = {{.key = "sys", .length = STORE_TO_END}, {.key = "ok", .length = STORE_TO_END},
                     {.key = "sys", .offset = 0, .length = 2}};
    CHECK_OK(store_get_many(s, r, 3));
    CHECK(r[0].status == ZC_EIO && r[0].data == NULL && r[0].size == 0);
    CHECK(strstr(zc_errmsg(), "\"sys\"") && strstr(zc_errmsg(), "ended"));
    CHECK(r[1].status == 0 && r[1].size == 4 && !memcmp(r[1].data, "fine", 4));
    CHECK(r[2].status == 0 && r[2].size == 2 && isdigit(((unsigned char *)r[2].data)[0]));
    free_reqs(r, 3);
    zc_store_close(s);
    rmtree(dir);
}

TEST(short_reads_pread) { short_reads(K_PREAD); }
TEST(short_reads_uring) { with_uring(short_reads); }

/* ------------------------------------------------------------------ injected read faults */

/* ZC_FAULT_STORE's read faults reach both engines (pread before the call,
 * io_uring at the completion): the Nth read of a batch failing with EIO fails
 * that file's request alone, naming it; EINTR and short counts are retried and
 * resumed, so every request reads right. */
static void read_faults(int kind)
{
    enum { NF = 24, SZ = 10000 };
    char *dir;
    store *s = open_kind(kind, &dir);
    unsigned char *v = malloc(SZ);
    char keys[NF][16];
    for (int i = 0; i < NF; i++) {
        snprintf(keys[i], sizeof keys[i], "f/%d", i);
        fill_pattern(v, SZ, (unsigned)i);
        CHECK_OK(store_put(s, keys[i], v, SZ));
    }
    static const char *errs[] = {"EIO", "EINTR", "short"};
    for (int e = 0; e < 3; e++) {
        for (int nth = 1; nth <= 5; nth += 2) {
            char spec[64];
            snprintf(spec, sizeof spec, "op=read,nth=%d,err=%s", nth, errs[e]);
            fs_fault_set(spec);
            store_req r[NF];
            for (int i = 0; i < NF; i++) r[i] = (store_req){.key = keys[i], .length = STORE_TO_END};
            CHECK_OK(store_get_many(s, r, NF));
            int failed = 0, wrong = 0;
            for (int i = 0; i < NF; i++) {
                if (r[i].status == ZC_EIO) {
                    failed++;
                    continue;
                }
                fill_pattern(v, SZ, (unsigned)i);
                wrong += r[i].status != 0 || r[i].size != SZ || memcmp(r[i].data, v, SZ);
            }
            CHECK(wrong == 0);
            CHECK(failed == (e == 0));
            if (e == 0) CHECK(strstr(zc_errmsg(), "reading \"f/") != NULL);
            if (wrong || failed != (e == 0))
                fprintf(stderr, "%s, %s: %d wrong, %d failed\n", kind_name[kind], spec, wrong, failed);
            free_reqs(r, NF);
        }
    }
    fs_fault_set(NULL);
    free(v);
    zc_store_close(s);
    rmtree(dir);
}

TEST(read_faults_pread) { read_faults(K_PREAD); }
TEST(read_faults_uring) { with_uring(read_faults); }

/* ------------------------------------------------------------------ concurrency */

typedef struct {
    store *s;
    int seed;
    int bad;
} conc_arg;

static void *conc_reader(void *vp)
{
    conc_arg *a = vp;
    unsigned char v[600];
    store_req r[400];
    char keys[400][16];
    for (int round = 0; round < 15; round++) {
        for (int k = 0; k < 400; k++) {
            int i = (a->seed * 131 + round * 17 + k * 7) % 500;
            snprintf(keys[k], sizeof keys[k], "k/%d", i);
            r[k] = (store_req){.key = keys[k], .length = STORE_TO_END};
        }
        if (store_get_many(a->s, r, 400) != 0) a->bad++;
        for (int k = 0; k < 400; k++) {
            int i = atoi(keys[k] + 2);
            fill_pattern(v, 100 + (size_t)i, (unsigned)i);
            if (r[k].status || r[k].size != 100 + (size_t)i || memcmp(r[k].data, v, r[k].size)) a->bad++;
        }
        free_reqs(r, 400);
    }
    return NULL;
}

static void concurrent(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    unsigned char v[600];
    for (int i = 0; i < 500; i++) {
        char k[16];
        snprintf(k, sizeof k, "k/%d", i);
        fill_pattern(v, 100 + (size_t)i, (unsigned)i);
        CHECK_OK(store_put(s, k, v, 100 + (size_t)i));
    }
    pthread_t t[4];
    conc_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (conc_arg){s, i, 0};
        pthread_create(&t[i], NULL, conc_reader, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(a[i].bad == 0);
    }
    zc_store_close(s);
    rmtree(dir);
}

TEST(concurrent_pread) { concurrent(K_PREAD); }
TEST(concurrent_uring) { with_uring(concurrent); }
TEST(concurrent_mem) { concurrent(K_MEM); }

/* ------------------------------------------------------------------ atomic puts */

typedef struct {
    store *s;
    atomic_int stop, reads;
    int bad;
} atom_arg;

/* Version v of "value": (1 + v) MiB of byte v + 1. */
static size_t vsize(int v) { return (size_t)(1 + v) << 20; }

static void *atom_reader(void *vp)
{
    atom_arg *a = vp;
    while (!atomic_load(&a->stop)) {
        void *d;
        size_t n;
        if (store_get(a->s, "value", &d, &n) != 0) {
            a->bad++;
            continue;
        }
        const unsigned char *b = d;
        int v = n ? b[0] - 1 : -1;
        if (v < 0 || v > 1 || n != vsize(v)) {
            a->bad++;
        } else {
            for (size_t i = 0; i < n; i++)
                if (b[i] != v + 1) {
                    a->bad++;
                    break;
                }
        }
        a->reads++;
        zc__free(d);
    }
    return NULL;
}

static void readers_see_whole_values(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    unsigned char *val[2];
    for (int v = 0; v < 2; v++) {
        val[v] = malloc(vsize(v));
        memset(val[v], v + 1, vsize(v));
    }
    CHECK_OK(store_put(s, "value", val[0], vsize(0)));
    atom_arg a[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        a[i] = (atom_arg){.s = s};
        atomic_init(&a[i].stop, 0);
        atomic_init(&a[i].reads, 0);
        pthread_create(&t[i], NULL, atom_reader, &a[i]);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* 0.6 s and 20 writes at least, and until the readers read 20 times (slow
     * under ThreadSanitizer on a loaded machine), for at most 60 s */
    int writes = 0;
    long ms;
    do {
        CHECK_OK(store_put(s, "value", val[writes % 2], vsize(writes % 2)));
        writes++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    } while (ms < 60000 && (ms < 600 || writes < 20 || atomic_load(&a[0].reads) + atomic_load(&a[1].reads) < 20));
    int reads = 0;
    for (int i = 0; i < 2; i++) {
        atomic_store(&a[i].stop, 1);
        pthread_join(t[i], NULL);
        CHECK(a[i].bad == 0);
        reads += atomic_load(&a[i].reads);
    }
    CHECK(reads >= 20);
    if (dir) CHECK(temp_files(dir) == 0);
    free(val[0]);
    free(val[1]);
    zc_store_close(s);
    rmtree(dir);
}

TEST(readers_see_whole_values_fs) { readers_see_whole_values(K_PREAD); }
TEST(readers_see_whole_values_mem) { readers_see_whole_values(K_MEM); }

TEST(put_failures_leave_no_temp_files)
{
    char *dir;
    store *s = open_kind(K_PREAD, &dir);
    char key[32];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "c/%d/%d", i % 7, i);
        CHECK_OK(store_put(s, key, key, strlen(key)));
    }
    CHECK(temp_files(dir) == 0);
    /* rename over a non-empty folder fails after the temp file was written */
    CHECK_OK(store_put(s, "d/x/y", "1", 1));
    int rc = store_put(s, "d/x", "22", 2);
    CHECK(rc < 0);
    CHECK(strstr(zc_errmsg(), "\"d/x\"") != NULL);
    CHECK(temp_files(dir) == 0);
    /* a parent that is a file */
    CHECK(store_put(s, "c/0/0/under", "x", 1) < 0);
    CHECK(temp_files(dir) == 0);
    /* the folder "d/x" is not a key */
    void *data;
    size_t n;
    uint64_t sz;
    CHECK_ERR(store_get(s, "d/x", &data, &n), ZC_ENOENT, "d/x");
    CHECK_ERR(store_size(s, "d/x", &sz), ZC_ENOENT, "d/x");
    CHECK(store_erase(s, "d/x") < 0);
    CHECK_OK(store_get(s, "d/x/y", &data, &n));
    zc__free(data);

    /* A write that fails half way (file size limit): the old value survives. */
    CHECK_OK(store_put(s, "big", "old", 3));
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 64 << 10;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    size_t bigsz = 1 << 20;
    unsigned char *b = calloc(1, bigsz);
    rc = store_put(s, "big", b, bigsz);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(rc == ZC_EOVERFLOW);
    CHECK(strstr(zc_errmsg(), "big") != NULL);
    CHECK(temp_files(dir) == 0);
    CHECK_OK(store_get(s, "big", &data, &n));
    CHECK(n == 3 && !memcmp(data, "old", 3));
    zc__free(data);
    free(b);
    zc_store_close(s);
    rmtree(dir);
}

TEST(fsync_env)
{
    setenv("ZC_FSYNC", "1", 1);
    char *dir;
    store *s = open_kind(K_PREAD, &dir);
    unsetenv("ZC_FSYNC");
    CHECK(((fs_store *)s)->fsync);
    CHECK_OK(store_put(s, "a", "1", 1));
    CHECK_OK(store_put(s, "x/y/z", "22", 2));
    void *d;
    size_t n;
    CHECK_OK(store_get(s, "x/y/z", &d, &n));
    CHECK(n == 2 && !memcmp(d, "22", 2));
    zc__free(d);
    CHECK(temp_files(dir) == 0);
    zc_store_close(s);
    rmtree(dir);
}

/* ------------------------------------------------------------------ escapes, read-only */

TEST(key_escapes)
{
    char *parent = make_tmpdir();
    char root[512], secret[600];
    snprintf(root, sizeof root, "%s/root", parent);
    snprintf(secret, sizeof secret, "%s/secret", parent);
    FILE *f = fopen(secret, "w");
    fputs("s3cr3t", f);
    fclose(f);
    zc_store *s;
    CHECK_OK(zc_store_open(root, ZC_STORE_CREATE, &s));
    const char *keys[] = {"../secret", "a/../../secret", "/etc/passwd", "a\\b", "a//b", "./a", "..", "a/"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        void *d = (void *)1;
        size_t n;
        uint64_t sz;
        const char *k = keys[i];
        const char *needle = strchr(k, '\\') ? "a\\\\b" : k;
        CHECK_ERR(store_get(s, k, &d, &n), ZC_EINVAL, needle);
        CHECK(d == NULL);
        CHECK_ERR(store_put(s, k, "x", 1), ZC_EINVAL, needle);
        CHECK_ERR(store_erase(s, k), ZC_EINVAL, needle);
        CHECK_ERR(store_size(s, k, &sz), ZC_EINVAL, needle);
        store_req r = {.key = k, .length = STORE_TO_END};
        CHECK_ERR(store_get_many(s, &r, 1), ZC_EINVAL, needle);
        CHECK(r.data == NULL && r.status == ZC_EINVAL);
    }
    CHECK_ERR(store_list_dir(s, "../", NULL, NULL), ZC_EINVAL, "..");
    CHECK_ERR(store_list_prefix(s, "/etc", NULL, NULL), ZC_EINVAL, "/etc");
    struct stat st;
    CHECK(stat(secret, &st) == 0 && st.st_size == 6); /* untouched */
    zc_store_close(s);
    rmtree(parent);
}

static void readonly(int kind)
{
    char *dir;
    store *w = open_kind(kind, &dir), *r = NULL;
    CHECK_OK(store_put(w, "k", "v1", 2));
    CHECK_OK(zc_store_open(dir ? dir : w->url, ZC_STORE_READONLY, &r));
    CHECK_ERR(store_put(r, "k", "v2", 2), ZC_EINVAL, "read-only");
    CHECK(strstr(zc_errmsg(), "\"k\"") != NULL);
    CHECK_ERR(store_erase(r, "k"), ZC_EINVAL, "read-only");
    void *d;
    size_t n;
    CHECK_OK(store_get(r, "k", &d, &n));
    CHECK(n == 2 && !memcmp(d, "v1", 2)); /* the data is untouched */
    zc__free(d);
    zc_store_close(r);
    zc_store_close(w);
    rmtree(dir);
}

TEST(readonly_fs) { readonly(K_PREAD); }
TEST(readonly_mem) { readonly(K_MEM); }

/* ------------------------------------------------------------------ listing */

typedef struct {
    char names[64][64];
    int n;
    int stop_after; /* return 7 after this many, 0 = never */
} listing;

static int collect(const char *key, void *ctx)
{
    listing *l = ctx;
    if (l->n < 64) snprintf(l->names[l->n++], sizeof l->names[0], "%s", key);
    return l->stop_after && l->n >= l->stop_after ? 7 : 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

/* Sorted, comma-joined listing. */
static const char *joined(listing *l)
{
    static char out[4096];
    qsort(l->names, (size_t)l->n, sizeof l->names[0], cmp_name);
    out[0] = 0;
    for (int i = 0; i < l->n; i++) {
        if (i) strcat(out, ",");
        strcat(out, l->names[i]);
    }
    return out;
}

static const char *list_of(store *s, const char *prefix, bool recurse)
{
    listing l = {.n = 0};
    int rc = recurse ? store_list_prefix(s, prefix, collect, &l) : store_list_dir(s, prefix, collect, &l);
    CHECK_OK(rc);
    return joined(&l);
}

static void listing_test(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    const char *keys[] = {"a/0", "a/1", "a/b/c", "z", ".zattrs", "a/b/d/e"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) CHECK_OK(store_put(s, keys[i], "x", 1));
    if (dir) { /* leftovers a listing must not show */
        char p[600];
        snprintf(p, sizeof p, "%s/a/.0.tmp.123.4", dir);
        close(open(p, O_CREAT | O_WRONLY, 0644));
        snprintf(p, sizeof p, "%s/bad\\name", dir);
        close(open(p, O_CREAT | O_WRONLY, 0644));
        snprintf(p, sizeof p, "%s/fifo", dir);
        mkfifo(p, 0644);
    }
    CHECK(!strcmp(list_of(s, "", false), ".zattrs,a/,z"));
    CHECK(!strcmp(list_of(s, "a", false), "a/0,a/1,a/b/"));
    CHECK(!strcmp(list_of(s, "a/", false), "a/0,a/1,a/b/"));
    CHECK(!strcmp(list_of(s, "a/b", false), "a/b/c,a/b/d/"));
    CHECK(!strcmp(list_of(s, "nope", false), ""));
    CHECK(!strcmp(list_of(s, "z", false), "")); /* an object, not a folder */
    CHECK(!strcmp(list_of(s, "", true), ".zattrs,a/0,a/1,a/b/c,a/b/d/e,z"));
    CHECK(!strcmp(list_of(s, "a/b/", true), "a/b/c,a/b/d/e"));
    CHECK(!strcmp(list_of(s, "nope/", true), ""));
    listing l = {.stop_after = 2};
    CHECK(store_list_dir(s, "a", collect, &l) == 7 && l.n == 2);
    l = (listing){.stop_after = 3};
    CHECK(store_list_prefix(s, "", collect, &l) == 7 && l.n == 3);
    /* The generic list_prefix (walking list_dir) gives the same answer. */
    const store_vtable *vt = s->vt;
    store_vtable plain = *vt;
    plain.list_prefix = NULL;
    s->vt = &plain;
    CHECK(!strcmp(list_of(s, "", true), ".zattrs,a/0,a/1,a/b/c,a/b/d/e,z"));
    CHECK(!strcmp(list_of(s, "a/b", true), "a/b/c,a/b/d/e"));
    l = (listing){.stop_after = 4};
    CHECK(store_list_prefix(s, "", collect, &l) == 7 && l.n == 4);
    s->vt = vt;
    zc_store_close(s);
    rmtree(dir);
}

TEST(list_fs) { listing_test(K_PREAD); }
TEST(list_mem) { listing_test(K_MEM); }

/* store_erase_prefix: everything below the prefix goes, folders included (the
 * prefix's own too), nothing beside it; the root prefix empties the store. */
static void erase_prefix_test(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    const char *keys[] = {"op0/zarr.json", "op0/c/0/0", "op0/c/0/1", "op0/c/1/0", "op1/c/0", "op10/x", "zarr.json"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) CHECK_OK(store_put(s, keys[i], "x", 1));
    CHECK_OK(store_erase_prefix(s, "op0/"));
    CHECK(!strcmp(list_of(s, "", true), "op1/c/0,op10/x,zarr.json"));
    CHECK(!strcmp(list_of(s, "", false), "op1/,op10/,zarr.json"));
    if (dir) {
        char p[600];
        struct stat sb;
        snprintf(p, sizeof p, "%s/op0", dir);
        CHECK(stat(p, &sb) != 0 && errno == ENOENT); /* the emptied folder itself */
    }
    CHECK_OK(store_erase_prefix(s, "nope/")); /* nothing there: nothing to do */
    CHECK_OK(store_erase_prefix(s, ""));
    CHECK(!strcmp(list_of(s, "", true), ""));
    if (dir) {
        struct stat sb;
        CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)); /* never the root */
    }
    CHECK(store_erase_prefix(s, "../x/") == ZC_EINVAL);
    zc_store_close(s);
    rmtree(dir);
}

TEST(erase_prefix_fs) { erase_prefix_test(K_PREAD); }
TEST(erase_prefix_mem) { erase_prefix_test(K_MEM); }

TEST(mem_list_is_sorted_and_allows_file_and_folder)
{
    zc_store *s;
    CHECK_OK(zc_store_open("memory://sorted", 0, &s));
    const char *keys[] = {"b", "a/x", "c/1", "a", "c/0", "B"};
    for (size_t i = 0; i < 6; i++) CHECK_OK(store_put(s, keys[i], "x", 1));
    listing l = {.n = 0};
    CHECK_OK(store_list_dir(s, "", collect, &l));
    CHECK(l.n == 5 && !strcmp(l.names[0], "B") && !strcmp(l.names[1], "a") && !strcmp(l.names[2], "a/") &&
          !strcmp(l.names[3], "b") && !strcmp(l.names[4], "c/"));
    zc_store_close(s);
}

/* ------------------------------------------------------------------ memory registry */

TEST(mem_shared_by_name)
{
    size_t base = zc__alloc_current();
    zc_store *a, *b, *c;
    CHECK_OK(zc_store_open("memory://shared", 0, &a));
    CHECK_OK(zc_store_open("memory://shared", 0, &b));
    CHECK_OK(zc_store_open("memory://other", 0, &c));
    CHECK_OK(store_put(a, "k", "hello", 5));
    for (int i = 0; i < 1000; i++) { /* grows the table */
        char k[16];
        snprintf(k, sizeof k, "n/%d", i);
        CHECK_OK(store_put(a, k, k, strlen(k)));
    }
    void *d;
    size_t n;
    CHECK_OK(store_get(b, "k", &d, &n));
    CHECK(n == 5 && !memcmp(d, "hello", 5));
    zc__free(d);
    CHECK_OK(store_get(b, "n/777", &d, &n));
    CHECK(n == 5 && !memcmp(d, "n/777", 5));
    zc__free(d);
    CHECK_ERR(store_get(c, "k", &d, &n), ZC_ENOENT, "memory://other");
    zc_store_close(a);
    CHECK_OK(store_get(b, "k", &d, &n)); /* still there while b is open */
    zc__free(d);
    CHECK_OK(store_erase(b, "n/5"));
    CHECK_ERR(store_get(b, "n/5", &d, &n), ZC_ENOENT, NULL);
    zc_store_close(b);
    zc_store_close(c);
    CHECK(zc__alloc_current() == base); /* the last close freed the data */
    CHECK_OK(zc_store_open("memory://shared", 0, &a));
    CHECK_ERR(store_get(a, "k", &d, &n), ZC_ENOENT, NULL); /* a fresh store */
    zc_store_close(a);
    CHECK(zc__alloc_current() == base);
}

/* ------------------------------------------------------------------ io_uring */

TEST(uring_engine)
{
    char *dir;
    store *s = open_kind(K_PREAD, &dir);
    int works = store_fs_uring_works();
    if (store_fs_set_io(s, FS_IO_URING) != 0) { /* built without liburing */
        fprintf(stderr, "io_uring: not compiled in\n");
        CHECK_ERR(store_fs_set_io(s, FS_IO_URING), ZC_EUNSUPPORTED, "io_uring");
        CHECK(works == 0);
    } else {
        fprintf(stderr, "io_uring on this machine: %s\n", works ? "works" : "unavailable (pread fallback)");
        CHECK_OK(store_put(s, "a", "aaaa", 4));
        CHECK_OK(store_put(s, "b", "bbbbbb", 6));
        uint64_t before = store_fs_uring_reads();
        store_req r[] = {{.key = "a", .length = STORE_TO_END}, {.key = "b", .offset = 2, .length = 3}};
        CHECK_OK(store_get_many(s, r, 2));
        CHECK(r[0].size == 4 && !memcmp(r[0].data, "aaaa", 4) && r[1].size == 3 && !memcmp(r[1].data, "bbb", 3));
        free_reqs(r, 2);
        /* If a ring can be made here, the reads must have gone through it. */
        CHECK(store_fs_uring_reads() == before + (works ? 2 : 0));
    }
    zc_store_close(s);
    rmtree(dir);
}

TEST(store_fs_set_io_checks)
{
    zc_store *m;
    CHECK_OK(zc_store_open("memory://io", 0, &m));
    CHECK_ERR(store_fs_set_io(m, FS_IO_PREAD), ZC_EINVAL, "not a filesystem store");
    zc_store_close(m);
    char *dir;
    store *s = open_kind(K_PREAD, &dir);
    CHECK_ERR(store_fs_set_io(s, 42), ZC_EINVAL, "42");
    zc_store_close(s);
    rmtree(dir);
}

/* ------------------------------------------------------------------ allocation failures */

/* Run op with the i-th allocation failing, for i = 1, 2, ... until it succeeds;
 * each failure must be ZC_ENOMEM and leave no allocation behind. */
typedef int (*alloc_op)(void *ctx);

static void alloc_loop(const char *what, alloc_op op, void *ctx)
{
    size_t base = zc__alloc_current();
    int i;
    for (i = 1; i < 500; i++) {
        zc_test_fail_alloc(i, 0);
        int rc = op(ctx);
        int failed = zc_test_fail_alloc(0, 0);
        if (zc__alloc_current() != base) {
            fprintf(stderr, "%s: leak after failing allocation %d (rc %d)\n", what, i, rc);
            harness_failures++;
            return;
        }
        if (rc == 0 && !failed) break;
        if (rc != ZC_ENOMEM) {
            fprintf(stderr, "%s: failing allocation %d gave %s (%s)\n", what, i, zc_errname(rc), zc_errmsg());
            harness_failures++;
            return;
        }
    }
    CHECK(i > 1 && i < 500); /* some allocation was tried, and it ended */
}

typedef struct {
    const char *url;
    store *s;
} op_ctx;

static int op_open_close(void *vp)
{
    op_ctx *c = vp;
    zc_store *s;
    int rc = zc_store_open(c->url, ZC_STORE_CREATE, &s);
    if (rc == 0) zc_store_close(s);
    return rc;
}

static int op_put_get(void *vp)
{
    op_ctx *c = vp;
    zc_store *s;
    ZC_TRY(zc_store_open(c->url, ZC_STORE_CREATE, &s));
    int rc = store_put(s, "a/b/k", "value", 5);
    void *d = NULL;
    size_t n;
    if (!rc) rc = store_get(s, "a/b/k", &d, &n);
    if (!rc && (n != 5 || memcmp(d, "value", 5))) rc = ZC_EINTERNAL;
    zc__free(d);
    zc_store_close(s);
    return rc;
}

static int op_get_many(void *vp)
{
    op_ctx *c = vp;
    store_req r[100];
    char keys[100][16];
    for (int i = 0; i < 100; i++) {
        snprintf(keys[i], sizeof keys[i], "m/%d", i % 40);
        r[i] = (store_req){.key = keys[i], .offset = (uint64_t)(i / 40), .length = 2};
    }
    int rc = store_get_many(c->s, r, 100);
    for (int i = 0; i < 100 && !rc; i++)
        if (r[i].status) rc = r[i].status;
        else if (r[i].size != 2 || memcmp(r[i].data, "0123456789" + i / 40, 2)) rc = ZC_EINTERNAL;
    free_reqs(r, 100);
    return rc;
}

static int op_list(void *vp)
{
    op_ctx *c = vp;
    listing l = {.n = 0};
    ZC_TRY(store_list_dir(c->s, "", collect, &l));
    l.n = 0;
    ZC_TRY(store_list_prefix(c->s, "m", collect, &l));
    return l.n == 40 ? 0 : ZC_EINTERNAL;
}

static void alloc_failures(int kind)
{
    char *dir;
    store *s = open_kind(kind, &dir);
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof k, "m/%d", i);
        CHECK_OK(store_put(s, k, "0123456789", 10));
    }
    op_ctx c = {.s = s};
    CHECK_OK(op_get_many(&c)); /* warm up: the thread pool and rings exist before counting */
    char url[600];
    if (dir) snprintf(url, sizeof url, "%s/fresh/store", dir);
    else snprintf(url, sizeof url, "memory://alloc-%d", kind);
    c.url = url;
    alloc_loop("open/close", op_open_close, &c);
    alloc_loop("put/get", op_put_get, &c);
    alloc_loop("get_many", op_get_many, &c);
    alloc_loop("list", op_list, &c);
    if (dir) CHECK(temp_files(dir) == 0);
    zc_store_close(s);
    rmtree(dir);
}

TEST(alloc_failures_pread) { alloc_failures(K_PREAD); }
TEST(alloc_failures_uring) { with_uring(alloc_failures); }
TEST(alloc_failures_mem) { alloc_failures(K_MEM); }

/* ------------------------------------------------------------------ map */

/* store_map: whole objects of the fs store mapped read-only; the bytes stay
 * valid after the object is replaced (a new file); empty objects and folders
 * decline (ZC_EUNSUPPORTED), absent keys are ZC_ENOENT; the memory store
 * cannot map. */
TEST(map_fs_and_mem)
{
    char *dir;
    store *s = open_kind(K_PREAD, &dir);
    if (!s) return;
    unsigned char v[10000], w[300];
    fill_pattern(v, sizeof v, 7);
    fill_pattern(w, sizeof w, 8);
    CHECK_OK(store_put(s, "a/b", v, sizeof v));
    CHECK_OK(store_put(s, "e", "", 0));
    store_map_t m, m2, m3;
    CHECK_OK(store_map(s, "a/b", &m));
    CHECK(m.size == sizeof v && m.addr && !memcmp(m.addr, v, sizeof v));
    CHECK_OK(store_map(s, "a/b", &m2)); /* the same file: the same mapping, from the store's table */
    CHECK(m2.addr == m.addr && m2.handle == m.handle);
    store_unmap(s, &m2);
    CHECK(m2.handle == NULL);
    CHECK_OK(store_put(s, "a/b", w, sizeof w)); /* replaced: the mapping keeps the old file */
    CHECK(!memcmp(m.addr, v, sizeof v));
    CHECK_OK(store_map(s, "a/b", &m2)); /* ... and a new map sees the new one */
    CHECK(m2.size == sizeof w && !memcmp(m2.addr, w, sizeof w));
    store_unmap(s, &m);
    CHECK_OK(store_put(s, "c", v, sizeof v));
    CHECK_OK(store_map(s, "c", &m3));
    /* rewritten in place with the same size (inode kept, mtime moves on): not the old mapping */
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/c", dir);
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        fwrite(w, 1, sizeof w, f);
        fclose(f);
    }
    CHECK_OK(store_map(s, "c", &m));
    CHECK(m.handle != m3.handle && !memcmp(m.addr, w, sizeof w));
    store_unmap(s, &m);
    store_unmap(s, &m3);
    CHECK(store_map(s, "e", &m) == ZC_EUNSUPPORTED && m.addr == NULL && m.size == 0 && !m.handle);
    CHECK(store_map(s, "a", &m) == ZC_EUNSUPPORTED);
    CHECK(store_map(s, "nope", &m) == ZC_ENOENT);
    CHECK(store_map(s, "nope/x", &m) == ZC_ENOENT);
    CHECK(store_map(s, "../x", &m) == ZC_EUNSUPPORTED); /* invalid key: never reaches the backend */
    zc_store_close(s); /* a mapping held past the store's close stays valid */
    CHECK(!memcmp(m2.addr, w, sizeof w));
    store_unmap(s, &m2);
    rmtree(dir);
    s = open_kind(K_MEM, &dir);
    if (!s) return;
    CHECK_OK(store_put(s, "k", v, 10));
    CHECK(store_map(s, "k", &m) == ZC_EUNSUPPORTED);
    zc_store_close(s);
}

/* A mapped file cut short in place by another program: the bytes past the
 * cut read as zeros instead of raising SIGBUS, store_map_check names the
 * file with ZC_EIO, and the store maps the file afresh next time. A fault
 * outside every mapping still kills (checked in a child). */
#include "store/map_guard.h"
#include <sys/mman.h>
#include <sys/wait.h>
TEST(map_truncated_under_reader_is_eio_not_sigbus)
{
    char *dir;
    store *s = open_kind(K_PREAD, &dir);
    if (!s) return;
    static unsigned char v[1 << 20];
    fill_pattern(v, sizeof v, 3);
    CHECK_OK(store_put(s, "c/0", v, sizeof v));
    store_map_t m;
    CHECK_OK(store_map(s, "c/0", &m));
    CHECK_OK(store_map_check(&m));
    char path[512];
    snprintf(path, sizeof path, "%s/c/0", dir);
    CHECK(truncate(path, 4096) == 0); /* what another program may do at any moment */
    unsigned before = map_guard_faults();
    const volatile unsigned char *p = m.addr;
    unsigned sum = 0;
    for (size_t i = 4096; i < sizeof v; i += 4096) sum += p[i]; /* each page past the cut faults once */
    CHECK(sum == 0 && p[5] == v[5]);
    CHECK(map_guard_faults() - before == sizeof v / 4096 - 1);
    CHECK_ERR(store_map_check(&m), ZC_EIO, "\"c/0\" was cut short");
    store_map_t m2;
    CHECK_OK(store_map(s, "c/0", &m2)); /* not the faulted mapping */
    CHECK(m2.handle != m.handle && m2.size == 4096 && !memcmp(m2.addr, v, 4096));
    CHECK_OK(store_map_check(&m2));
    store_unmap(s, &m2);
    store_unmap(s, &m);
    /* the handler passes other faults on: a child touching a truncated file it
     * mapped itself (not through the store) still dies of SIGBUS */
    CHECK_OK(store_put(s, "d", v, sizeof v));
    pid_t pid = fork();
    if (pid == 0) {
        snprintf(path, sizeof path, "%s/d", dir);
        int fd = open(path, O_RDONLY);
        const volatile unsigned char *q = mmap(NULL, sizeof v, PROT_READ, MAP_SHARED, fd, 0);
        if (truncate(path, 0) != 0) _exit(2);
        _exit(q[8192]);
    }
    int status = 0;
    /* SIGBUS; under ASan/TSan their handler (ours chains to it) reports and exits non-zero. A
     * fault wrongly taken for ours would read a zero: exit 0 */
    CHECK(waitpid(pid, &status, 0) == pid &&
          ((WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
           (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2)));
    zc_store_close(s);
    rmtree(dir);
}
