/* tools/expr_bind.c — a call: the function's name (a NAME or a dotted
 * name), its arguments bound to the table's parameters (positional, then
 * keywords, with Python's errors at the argument's column), evaluated, and
 * given to the handler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

/* The parameter names of a definition: names[i] is the canonical name,
 * alt[i] another accepted keyword (or NULL). */
static int split_params(const char *spec, char names[EX_MAXPARAMS][24], char alt[EX_MAXPARAMS][24])
{
    int n = 0;
    const char *p = spec;
    while (*p && n < EX_MAXPARAMS) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *bar = memchr(p, '|', len);
        size_t l1 = bar ? (size_t)(bar - p) : len;
        snprintf(names[n], 24, "%.*s", (int)l1, p);
        alt[n][0] = 0;
        if (bar) snprintf(alt[n], 24, "%.*s", (int)(len - l1 - 1), bar + 1);
        n++;
        if (!end) break;
        p = end + 1;
    }
    return n;
}

int ex_eval_call(ex_ctx *e, const ex_node *n, ex_value *out)
{
    /* the function's name: a NAME or a dotted name (random.uniform) */
    char name[128];
    const ex_node *fn = n->a;
    if (fn->kind == EX_NAME) {
        snprintf(name, sizeof name, "%s", fn->str);
    } else if (fn->kind == EX_ATTR && fn->a->kind == EX_NAME) {
        snprintf(name, sizeof name, "%s.%s", fn->a->str, fn->str);
    } else {
        return ex_fail(fn->col, "only named functions can be called");
    }
    if (fn->kind == EX_NAME)
        for (int i = 0; i < e->nvars; i++)
            if (!strcmp(e->vars[i].name, name)) return ex_fail(fn->col, "'%s' is an array, not a function", name);
    ex_fdef tmp;
    const ex_fdef *f = ex_find_function(name, &tmp);
    if (!f) {
        if (ex_is_unavailable(name)) return ex_fail(fn->col, "function '%s' is not available", name);
        const char *s = ex_suggest(name);
        if (s) return ex_fail(fn->col, "unknown function '%s' (did you mean '%s'?)", name, s);
        return ex_fail(fn->col, "unknown function '%s'", name);
    }

    /* bind arguments to parameters */
    char names[EX_MAXPARAMS][24], alt[EX_MAXPARAMS][24];
    int np = split_params(f->params, names, alt);
    const ex_node *bound[EX_MAXPARAMS] = {NULL};
    if (n->nitems > f->npos) {
        const ex_node *x = n->items[f->npos];
        if (f->npos == f->nreq && f->nreq == np)
            return ex_fail(x->col, "%s() takes %d argument%s, got %d", name, f->npos, f->npos == 1 ? "" : "s",
                        n->nitems);
        return ex_fail(x->col, "%s() takes at most %d positional argument%s, got %d (give the others by keyword: %s)",
                    name, f->npos, f->npos == 1 ? "" : "s", n->nitems, f->params);
    }
    for (int i = 0; i < n->nitems; i++) bound[i] = n->items[i];
    for (int k = 0; k < n->nkw; k++) {
        int hit = -1;
        for (int i = 0; i < np && hit < 0; i++)
            if (!strcmp(names[i], n->kwnames[k]) || (alt[i][0] && !strcmp(alt[i], n->kwnames[k]))) hit = i;
        if (hit < 0) {
            char list[200];
            snprintf(list, sizeof list, "%s", f->params);
            for (char *c = list; *c; c++)
                if (*c == ',') *c = ' ';
            return ex_fail(n->kwcols[k], "%s() got an unexpected keyword argument '%s' (parameters: %s)", name,
                        n->kwnames[k], list);
        }
        if (bound[hit])
            return ex_fail(n->kwcols[k], "%s() got multiple values for argument '%s'", name, names[hit]);
        bound[hit] = n->kwvalues[k];
    }
    for (int i = 0; i < f->nreq; i++)
        if (!bound[i]) {
            int col = n->nitems ? n->items[n->nitems - 1]->col : n->col;
            return ex_fail(col, "%s() missing required argument '%s' (takes %s)", name, names[i], f->params);
        }

    /* evaluate the arguments (absent ones are V_NONE with the call's column) */
    ex_value args[EX_MAXPARAMS];
    memset(args, 0, sizeof args);
    int rc = 0;
    for (int i = 0; i < np; i++) {
        if (bound[i]) {
            if ((rc = ex_eval_node(e, bound[i], &args[i])) < 0) break;
        } else {
            args[i].kind = V_NONE;
            args[i].col = n->col;
        }
    }
    if (rc == 0) {
        ex_fdef named = *f;
        named.name = name;
        rc = f->fn(e, &named, n, args, out);
        if (rc == 0) out->col = n->col;
    }
    for (int i = 0; i < np; i++) ex_value_clear(&args[i]);
    return rc;
}
