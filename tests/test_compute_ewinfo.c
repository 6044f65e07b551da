/* tests/test_compute_ewinfo.c — zc_elementwise_info lists exactly the
 * functions zc_elementwise takes, with their arities; zc_elementwise_number
 * folds Python numbers with the kernels (results and kinds as the same
 * function of weak scalars in an array expression), and refuses what the
 * function does not take. */
#include <math.h>
#include <string.h>

#include "harness.h"

TEST(ewinfo_list)
{
    const char *name;
    int nargs, n = 0, unary = 0, binary = 0, where = 0;
    zc_array *x;
    CHECK_OK(zc_full(1, (int64_t[]){4}, NULL, ZC_BOOL, 1, &x));
    for (; zc_elementwise_info(n, &name, &nargs) == 0; n++) {
        CHECK(name && *name);
        unary += nargs == 1;
        binary += nargs == 2;
        where += nargs == 3 && !strcmp(name, "where");
        /* every listed function takes that many arguments (dtype refusals aside) */
        zc_array *args[3] = {x, x, x}, *r = NULL;
        int rc = zc_elementwise(name, nargs, args, &r);
        CHECK(rc == 0 || (rc == ZC_EINVAL && strstr(zc_errmsg(), "dtype")));
        zc_array_release(r);
    }
    zc_array_release(x);
    CHECK(n == 67 && unary == 38 && binary == 28 && where == 1); /* the array API's 2023.12 set + where */
    CHECK(zc_elementwise_info(n, &name, &nargs) == ZC_ERANGE);
    CHECK(zc_elementwise_info(-1, NULL, NULL) == ZC_ERANGE);
    CHECK_OK(zc_elementwise_info(0, NULL, NULL));
}

static zc_number num_i(int64_t i) { return (zc_number){ZC_INT64, i, 0}; }
static zc_number num_f(double f) { return (zc_number){ZC_FLOAT64, 0, f}; }
static zc_number num_b(int b) { return (zc_number){ZC_BOOL, b, 0}; }

TEST(ewinfo_numbers)
{
    zc_number r;
    CHECK_OK(zc_elementwise_number("sqrt", 1, (zc_number[]){num_i(2)}, &r));
    CHECK(r.dtype == ZC_FLOAT64 && r.f == sqrt(2.0));
    CHECK_OK(zc_elementwise_number("maximum", 2, (zc_number[]){num_i(1), num_i(2)}, &r));
    CHECK(r.dtype == ZC_INT64 && r.i == 2);
    CHECK_OK(zc_elementwise_number("maximum", 2, (zc_number[]){num_i(1), num_f(NAN)}, &r));
    CHECK(r.dtype == ZC_FLOAT64 && isnan(r.f));
    CHECK_OK(zc_elementwise_number("isnan", 1, (zc_number[]){num_f(1.5)}, &r));
    CHECK(r.dtype == ZC_BOOL && r.i == 0);
    CHECK_OK(zc_elementwise_number("floor", 1, (zc_number[]){num_i(-7)}, &r));
    CHECK(r.dtype == ZC_INT64 && r.i == -7);
    CHECK_OK(zc_elementwise_number("round", 1, (zc_number[]){num_f(2.5)}, &r));
    CHECK(r.dtype == ZC_FLOAT64 && r.f == 2.0); /* half to even */
    CHECK_OK(zc_elementwise_number("logical_xor", 2, (zc_number[]){num_b(1), num_b(0)}, &r));
    CHECK(r.dtype == ZC_BOOL && r.i == 1);
    CHECK_OK(zc_elementwise_number("where", 3, (zc_number[]){num_b(0), num_i(1), num_f(2.5)}, &r));
    CHECK(r.dtype == ZC_FLOAT64 && r.f == 2.5);
    CHECK_OK(zc_elementwise_number("logaddexp", 2, (zc_number[]){num_f(3), num_f(-2)}, &r));
    CHECK(r.dtype == ZC_FLOAT64 && fabs(r.f - log(exp(3.0) + exp(-2.0))) < 1e-15);

    CHECK_ERR(zc_elementwise_number("bitwise_and", 2, (zc_number[]){num_f(1), num_i(1)}, &r), ZC_EINVAL,
              "bitwise_and");
    CHECK_ERR(zc_elementwise_number("sine", 1, (zc_number[]){num_i(1)}, &r), ZC_EINVAL, "sine");
    CHECK_ERR(zc_elementwise_number("add", 1, (zc_number[]){num_i(1)}, &r), ZC_EINVAL, "takes 2");
    CHECK_ERR(zc_elementwise_number("abs", 1, (zc_number[]){{ZC_FLOAT32, 0, 1}}, &r), ZC_EINVAL, "float32");
    CHECK_ERR(zc_elementwise_number("abs", 1, NULL, &r), ZC_EINVAL, "NULL");
}
