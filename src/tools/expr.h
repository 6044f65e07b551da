/* tools/expr.h — the expression language of `zcube eval`: Python expression
 * syntax, parsed into a small syntax tree, then evaluated into lazy arrays.
 *
 * Grammar (a subset of Python's, with Python's precedence, lowest first):
 *
 *   expr     := or_test
 *   or_test  := and_test ('or' and_test)*            → logical_or
 *   and_test := not_test ('and' not_test)*           → logical_and
 *   not_test := 'not' not_test | comparison          → logical_not
 *   comparison := bor [('<'|'<='|'>'|'>='|'=='|'!=') bor]   (no chaining)
 *   bor := bxor ('|' bxor)*     bxor := band ('^' band)*     band := shift ('&' shift)*
 *   shift := arith (('<<'|'>>') arith)*     arith := term (('+'|'-') term)*
 *   term  := factor (('*'|'@'|'/'|'//'|'%') factor)*
 *   factor := ('+'|'-'|'~') factor | power
 *   power := primary ['**' factor]                   (right associative; -x**2 = -(x**2))
 *   primary := atom ( '(' args ')' | '[' subscripts ']' | '.' NAME )*
 *   atom := NUMBER | STRING | NAME | None | True | False | '...'
 *         | '(' [expr (',' expr)* [',']] ')' | '[' [expr (',' expr)* [',']] ']'
 *   args := arg (',' arg)* [',']      arg := NAME '=' expr | expr   (keywords last)
 *   subscripts := sub (',' sub)* [',']      sub := expr | [expr] ':' [expr] [':' [expr]]
 *
 * Numbers: decimal and 0x/0o/0b integers (with _ separators), floats (1.5, .5,
 * 1e-3, 1_000.0). Strings: '...' or "..." with \\ \' \" \n \t escapes. A list
 * [a, b] is the same as a tuple. Every node keeps the 1-based column where it
 * starts (binary operators: the operator's column), so errors can point at it.
 *
 * Errors: ex_parse returns -1 and sets cli_lasterr() to one line,
 * "at column N: <what>". */
#ifndef ZC_TOOLS_EXPR_H
#define ZC_TOOLS_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define EX_MAX_DEPTH 100   /* nesting limit of brackets, calls and unary operators */
#define EX_MAX_HEIGHT 1000 /* limit on the tree's height (operator chains like a+a+...) */

typedef enum {
    EX_NUM,       /* number: is_int ? ival : fval */
    EX_STR,       /* string literal: str */
    EX_NAME,      /* identifier: str */
    EX_NONE,      /* None */
    EX_BOOL,      /* True/False: ival 1/0 */
    EX_ELLIPSIS,  /* ... */
    EX_TUPLE,     /* (a, b) or [a, b]: items */
    EX_SLICE,     /* a:b:c inside a subscript: a, b, c (NULL = omitted) */
    EX_CALL,      /* a(items..., kwnames[i]=kwvalues[i]...) */
    EX_ATTR,      /* a.str */
    EX_SUBSCRIPT, /* a[b] (b is an EX_TUPLE when the subscript has a comma) */
    EX_UNARY,     /* op a */
    EX_BINARY,    /* a op b (arithmetic, bitwise, comparison, and/or) */
} ex_kind;

typedef enum {
    EX_OP_ADD, EX_OP_SUB, EX_OP_MUL, EX_OP_MATMUL, EX_OP_DIV, EX_OP_FLOORDIV, EX_OP_MOD, EX_OP_POW,
    EX_OP_LSHIFT, EX_OP_RSHIFT, EX_OP_BITAND, EX_OP_BITXOR, EX_OP_BITOR,
    EX_OP_LT, EX_OP_LE, EX_OP_GT, EX_OP_GE, EX_OP_EQ, EX_OP_NE,
    EX_OP_AND, EX_OP_OR,
    EX_OP_NEG, EX_OP_POS, EX_OP_INVERT, EX_OP_NOT, /* unary */
    EX_OP_COUNT_
} ex_op;

typedef struct ex_node ex_node;
struct ex_node {
    ex_kind kind;
    int col;             /* 1-based column of the node's first character (binary: of the operator) */
    ex_op op;            /* EX_UNARY, EX_BINARY */
    int is_int;          /* EX_NUM: 1 = integer literal (ival), 0 = float (fval) */
    int64_t ival;        /* EX_NUM integer value, EX_BOOL 0/1 */
    double fval;         /* EX_NUM float value */
    char *str;           /* EX_STR text (NUL-terminated, no NULs inside), EX_NAME/EX_ATTR name */
    ex_node *a, *b, *c;  /* operands (see ex_kind) */
    int nitems;          /* EX_TUPLE items, EX_CALL positional arguments */
    ex_node **items;
    int nkw;             /* EX_CALL keyword arguments */
    char **kwnames;
    ex_node **kwvalues;
    int *kwcols;         /* column of each keyword's name */
    int parens;          /* EX_TUPLE: 1 if written with (), 2 with [] (a list), 0 for a bare a, b */
    int height;          /* nodes on the longest path down to a leaf (1 for leaves) */
};

/* A parsed expression: the root and the memory of all its nodes. */
typedef struct ex_tree ex_tree;

/* "at column N: <what>" into cli_lasterr() (the parser's and the evaluator's
 * errors); returns -1. */
int ex_fail(int col, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse `src`. @return 0 with *out set (free with ex_free), or -1 with cli_lasterr(). */
int ex_parse(const char *src, ex_tree **out);
void ex_free(ex_tree *t);
const ex_node *ex_root(const ex_tree *t);

/* Python's spelling of an operator ("+", "//", "not"). */
const char *ex_op_text(ex_op op);
/* The array API function an operator maps to ("+" → "add", "**" → "pow",
 * unary "-" → "negative", "and" → "logical_and", "@" → "matmul"). */
const char *ex_op_function(ex_op op);

/* A canonical, fully parenthesized rendering of a node ("(a + (b * c))",
 * "f(x, axis=(1, 2))", "u[::2, 1:, None]") into buf; returns the length it
 * needed (like snprintf). For tests and messages. */
size_t ex_format(const ex_node *n, char *buf, size_t size);

/* ---- evaluation (expr_eval.c and the files of expr_internal.h): the tree into a lazy array ---- */

/* Names bound to arrays (from `--in NAME=PATH`): the evaluator takes a
 * reference of its own to any array it uses. */
typedef struct {
    const char *name;
    zc_array *array;
} ex_binding;

/* The bound that sizes depending on the data (x[mask], nonzero, an integer
 * array index) are counted under when an expression is evaluated; NULL (the
 * default) refuses them. The spec must outlive the evaluations. */
void ex_set_spec(const zc_spec *spec);

/* Is `name` a function of the language? (so `--in` can refuse it as a name) */
int ex_is_function(const char *name);

/* Evaluate the tree into an array. Python numbers at the top become 0-d arrays.
 * @return 0 with *out (one reference, release with zc_array_release), or -1
 *         with cli_lasterr() = "at column N: <what>" (library failures carry
 *         zc_errmsg(); *status receives the library's code, or 0 when the
 *         expression itself is wrong). */
int ex_eval(const ex_tree *t, const ex_binding *vars, int nvars, zc_array **out, int *status);

#endif
