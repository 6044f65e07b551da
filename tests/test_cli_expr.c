/* tests/test_cli_expr.c — unit tests of the `zcube eval` expression parser
 * (src/tools/expr_parse.c): Python precedence and associativity, tuples, slices,
 * calls with keywords, literals, and errors that name the column. */
#include <stdint.h>

#include "cli_util.h"
#include "expr.h"
#include "harness.h"

/* Parse `src` and compare its canonical form with `want`. */
static int parses_as(const char *src, const char *want)
{
    ex_tree *t;
    if (ex_parse(src, &t) < 0) {
        fprintf(stderr, "  parse of \"%s\" failed: %s\n", src, cli_lasterr());
        return 0;
    }
    char buf[1024];
    size_t n = ex_format(ex_root(t), buf, sizeof buf);
    int ok = n < sizeof buf && !strcmp(buf, want);
    if (!ok) fprintf(stderr, "  \"%s\" parsed as \"%s\", expected \"%s\"\n", src, buf, want);
    ex_free(t);
    return ok;
}

/* Parse must fail with a message containing `needle` (which includes the column). */
static int fails_with(const char *src, const char *needle)
{
    ex_tree *t;
    if (ex_parse(src, &t) == 0) {
        fprintf(stderr, "  \"%s\" parsed, expected an error with \"%s\"\n", src, needle);
        ex_free(t);
        return 0;
    }
    if (!strstr(cli_lasterr(), needle)) {
        fprintf(stderr, "  \"%s\": message \"%s\" lacks \"%s\"\n", src, cli_lasterr(), needle);
        return 0;
    }
    return 1;
}

TEST(expr_precedence_arith)
{
    CHECK(parses_as("a + b * c", "(a + (b * c))"));
    CHECK(parses_as("a * b + c", "((a * b) + c)"));
    CHECK(parses_as("a - b - c", "((a - b) - c)"));
    CHECK(parses_as("a / b / c", "((a / b) / c)"));
    CHECK(parses_as("a // b % c * d", "(((a // b) % c) * d)"));
    CHECK(parses_as("(a + b) * c", "((a + b) * c)"));
    CHECK(parses_as("a @ b + c", "((a @ b) + c)"));
    /* ** is right associative and binds tighter than unary minus on its left */
    CHECK(parses_as("a ** b ** c", "(a ** (b ** c))"));
    CHECK(parses_as("-a ** 2", "(-(a ** 2))"));
    CHECK(parses_as("a ** -b", "(a ** (-b))"));
    CHECK(parses_as("2 * -a ** -2", "(2 * (-(a ** (-2))))"));
    CHECK(parses_as("--a", "(-(-a))"));
    CHECK(parses_as("+a - ~b", "((+a) - (~b))"));
    CHECK(parses_as("a.b ** 2", "(a.b ** 2)"));
}

TEST(expr_precedence_bitwise_compare_logic)
{
    CHECK(parses_as("a | b ^ c & d", "(a | (b ^ (c & d)))"));
    CHECK(parses_as("a & b << 2", "(a & (b << 2))"));
    CHECK(parses_as("a << b + c", "(a << (b + c))"));
    CHECK(parses_as("a >> 1 >> 2", "((a >> 1) >> 2)"));
    CHECK(parses_as("a < b | c", "(a < (b | c))"));
    CHECK(parses_as("a + 1 >= b * 2", "((a + 1) >= (b * 2))"));
    CHECK(parses_as("a == b", "(a == b)"));
    CHECK(parses_as("a != -b", "(a != (-b))"));
    CHECK(parses_as("a < b and b < c or d", "(((a < b) and (b < c)) or d)"));
    CHECK(parses_as("not a == b", "(not (a == b))"));
    CHECK(parses_as("not a and not b", "((not a) and (not b))"));
    CHECK(parses_as("a or b or c", "((a or b) or c)"));
    CHECK(parses_as("(a < b) & (b <= c)", "((a < b) & (b <= c))"));
}

TEST(expr_literals)
{
    CHECK(parses_as("1", "1"));
    CHECK(parses_as("1_000_000", "1000000"));
    CHECK(parses_as("0x1F + 0o17 + 0b101", "((31 + 15) + 5)"));
    CHECK(parses_as("1.5", "1.5"));
    CHECK(parses_as(".5", "0.5"));
    CHECK(parses_as("1e-3", "0.001"));
    CHECK(parses_as("2E+2", "200"));   /* a float printed with %g */
    CHECK(parses_as("1.", "1"));
    CHECK(parses_as("9223372036854775807", "9223372036854775807"));
    CHECK(parses_as("'float32'", "'float32'"));
    CHECK(parses_as("\"ortho\"", "'ortho'"));
    CHECK(parses_as("'a\\'b'", "'a'b'"));
    CHECK(parses_as("None", "None"));
    CHECK(parses_as("True + False", "(True + False)"));
    CHECK(parses_as("...", "..."));

    ex_tree *t;
    CHECK(ex_parse("2.5", &t) == 0);
    CHECK(!ex_root(t)->is_int && ex_root(t)->fval == 2.5 && ex_root(t)->kind == EX_NUM);
    ex_free(t);
    CHECK(ex_parse("42", &t) == 0);
    CHECK(ex_root(t)->is_int && ex_root(t)->ival == 42);
    ex_free(t);
    CHECK(ex_parse("1e-400", &t) == 0); /* underflows to 0 like Python */
    CHECK(ex_root(t)->fval == 0.0);
    ex_free(t);
}

TEST(expr_tuples_and_lists)
{
    CHECK(parses_as("(1, 2)", "(1, 2)"));
    CHECK(parses_as("(1,)", "(1,)"));
    CHECK(parses_as("()", "()"));
    CHECK(parses_as("(1)", "1"));
    CHECK(parses_as("[1, 2, 3,]", "(1, 2, 3)"));
    CHECK(parses_as("((1, 2), (3,))", "((1, 2), (3,))"));
    CHECK(parses_as("a, b", "(a, b)")); /* bare tuple at the top (refused by the evaluator) */

    ex_tree *t;
    CHECK(ex_parse("(a, (b, c))", &t) == 0);
    const ex_node *r = ex_root(t);
    CHECK(r->kind == EX_TUPLE && r->nitems == 2 && r->parens);
    CHECK(r->items[1]->kind == EX_TUPLE && r->items[1]->nitems == 2);
    CHECK(r->items[0]->col == 2 && r->items[1]->col == 5);
    ex_free(t);
}

TEST(expr_calls_keywords)
{
    CHECK(parses_as("mean(u, axis=0)", "mean(u, axis=0)"));
    CHECK(parses_as("sum(u*v, axis=(1,2))", "sum((u * v), axis=(1, 2))"));
    CHECK(parses_as("ones((1000000, 8), chunks=(1, 8))", "ones((1000000, 8), chunks=(1, 8))"));
    CHECK(parses_as("astype(u, \"float32\")", "astype(u, 'float32')"));
    CHECK(parses_as("f()", "f()"));
    CHECK(parses_as("f(a,)", "f(a)"));
    CHECK(parses_as("f(x=1, y=a==b)", "f(x=1, y=(a == b))"));
    CHECK(parses_as("random.uniform((3, 4), seed=1)", "random.uniform((3, 4), seed=1)"));
    CHECK(parses_as("f(g(h(x)))(y)", "f(g(h(x)))(y)"));
    CHECK(parses_as("sum(u)[0] + 1", "(sum(u)[0] + 1)"));

    ex_tree *t;
    CHECK(ex_parse("std(u, axis = -1, correction=1)", &t) == 0);
    const ex_node *c = ex_root(t);
    CHECK(c->kind == EX_CALL && c->nitems == 1 && c->nkw == 2);
    CHECK(!strcmp(c->kwnames[0], "axis") && !strcmp(c->kwnames[1], "correction"));
    CHECK(c->kwcols[0] == 8 && c->kwcols[1] == 19);
    CHECK(c->kwvalues[0]->kind == EX_UNARY && c->kwvalues[0]->op == EX_OP_NEG);
    CHECK(c->a->kind == EX_NAME && !strcmp(c->a->str, "std") && c->a->col == 1);
    ex_free(t);
}

TEST(expr_subscripts)
{
    CHECK(parses_as("u[::2, 10:20]", "u[::2, 10:20]"));
    CHECK(parses_as("u[0, :, None]", "u[0, :, None]"));
    CHECK(parses_as("u[...,-1]", "u[..., (-1)]"));
    CHECK(parses_as("u[1:]", "u[1:]"));
    CHECK(parses_as("u[:-1]", "u[:(-1)]"));
    CHECK(parses_as("u[::-1]", "u[::(-1)]"));
    CHECK(parses_as("u[a+1:b*2:2]", "u[(a + 1):(b * 2):2]"));
    CHECK(parses_as("u[0][1]", "u[0][1]"));
    CHECK(parses_as("u[0,]", "u[0]"));

    ex_tree *t;
    CHECK(ex_parse("u[::2, 10:20]", &t) == 0);
    const ex_node *s = ex_root(t);
    CHECK(s->kind == EX_SUBSCRIPT && s->b->kind == EX_TUPLE && s->b->nitems == 2 && !s->b->parens);
    const ex_node *s0 = s->b->items[0], *s1 = s->b->items[1];
    CHECK(s0->kind == EX_SLICE && !s0->a && !s0->b && s0->c && s0->c->ival == 2);
    CHECK(s1->kind == EX_SLICE && s1->a->ival == 10 && s1->b->ival == 20 && !s1->c);
    CHECK(s1->col == 8);
    ex_free(t);
    /* one entry without a comma is not a tuple */
    CHECK(ex_parse("u[3]", &t) == 0);
    CHECK(ex_root(t)->b->kind == EX_NUM);
    ex_free(t);
    CHECK(ex_parse("u[3,]", &t) == 0);
    CHECK(ex_root(t)->b->kind == EX_TUPLE && ex_root(t)->b->nitems == 1);
    ex_free(t);
}

TEST(expr_columns)
{
    ex_tree *t;
    CHECK(ex_parse("  a +  b*c", &t) == 0);
    const ex_node *r = ex_root(t);
    CHECK(r->kind == EX_BINARY && r->op == EX_OP_ADD && r->col == 5);
    CHECK(r->a->col == 3 && r->b->col == 9 && r->b->a->col == 8 && r->b->b->col == 10);
    ex_free(t);
    CHECK(ex_parse("mean(u) - x[1]", &t) == 0);
    r = ex_root(t);
    CHECK(r->a->col == 1 && r->b->col == 11 && r->b->b->col == 13);
    ex_free(t);
}

TEST(expr_operator_functions)
{
    CHECK(!strcmp(ex_op_function(EX_OP_ADD), "add"));
    CHECK(!strcmp(ex_op_function(EX_OP_POW), "pow"));
    CHECK(!strcmp(ex_op_function(EX_OP_NEG), "negative"));
    CHECK(!strcmp(ex_op_function(EX_OP_MOD), "remainder"));
    CHECK(!strcmp(ex_op_function(EX_OP_FLOORDIV), "floor_divide"));
    CHECK(!strcmp(ex_op_function(EX_OP_INVERT), "bitwise_invert"));
    CHECK(!strcmp(ex_op_function(EX_OP_AND), "logical_and"));
    CHECK(!strcmp(ex_op_function(EX_OP_NOT), "logical_not"));
    CHECK(!strcmp(ex_op_function(EX_OP_MATMUL), "matmul"));
    CHECK(!strcmp(ex_op_function(EX_OP_NE), "not_equal"));
    CHECK(!strcmp(ex_op_text(EX_OP_RSHIFT), ">>"));
}

TEST(expr_errors_with_columns)
{
    CHECK(fails_with("", "at column 1: empty expression"));
    CHECK(fails_with("   ", "empty expression"));
    CHECK(fails_with("a +", "at column 4: unexpected end of expression"));
    CHECK(fails_with("(a + b", "at column 7: unexpected end of expression, expected ',' or ')'"));
    CHECK(fails_with("a + b)", "at column 6: unexpected ')'"));
    CHECK(fails_with("mean(u,, axis=0)", "at column 8: unexpected ','"));
    CHECK(fails_with("u[]", "at column 3: empty subscript"));
    CHECK(fails_with("a $ b", "at column 3: unexpected character '$'"));
    CHECK(fails_with("'abc", "at column 1: unterminated string"));
    CHECK(fails_with("1e", "at column 1: invalid number '1e'"));
    CHECK(fails_with("1_", "at column 1: invalid number"));
    CHECK(fails_with("0x", "invalid number"));
    CHECK(fails_with("0b102", "invalid number"));
    CHECK(fails_with("012", "leading zeros"));
    CHECK(fails_with("x + 12abc", "at column 5: invalid number"));
    CHECK(fails_with("3j", "complex literals"));
    CHECK(fails_with("9223372036854775808", "too large"));
    CHECK(fails_with("1e999", "too large"));
    CHECK(fails_with("a < b < c", "at column 7: chained comparisons"));
    CHECK(fails_with("f(axis=0, u)", "at column 11: positional argument after keyword argument"));
    CHECK(fails_with("f(u, axis=0, axis=1)", "at column 14: keyword argument 'axis' repeated"));
    CHECK(fails_with("a if b else c", "at column 3: conditional expressions are not supported"));
    CHECK(fails_with("lambda: 1", "at column 1: keyword 'lambda'"));
    CHECK(fails_with("a in b", "at column 3: operators 'in'"));
    CHECK(fails_with("a is None", "at column 3: operator 'is'"));
    CHECK(fails_with("a += 1", "at column 3: assignment '+='"));
    CHECK(fails_with("x = 1", "at column 3: unexpected '='"));
    CHECK(fails_with("a.", "at column 3: unexpected end of expression, expected a name after '.'"));
    CHECK(fails_with("a and", "unexpected end of expression"));
    CHECK(fails_with("a + and", "at column 5: unexpected 'and'"));
    CHECK(fails_with("'a\\qb'", "unsupported escape"));
    CHECK(fails_with("a\x01", "unexpected character (byte 0x01)"));
    CHECK(fails_with("f(1 2)", "at column 5: unexpected '2', expected ',' or ')'"));
}

TEST(expr_limits)
{
    /* deep nesting and very long chains fail cleanly instead of overflowing the stack */
    char *s = malloc(200001);
    CHECK(s != NULL);
    if (!s) return;
    for (int i = 0; i < 100000; i++) s[i] = '(';
    s[100000] = 0;
    CHECK(fails_with(s, "nested too deeply"));
    for (int i = 0; i < 100000; i++) s[i] = '-';
    s[100000] = 'a';
    s[100001] = 0;
    CHECK(fails_with(s, "nested too deeply"));
    size_t k = 0;
    for (int i = 0; i < 50000; i++) {
        s[k++] = 'a';
        s[k++] = i % 2 ? '+' : '*';
    }
    s[k++] = 'a';
    s[k] = 0;
    CHECK(fails_with(s, "expression too long"));
    k = 0;
    for (int i = 0; i < 50000; i++) {
        memcpy(s + k, "a**", 3);
        k += 3;
    }
    s[k++] = 'a';
    s[k] = 0;
    CHECK(fails_with(s, "nested too deeply"));
    /* but reasonable sizes pass */
    k = 0;
    for (int i = 0; i < 500; i++) {
        s[k++] = 'a';
        s[k++] = '+';
    }
    s[k++] = 'a';
    s[k] = 0;
    ex_tree *t;
    CHECK(ex_parse(s, &t) == 0);
    if (t) CHECK(ex_root(t)->height == 501);
    ex_free(t);
    for (k = 0; k < 90; k++) s[k] = '(';
    s[k++] = 'x';
    for (int i = 0; i < 90; i++) s[k++] = ')';
    s[k] = 0;
    CHECK(ex_parse(s, &t) == 0);
    ex_free(t);
    free(s);
}
