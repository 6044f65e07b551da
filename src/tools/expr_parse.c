/* tools/expr_parse.c — lexer and recursive-descent parser of `zcube eval`
 * expressions (grammar in expr.h), and a canonical printer for tests.
 *
 * One function per precedence level. Every node and string is allocated from
 * the tree's arena (a list of blocks freed together), so error paths just
 * return -1 and ex_free cleans up. Nesting is limited to EX_MAX_DEPTH so a
 * hostile "((((...))))" cannot exhaust the stack here or in the evaluator. */
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

/* ------------------------------------------------------------ arena */

typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
} block;

struct ex_tree {
    block *blocks;  /* allocation blocks, newest first */
    ex_node *root;
};

static void *arena_alloc(ex_tree *t, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    block *b = t->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 4096 ? n : 4096;
        b = malloc(sizeof(block) + cap);
        if (!b) return NULL;
        b->next = t->blocks;
        b->used = 0;
        b->cap = cap;
        t->blocks = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void ex_free(ex_tree *t)
{
    if (!t) return;
    for (block *b = t->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(t);
}

const ex_node *ex_root(const ex_tree *t) { return t->root; }

/* ------------------------------------------------------------ lexer */

typedef enum { T_END, T_NUM, T_STR, T_NAME, T_OP } tok_kind;

typedef struct {
    tok_kind kind;
    int col;         /* 1-based */
    const char *p;   /* start in the source */
    size_t len;      /* length in the source */
    char op[4];      /* T_OP: the operator text */
} token;

typedef struct {
    const char *src;
    size_t pos;      /* next byte to lex */
    token tok;       /* current token */
    ex_tree *t;
    int depth;       /* nesting of parse_expr calls */
} parser;

int ex_fail(int col, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cli_seterr("at column %d: %s", col, msg);
}

static const char *const OPS3[] = {"**=", "//=", ">>=", "<<=", "..."};
static const char *const OPS2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=",
                                   "*=", "/=", "%=", "&=", "|=", "^=", "@="};
static const char OPS1[] = "+-*/%@&|^~<>()[],:.=";

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
static int is_name_char(int c) { return isalnum(c) || c == '_'; }

/* A number literal starting at s: its length (digits, '.', exponent, _,
 * letters for prefixes and suffixes; validated by the parser). */
static size_t number_len(const char *s)
{
    size_t i = 0;
    if (s[0] == '0' && s[1] && strchr("xXoObB", s[1])) {
        i = 2;
        while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
        return i;
    }
    while (isdigit((unsigned char)s[i]) || s[i] == '_') i++;
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i]) || s[i] == '_') i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (isdigit((unsigned char)s[j])) {
            i = j;
            while (isdigit((unsigned char)s[i]) || s[i] == '_') i++;
        } else {
            i = j; /* "1e" or "1e+": lexed whole, refused by the parser */
        }
    }
    while (isalnum((unsigned char)s[i]) || s[i] == '_') i++; /* "1j", "12abc": refused later */
    return i;
}

static int lex(parser *ps)
{
    const char *s = ps->src;
    while (s[ps->pos] == ' ' || s[ps->pos] == '\t' || s[ps->pos] == '\n' || s[ps->pos] == '\r') ps->pos++;
    token *tk = &ps->tok;
    memset(tk, 0, sizeof *tk);
    tk->col = (int)ps->pos + 1;
    tk->p = s + ps->pos;
    unsigned char c = (unsigned char)s[ps->pos];
    if (!c) {
        tk->kind = T_END;
        return 0;
    }
    if (isdigit(c) || (c == '.' && isdigit((unsigned char)s[ps->pos + 1]))) {
        tk->kind = T_NUM;
        tk->len = number_len(tk->p);
    } else if (is_name_start(c)) {
        tk->kind = T_NAME;
        size_t i = 0;
        while (is_name_char((unsigned char)tk->p[i])) i++;
        tk->len = i;
    } else if (c == '\'' || c == '"') {
        tk->kind = T_STR;
        size_t i = 1;
        while (tk->p[i] && tk->p[i] != (char)c) {
            if (tk->p[i] == '\\' && tk->p[i + 1]) i++;
            i++;
        }
        if (!tk->p[i]) return ex_fail(tk->col, "unterminated string");
        tk->len = i + 1;
    } else {
        tk->kind = T_OP;
        for (size_t i = 0; i < sizeof OPS3 / sizeof OPS3[0] && !tk->len; i++)
            if (!strncmp(tk->p, OPS3[i], 3)) tk->len = 3;
        for (size_t i = 0; i < sizeof OPS2 / sizeof OPS2[0] && !tk->len; i++)
            if (!strncmp(tk->p, OPS2[i], 2)) tk->len = 2;
        if (!tk->len && strchr(OPS1, c)) tk->len = 1;
        if (!tk->len) {
            if (c >= 0x20 && c < 0x7f) return ex_fail(tk->col, "unexpected character '%c'", c);
            return ex_fail(tk->col, "unexpected character (byte 0x%02x)", c);
        }
        memcpy(tk->op, tk->p, tk->len);
        if (strchr("=", tk->op[tk->len - 1]) && tk->len >= 2 && strcmp(tk->op, "<=") && strcmp(tk->op, ">=") &&
            strcmp(tk->op, "==") && strcmp(tk->op, "!="))
            return ex_fail(tk->col, "assignment '%s' is not an expression", tk->op);
        if (!strcmp(tk->op, "->")) return ex_fail(tk->col, "unexpected '->'");
    }
    ps->pos += tk->len;
    return 0;
}

static int is_op(const parser *ps, const char *op) { return ps->tok.kind == T_OP && !strcmp(ps->tok.op, op); }

static int is_kw(const parser *ps, const char *kw)
{
    return ps->tok.kind == T_NAME && ps->tok.len == strlen(kw) && !strncmp(ps->tok.p, kw, ps->tok.len);
}

/* Describe the current token for "unexpected X" messages. */
static void describe(const parser *ps, char *buf, size_t size)
{
    const token *tk = &ps->tok;
    if (tk->kind == T_END) {
        snprintf(buf, size, "end of expression");
        return;
    }
    int len = tk->len > 40 ? 40 : (int)tk->len;
    snprintf(buf, size, "'%.*s'", len, tk->p);
}

static int unexpected(const parser *ps, const char *wanted)
{
    char what[64];
    describe(ps, what, sizeof what);
    if (wanted) return ex_fail(ps->tok.col, "unexpected %s, expected %s", what, wanted);
    return ex_fail(ps->tok.col, "unexpected %s", what);
}

/* ------------------------------------------------------------ nodes */

static ex_node *node(parser *ps, ex_kind kind, int col)
{
    ex_node *n = arena_alloc(ps->t, sizeof *n);
    if (!n) {
        cli_seterr("out of memory parsing the expression");
        return NULL;
    }
    n->kind = kind;
    n->col = col;
    n->height = 1;
    return n;
}

static int height_of(const ex_node *n) { return n ? n->height : 0; }

/* Set a node's height from its children, refusing trees too tall for the
 * recursive evaluator and printer (long chains like a+a+...+a). */
static int seal(ex_node *n)
{
    int h = height_of(n->a);
    if (height_of(n->b) > h) h = height_of(n->b);
    if (height_of(n->c) > h) h = height_of(n->c);
    for (int i = 0; i < n->nitems; i++)
        if (height_of(n->items[i]) > h) h = height_of(n->items[i]);
    for (int i = 0; i < n->nkw; i++)
        if (height_of(n->kwvalues[i]) > h) h = height_of(n->kwvalues[i]);
    n->height = h + 1;
    if (n->height > EX_MAX_HEIGHT)
        return ex_fail(n->col, "expression too long (more than %d nested operations)", EX_MAX_HEIGHT);
    return 0;
}

static char *arena_strndup(parser *ps, const char *s, size_t len)
{
    char *d = arena_alloc(ps->t, len + 1);
    if (!d) {
        cli_seterr("out of memory parsing the expression");
        return NULL;
    }
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

/* A growable list of node pointers in the arena (old arrays are abandoned to
 * the arena on growth: lists are short). */
typedef struct {
    ex_node **v;
    int n, cap;
} nlist;

static int nlist_push(parser *ps, nlist *l, ex_node *x)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        if (cap > 1 << 20) return ex_fail(x->col, "too many items");
        ex_node **v = arena_alloc(ps->t, (size_t)cap * sizeof *v);
        if (!v) return cli_seterr("out of memory parsing the expression");
        if (l->n) memcpy(v, l->v, (size_t)l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

/* ------------------------------------------------------------ parser */

static int parse_expr(parser *ps, ex_node **out);

static const char *const UNSUPPORTED_KW[] = {"if",    "else",  "lambda", "for",   "in",    "is",     "yield",
                                             "await", "async", "def",    "class", "return", "import", "from",
                                             "while", "with",  "del",    "pass",  "global", "assert"};

static int number_literal(parser *ps, ex_node **out)
{
    const token *tk = &ps->tok;
    char text[128];
    size_t k = 0;
    if (tk->len >= sizeof text) return ex_fail(tk->col, "number literal too long");
    /* Underscores: only between digits, as in Python. */
    for (size_t i = 0; i < tk->len; i++) {
        char c = tk->p[i];
        if (c == '_') {
            if (i == 0 || i + 1 >= tk->len || !isxdigit((unsigned char)tk->p[i - 1]) ||
                !isxdigit((unsigned char)tk->p[i + 1]))
                return ex_fail(tk->col, "invalid number '%.*s'", (int)tk->len, tk->p);
            continue;
        }
        text[k++] = c;
    }
    text[k] = 0;
    ex_node *n = node(ps, EX_NUM, tk->col);
    if (!n) return -1;
    char last = text[k - 1];
    if (last == 'j' || last == 'J') return ex_fail(tk->col, "complex literals ('%s') are not supported", text);
    int base = 10;
    const char *digits = text;
    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16;
    if (text[0] == '0' && (text[1] == 'o' || text[1] == 'O')) base = 8;
    if (text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) base = 2;
    if (base != 10) digits = text + 2;
    int is_float = base == 10 && strpbrk(text, ".eE") != NULL;
    char *end;
    errno = 0;
    if (is_float) {
        n->fval = strtod(text, &end);
        if (*end || end == text) return ex_fail(tk->col, "invalid number '%s'", text);
        if (errno == ERANGE && isinf(n->fval)) return ex_fail(tk->col, "number '%s' is too large", text);
        if (errno == ERANGE) errno = 0; /* underflow to 0 or a subnormal: Python accepts it */
    } else {
        if (!*digits) return ex_fail(tk->col, "invalid number '%s'", text);
        for (const char *p = digits; *p; p++) {
            int v = isdigit((unsigned char)*p) ? *p - '0' : isalpha((unsigned char)*p) ? tolower(*p) - 'a' + 10 : 99;
            if (v >= base) return ex_fail(tk->col, "invalid number '%s'", text);
        }
        if (base == 10 && text[0] == '0' && text[1])
            for (const char *p = text; *p; p++)
                if (*p != '0') return ex_fail(tk->col, "invalid number '%s' (leading zeros)", text);
        unsigned long long v = strtoull(digits, &end, base);
        if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
            return ex_fail(tk->col, "integer %s is too large (limit 2**63 - 1)", text);
        n->is_int = 1;
        n->ival = (int64_t)v;
        n->fval = (double)v;
    }
    *out = n;
    return lex(ps);
}

static int string_literal(parser *ps, ex_node **out)
{
    const token *tk = &ps->tok;
    ex_node *n = node(ps, EX_STR, tk->col);
    if (!n) return -1;
    char *s = arena_strndup(ps, tk->p + 1, tk->len - 2);
    if (!s) return -1;
    size_t k = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] != '\\') {
            s[k++] = s[i];
            continue;
        }
        char e = s[++i];
        switch (e) {
        case 'n': s[k++] = '\n'; break;
        case 't': s[k++] = '\t'; break;
        case '\\': case '\'': case '"': s[k++] = e; break;
        default: return ex_fail(tk->col + (int)i, "unsupported escape '\\%c' in string", e ? e : ' ');
        }
    }
    s[k] = 0;
    n->str = s;
    *out = n;
    return lex(ps);
}

/* Items of a parenthesized or bracketed display, after the opening token. */
static int display(parser *ps, int col, const char *close, ex_node **out)
{
    nlist items = {0};
    int comma = 0;
    while (!is_op(ps, close)) {
        ex_node *x = NULL;
        if (parse_expr(ps, &x) < 0) return -1;
        if (nlist_push(ps, &items, x) < 0) return -1;
        if (is_op(ps, ",")) {
            comma = 1;
            if (lex(ps) < 0) return -1;
        } else if (!is_op(ps, close)) {
            return unexpected(ps, !strcmp(close, ")") ? "',' or ')'" : "',' or ']'");
        }
    }
    if (lex(ps) < 0) return -1;
    if (!strcmp(close, ")") && items.n == 1 && !comma) {
        *out = items.v[0]; /* plain parentheses */
        return 0;
    }
    ex_node *t = node(ps, EX_TUPLE, col);
    if (!t) return -1;
    t->items = items.v;
    t->nitems = items.n;
    t->parens = strcmp(close, "]") ? 1 : 2;
    if (seal(t) < 0) return -1;
    *out = t;
    return 0;
}

static int parse_atom(parser *ps, ex_node **out)
{
    const token *tk = &ps->tok;
    int col = tk->col;
    switch (tk->kind) {
    case T_END: return unexpected(ps, "a value");
    case T_NUM: return number_literal(ps, out);
    case T_STR: return string_literal(ps, out);
    case T_NAME: {
        for (size_t i = 0; i < sizeof UNSUPPORTED_KW / sizeof UNSUPPORTED_KW[0]; i++)
            if (is_kw(ps, UNSUPPORTED_KW[i])) {
                if (!strcmp(UNSUPPORTED_KW[i], "if") || !strcmp(UNSUPPORTED_KW[i], "else"))
                    return ex_fail(col, "conditional expressions are not supported; use where(cond, a, b)");
                return ex_fail(col, "keyword '%s' is not supported in expressions", UNSUPPORTED_KW[i]);
            }
        if (is_kw(ps, "and") || is_kw(ps, "or") || is_kw(ps, "not")) return unexpected(ps, "a value");
        ex_node *n;
        if (is_kw(ps, "None")) {
            n = node(ps, EX_NONE, col);
        } else if (is_kw(ps, "True") || is_kw(ps, "False")) {
            n = node(ps, EX_BOOL, col);
            if (n) n->ival = is_kw(ps, "True");
        } else {
            n = node(ps, EX_NAME, col);
            if (n && !(n->str = arena_strndup(ps, tk->p, tk->len))) return -1;
        }
        if (!n) return -1;
        *out = n;
        return lex(ps);
    }
    case T_OP:
        if (is_op(ps, "...")) {
            if (!(*out = node(ps, EX_ELLIPSIS, col))) return -1;
            return lex(ps);
        }
        if (is_op(ps, "(") || is_op(ps, "[")) {
            const char *close = is_op(ps, "(") ? ")" : "]";
            if (lex(ps) < 0) return -1;
            return display(ps, col, close, out);
        }
        return unexpected(ps, "a value");
    }
    return unexpected(ps, "a value");
}

/* One subscript entry: an expression or a slice. */
static int parse_sub(parser *ps, ex_node **out)
{
    int col = ps->tok.col;
    ex_node *parts[3] = {NULL, NULL, NULL};
    if (!is_op(ps, ":")) {
        if (parse_expr(ps, &parts[0]) < 0) return -1;
        if (!is_op(ps, ":")) {
            *out = parts[0];
            return 0;
        }
    }
    for (int k = 1; k < 3 && is_op(ps, ":"); k++) {
        if (lex(ps) < 0) return -1;
        if (!is_op(ps, ":") && !is_op(ps, ",") && !is_op(ps, "]"))
            if (parse_expr(ps, &parts[k]) < 0) return -1;
    }
    ex_node *s = node(ps, EX_SLICE, col);
    if (!s) return -1;
    s->a = parts[0];
    s->b = parts[1];
    s->c = parts[2];
    if (seal(s) < 0) return -1;
    *out = s;
    return 0;
}

static int parse_subscript(parser *ps, ex_node *value, int col, ex_node **out)
{
    nlist items = {0};
    int comma = 0;
    if (is_op(ps, "]")) return ex_fail(ps->tok.col, "empty subscript []");
    while (!is_op(ps, "]")) {
        ex_node *x = NULL;
        if (parse_sub(ps, &x) < 0) return -1;
        if (nlist_push(ps, &items, x) < 0) return -1;
        if (is_op(ps, ",")) {
            comma = 1;
            if (lex(ps) < 0) return -1;
        } else if (!is_op(ps, "]")) {
            return unexpected(ps, "',' or ']'");
        }
    }
    if (lex(ps) < 0) return -1;
    ex_node *n = node(ps, EX_SUBSCRIPT, col);
    if (!n) return -1;
    n->a = value;
    if (items.n == 1 && !comma) {
        n->b = items.v[0];
    } else {
        ex_node *t = node(ps, EX_TUPLE, items.v[0]->col);
        if (!t) return -1;
        t->items = items.v;
        t->nitems = items.n;
        if (seal(t) < 0) return -1;
        n->b = t;
    }
    if (seal(n) < 0) return -1;
    *out = n;
    return 0;
}

static int parse_call(parser *ps, ex_node *fn, int col, ex_node **out)
{
    nlist args = {0}, kwv = {0};
    char **kwn = NULL;
    int *kwc = NULL;
    int kwcap = 0;
    while (!is_op(ps, ")")) {
        /* keyword argument: NAME '=' (the lexer never makes '==' into '=') */
        if (ps->tok.kind == T_NAME && ps->src[ps->pos] != 0) {
            size_t q = ps->pos;
            while (ps->src[q] == ' ' || ps->src[q] == '\t') q++;
            if (ps->src[q] == '=' && ps->src[q + 1] != '=') {
                int kcol = ps->tok.col;
                char *name = arena_strndup(ps, ps->tok.p, ps->tok.len);
                if (!name) return -1;
                for (int i = 0; i < kwv.n; i++)
                    if (!strcmp(kwn[i], name)) return ex_fail(kcol, "keyword argument '%s' repeated", name);
                if (lex(ps) < 0 || lex(ps) < 0) return -1; /* NAME, '=' */
                ex_node *v;
                if (parse_expr(ps, &v) < 0) return -1;
                if (kwv.n == kwcap) {
                    int cap = kwcap ? 2 * kwcap : 4;
                    char **nn = arena_alloc(ps->t, (size_t)cap * sizeof *nn);
                    int *nc = arena_alloc(ps->t, (size_t)cap * sizeof *nc);
                    if (!nn || !nc) return cli_seterr("out of memory parsing the expression");
                    if (kwv.n) {
                        memcpy(nn, kwn, (size_t)kwv.n * sizeof *nn);
                        memcpy(nc, kwc, (size_t)kwv.n * sizeof *nc);
                    }
                    kwn = nn;
                    kwc = nc;
                    kwcap = cap;
                }
                kwn[kwv.n] = name;
                kwc[kwv.n] = kcol;
                if (nlist_push(ps, &kwv, v) < 0) return -1;
                goto next;
            }
        }
        {
            int acol = ps->tok.col;
            ex_node *x = NULL;
            if (parse_expr(ps, &x) < 0) return -1;
            if (kwv.n) return ex_fail(acol, "positional argument after keyword argument");
            if (nlist_push(ps, &args, x) < 0) return -1;
        }
    next:
        if (is_op(ps, ",")) {
            if (lex(ps) < 0) return -1;
        } else if (!is_op(ps, ")")) {
            return unexpected(ps, "',' or ')'");
        }
    }
    if (lex(ps) < 0) return -1;
    ex_node *n = node(ps, EX_CALL, col);
    if (!n) return -1;
    n->a = fn;
    n->items = args.v;
    n->nitems = args.n;
    n->kwnames = kwn;
    n->kwvalues = kwv.v;
    n->kwcols = kwc;
    n->nkw = kwv.n;
    if (seal(n) < 0) return -1;
    *out = n;
    return 0;
}

static int parse_primary(parser *ps, ex_node **out)
{
    ex_node *x = NULL;
    if (parse_atom(ps, &x) < 0) return -1;
    for (;;) {
        if (is_op(ps, "(")) {
            if (lex(ps) < 0 || parse_call(ps, x, x->col, &x) < 0) return -1;
        } else if (is_op(ps, "[")) {
            if (lex(ps) < 0 || parse_subscript(ps, x, x->col, &x) < 0) return -1;
        } else if (is_op(ps, ".")) {
            if (lex(ps) < 0) return -1;
            if (ps->tok.kind != T_NAME) return unexpected(ps, "a name after '.'");
            ex_node *n = node(ps, EX_ATTR, x->col);
            if (!n || !(n->str = arena_strndup(ps, ps->tok.p, ps->tok.len))) return -1;
            n->a = x;
            if (seal(n) < 0) return -1;
            x = n;
            if (lex(ps) < 0) return -1;
        } else {
            break;
        }
    }
    *out = x;
    return 0;
}

static ex_node *binary(parser *ps, ex_op op, int col, ex_node *a, ex_node *b)
{
    ex_node *n = node(ps, EX_BINARY, col);
    if (!n) return NULL;
    n->op = op;
    n->a = a;
    n->b = b;
    if (seal(n) < 0) return NULL;
    return n;
}

static int parse_factor(parser *ps, ex_node **out);

static int parse_power(parser *ps, ex_node **out)
{
    ex_node *x = NULL;
    if (parse_primary(ps, &x) < 0) return -1;
    if (is_op(ps, "**")) {
        int col = ps->tok.col;
        if (++ps->depth > EX_MAX_DEPTH) return ex_fail(col, "expression nested too deeply (limit %d)", EX_MAX_DEPTH);
        ex_node *y = NULL;
        if (lex(ps) < 0 || parse_factor(ps, &y) < 0) return -1;
        ps->depth--;
        if (!(x = binary(ps, EX_OP_POW, col, x, y))) return -1;
    }
    *out = x;
    return 0;
}

static int parse_factor(parser *ps, ex_node **out)
{
    ex_op op;
    if (is_op(ps, "-")) op = EX_OP_NEG;
    else if (is_op(ps, "+")) op = EX_OP_POS;
    else if (is_op(ps, "~")) op = EX_OP_INVERT;
    else return parse_power(ps, out);
    int col = ps->tok.col;
    if (++ps->depth > EX_MAX_DEPTH) return ex_fail(col, "expression nested too deeply (limit %d)", EX_MAX_DEPTH);
    ex_node *x = NULL;
    if (lex(ps) < 0 || parse_factor(ps, &x) < 0) return -1;
    ps->depth--;
    ex_node *n = node(ps, EX_UNARY, col);
    if (!n) return -1;
    n->op = op;
    n->a = x;
    if (seal(n) < 0) return -1;
    *out = n;
    return 0;
}

/* The binary levels from term up to bor: each a left-associative chain. */
typedef struct {
    const char *text;
    ex_op op;
} opdef;

static const opdef TERM_OPS[] = {{"*", EX_OP_MUL}, {"@", EX_OP_MATMUL}, {"/", EX_OP_DIV}, {"//", EX_OP_FLOORDIV},
                                 {"%", EX_OP_MOD}, {NULL, 0}};
static const opdef ARITH_OPS[] = {{"+", EX_OP_ADD}, {"-", EX_OP_SUB}, {NULL, 0}};
static const opdef SHIFT_OPS[] = {{"<<", EX_OP_LSHIFT}, {">>", EX_OP_RSHIFT}, {NULL, 0}};
static const opdef BAND_OPS[] = {{"&", EX_OP_BITAND}, {NULL, 0}};
static const opdef BXOR_OPS[] = {{"^", EX_OP_BITXOR}, {NULL, 0}};
static const opdef BOR_OPS[] = {{"|", EX_OP_BITOR}, {NULL, 0}};
static const opdef *const LEVELS[] = {BOR_OPS, BXOR_OPS, BAND_OPS, SHIFT_OPS, ARITH_OPS, TERM_OPS};
#define NLEVELS ((int)(sizeof LEVELS / sizeof LEVELS[0]))

static int parse_level(parser *ps, int level, ex_node **out)
{
    if (level == NLEVELS) return parse_factor(ps, out);
    ex_node *x = NULL;
    if (parse_level(ps, level + 1, &x) < 0) return -1;
    for (;;) {
        const opdef *hit = NULL;
        for (const opdef *d = LEVELS[level]; d->text; d++)
            if (is_op(ps, d->text)) hit = d;
        if (!hit) break;
        int col = ps->tok.col;
        ex_node *y = NULL;
        if (lex(ps) < 0 || parse_level(ps, level + 1, &y) < 0) return -1;
        if (!(x = binary(ps, hit->op, col, x, y))) return -1;
    }
    *out = x;
    return 0;
}

static const opdef CMP_OPS[] = {{"<", EX_OP_LT},  {"<=", EX_OP_LE}, {">", EX_OP_GT},
                                {">=", EX_OP_GE}, {"==", EX_OP_EQ}, {"!=", EX_OP_NE}, {NULL, 0}};

static const opdef *cmp_op(const parser *ps)
{
    for (const opdef *d = CMP_OPS; d->text; d++)
        if (is_op(ps, d->text)) return d;
    return NULL;
}

static int parse_comparison(parser *ps, ex_node **out)
{
    ex_node *x = NULL;
    if (parse_level(ps, 0, &x) < 0) return -1;
    if (is_kw(ps, "in") || is_kw(ps, "not"))
        return ex_fail(ps->tok.col, "operators 'in' and 'not in' are not supported");
    if (is_kw(ps, "is")) return ex_fail(ps->tok.col, "operator 'is' is not supported; use ==");
    const opdef *d = cmp_op(ps);
    if (d) {
        int col = ps->tok.col;
        ex_node *y = NULL;
        if (lex(ps) < 0 || parse_level(ps, 0, &y) < 0) return -1;
        if (cmp_op(ps))
            return ex_fail(ps->tok.col, "chained comparisons (a < b < c) are not supported; use (a < b) & (b < c)");
        if (!(x = binary(ps, d->op, col, x, y))) return -1;
    }
    *out = x;
    return 0;
}

static int parse_not(parser *ps, ex_node **out)
{
    if (!is_kw(ps, "not")) return parse_comparison(ps, out);
    int col = ps->tok.col;
    if (++ps->depth > EX_MAX_DEPTH) return ex_fail(col, "expression nested too deeply (limit %d)", EX_MAX_DEPTH);
    ex_node *x = NULL;
    if (lex(ps) < 0 || parse_not(ps, &x) < 0) return -1;
    ps->depth--;
    ex_node *n = node(ps, EX_UNARY, col);
    if (!n) return -1;
    n->op = EX_OP_NOT;
    n->a = x;
    if (seal(n) < 0) return -1;
    *out = n;
    return 0;
}

static int parse_and(parser *ps, ex_node **out)
{
    ex_node *x = NULL;
    if (parse_not(ps, &x) < 0) return -1;
    while (is_kw(ps, "and")) {
        int col = ps->tok.col;
        ex_node *y = NULL;
        if (lex(ps) < 0 || parse_not(ps, &y) < 0) return -1;
        if (!(x = binary(ps, EX_OP_AND, col, x, y))) return -1;
    }
    *out = x;
    return 0;
}

static int parse_expr(parser *ps, ex_node **out)
{
    if (++ps->depth > EX_MAX_DEPTH)
        return ex_fail(ps->tok.col, "expression nested too deeply (limit %d)", EX_MAX_DEPTH);
    ex_node *x = NULL;
    if (parse_and(ps, &x) < 0) return -1;
    while (is_kw(ps, "or")) {
        int col = ps->tok.col;
        ex_node *y = NULL;
        if (lex(ps) < 0 || parse_and(ps, &y) < 0) return -1;
        if (!(x = binary(ps, EX_OP_OR, col, x, y))) return -1;
    }
    if (is_kw(ps, "if"))
        return ex_fail(ps->tok.col, "conditional expressions are not supported; use where(cond, a, b)");
    ps->depth--;
    *out = x;
    return 0;
}

int ex_parse(const char *src, ex_tree **out)
{
    *out = NULL;
    ex_tree *t = calloc(1, sizeof *t);
    if (!t) return cli_seterr("out of memory parsing the expression");
    parser ps = {.src = src, .t = t};
    if (lex(&ps) < 0) goto fail;
    if (ps.tok.kind == T_END) {
        ex_fail(1, "empty expression");
        goto fail;
    }
    ex_node *root;
    if (parse_expr(&ps, &root) < 0) goto fail;
    if (is_op(&ps, ",")) {
        /* a bare tuple "a, b" at the top: parse it for a clear message later */
        nlist items = {0};
        if (nlist_push(&ps, &items, root) < 0) goto fail;
        int col = root->col;
        while (is_op(&ps, ",")) {
            if (lex(&ps) < 0) goto fail;
            if (ps.tok.kind == T_END) break;
            ex_node *x = NULL;
            if (parse_expr(&ps, &x) < 0 || nlist_push(&ps, &items, x) < 0) goto fail;
        }
        if (!(root = node(&ps, EX_TUPLE, col))) goto fail;
        root->items = items.v;
        root->nitems = items.n;
        if (seal(root) < 0) goto fail;
    }
    if (ps.tok.kind != T_END) {
        unexpected(&ps, NULL);
        goto fail;
    }
    t->root = root;
    *out = t;
    return 0;
fail:
    ex_free(t);
    return -1;
}

/* ------------------------------------------------------------ operators */

static const struct {
    const char *text, *function;
} OPINFO[EX_OP_COUNT_] = {
    [EX_OP_ADD] = {"+", "add"},
    [EX_OP_SUB] = {"-", "subtract"},
    [EX_OP_MUL] = {"*", "multiply"},
    [EX_OP_MATMUL] = {"@", "matmul"},
    [EX_OP_DIV] = {"/", "divide"},
    [EX_OP_FLOORDIV] = {"//", "floor_divide"},
    [EX_OP_MOD] = {"%", "remainder"},
    [EX_OP_POW] = {"**", "pow"},
    [EX_OP_LSHIFT] = {"<<", "bitwise_left_shift"},
    [EX_OP_RSHIFT] = {">>", "bitwise_right_shift"},
    [EX_OP_BITAND] = {"&", "bitwise_and"},
    [EX_OP_BITXOR] = {"^", "bitwise_xor"},
    [EX_OP_BITOR] = {"|", "bitwise_or"},
    [EX_OP_LT] = {"<", "less"},
    [EX_OP_LE] = {"<=", "less_equal"},
    [EX_OP_GT] = {">", "greater"},
    [EX_OP_GE] = {">=", "greater_equal"},
    [EX_OP_EQ] = {"==", "equal"},
    [EX_OP_NE] = {"!=", "not_equal"},
    [EX_OP_AND] = {"and", "logical_and"},
    [EX_OP_OR] = {"or", "logical_or"},
    [EX_OP_NEG] = {"-", "negative"},
    [EX_OP_POS] = {"+", "positive"},
    [EX_OP_INVERT] = {"~", "bitwise_invert"},
    [EX_OP_NOT] = {"not", "logical_not"},
};

const char *ex_op_text(ex_op op) { return op < EX_OP_COUNT_ ? OPINFO[op].text : "?"; }
const char *ex_op_function(ex_op op) { return op < EX_OP_COUNT_ ? OPINFO[op].function : "?"; }

/* ------------------------------------------------------------ printer */

typedef struct {
    char *buf;
    size_t size, len;
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = o->len < o->size ? o->buf + o->len : NULL;
    size_t room = o->len < o->size ? o->size - o->len : 0;
    int w = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (w > 0) o->len += (size_t)w;
}

static void fmt_node(out_t *o, const ex_node *n);

static void fmt_list(out_t *o, ex_node *const *v, int n)
{
    for (int i = 0; i < n; i++) {
        if (i) put(o, ", ");
        fmt_node(o, v[i]);
    }
}

static void fmt_node(out_t *o, const ex_node *n)
{
    switch (n->kind) {
    case EX_NUM:
        if (n->is_int) put(o, "%lld", (long long)n->ival);
        else put(o, "%.17g", n->fval);
        break;
    case EX_STR: put(o, "'%s'", n->str); break;
    case EX_NAME: put(o, "%s", n->str); break;
    case EX_NONE: put(o, "None"); break;
    case EX_BOOL: put(o, n->ival ? "True" : "False"); break;
    case EX_ELLIPSIS: put(o, "..."); break;
    case EX_TUPLE:
        put(o, "(");
        fmt_list(o, n->items, n->nitems);
        put(o, n->nitems == 1 ? ",)" : ")");
        break;
    case EX_SLICE:
        if (n->a) fmt_node(o, n->a);
        put(o, ":");
        if (n->b) fmt_node(o, n->b);
        if (n->c) {
            put(o, ":");
            fmt_node(o, n->c);
        }
        break;
    case EX_CALL:
        fmt_node(o, n->a);
        put(o, "(");
        fmt_list(o, n->items, n->nitems);
        for (int i = 0; i < n->nkw; i++) {
            put(o, "%s%s=", n->nitems || i ? ", " : "", n->kwnames[i]);
            fmt_node(o, n->kwvalues[i]);
        }
        put(o, ")");
        break;
    case EX_ATTR:
        fmt_node(o, n->a);
        put(o, ".%s", n->str);
        break;
    case EX_SUBSCRIPT:
        fmt_node(o, n->a);
        put(o, "[");
        if (n->b->kind == EX_TUPLE && !n->b->parens) fmt_list(o, n->b->items, n->b->nitems);
        else fmt_node(o, n->b);
        put(o, "]");
        break;
    case EX_UNARY:
        put(o, n->op == EX_OP_NOT ? "(not " : "(%s", ex_op_text(n->op));
        fmt_node(o, n->a);
        put(o, ")");
        break;
    case EX_BINARY:
        put(o, "(");
        fmt_node(o, n->a);
        put(o, " %s ", ex_op_text(n->op));
        fmt_node(o, n->b);
        put(o, ")");
        break;
    }
}

size_t ex_format(const ex_node *n, char *buf, size_t size)
{
    out_t o = {buf, size, 0};
    if (size) buf[0] = 0;
    fmt_node(&o, n);
    return o.len;
}
