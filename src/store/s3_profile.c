/* store/s3_profile.c — S3 settings from the AWS shared files, read as the AWS
 * CLI and SDKs read them, for what the environment does not give:
 *
 *   credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials):
 *     [NAME] aws_access_key_id, aws_secret_access_key, aws_session_token
 *   config file (AWS_CONFIG_FILE, else ~/.aws/config):
 *     [default] or [profile NAME]: region, endpoint_url, and the same
 *     aws_* keys (the credentials file wins)
 *
 * NAME is AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default". A profile
 * named in the environment must exist in one of the files; "default" may be
 * absent. Files are small: read whole, lines "key = value", '#' or ';'
 * comments. */
#include "store/s3.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = 0;
    return s;
}

/* A value cut short would sign with the wrong key or token: refuse it. */
static int set(char *dst, size_t size, const char *v, bool keep, const char *key, const char *path)
{
    if (strlen(v) >= size) return zc__err(ZC_EINVAL, "%s in %s is longer than %zu bytes", key, path, size - 1);
    if (!keep || !dst[0]) snprintf(dst, size, "%s", v);
    return 0;
}

/* Read the section `section` of an INI file into p (keep: values already set
 * stay). 1 if the section was found, 0 if not or there is no file. */
static int read_section(const char *path, const char *section, s3_profile *p, bool keep)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 0;
        return zc__err_sys(errno, "reading the AWS file %s", path);
    }
    char line[8192];
    int found = 0, rc = 0;
    bool in = false;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        if (!strchr(line, '\n') && !feof(f)) {
            rc = zc__err(ZC_EINVAL, "a line of %s is longer than %zu bytes", path, sizeof line - 2);
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';') continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (end) *end = 0;
            in = !strcmp(trim(s + 1), section);
            found |= in;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!in || !eq) continue;
        *eq = 0;
        char *k = trim(s), *v = trim(eq + 1);
        if (!strcmp(k, "aws_access_key_id")) rc = set(p->key_id, sizeof p->key_id, v, keep, k, path);
        else if (!strcmp(k, "aws_secret_access_key")) rc = set(p->secret, sizeof p->secret, v, keep, k, path);
        else if (!strcmp(k, "aws_session_token")) rc = set(p->token, sizeof p->token, v, keep, k, path);
        else if (!strcmp(k, "region")) rc = set(p->region, sizeof p->region, v, keep, k, path);
        else if (!strcmp(k, "endpoint_url")) rc = set(p->endpoint, sizeof p->endpoint, v, keep, k, path);
    }
    memset(line, 0, sizeof line);
    fclose(f);
    return rc < 0 ? rc : found;
}

int s3_profile_load(s3_profile *p)
{
    *p = (s3_profile){0};
    const char *name = env("AWS_PROFILE");
    if (!name) name = env("AWS_DEFAULT_PROFILE");
    bool named = name != NULL;
    if (!named) name = "default";
    snprintf(p->name, sizeof p->name, "%s", name);
    const char *home = env("HOME");
    char creds[4096] = "", config[4096] = "", section[300];
    if (env("AWS_SHARED_CREDENTIALS_FILE")) snprintf(creds, sizeof creds, "%s", env("AWS_SHARED_CREDENTIALS_FILE"));
    else if (home) snprintf(creds, sizeof creds, "%s/.aws/credentials", home);
    if (env("AWS_CONFIG_FILE")) snprintf(config, sizeof config, "%s", env("AWS_CONFIG_FILE"));
    else if (home) snprintf(config, sizeof config, "%s/.aws/config", home);
    int found = 0, rc;
    if (creds[0]) {
        if ((rc = read_section(creds, name, p, false)) < 0) return rc;
        found += rc;
    }
    if (config[0]) {
        if (strcmp(name, "default")) snprintf(section, sizeof section, "profile %s", name);
        else snprintf(section, sizeof section, "default");
        if ((rc = read_section(config, section, p, true)) < 0) return rc;
        found += rc;
    }
    if (named && !found)
        return zc__err(ZC_EINVAL, "AWS profile '%s' (AWS_PROFILE) is in neither %s nor %s", name,
                       creds[0] ? creds : "(no credentials file)", config[0] ? config : "(no config file)");
    if (!p->key_id[0] != !p->secret[0])
        return zc__err(ZC_EINVAL, "AWS profile '%s' has %s but not %s", name,
                       p->key_id[0] ? "aws_access_key_id" : "aws_secret_access_key",
                       p->key_id[0] ? "aws_secret_access_key" : "aws_access_key_id");
    return 0;
}

void s3_profile_wipe(s3_profile *p)
{
    volatile char *c = (volatile char *)p;
    for (size_t i = 0; i < sizeof *p; i++) c[i] = 0;
}
