#!/usr/bin/env bash
# The public array API test suite (vendored in third_party/array-api-tests) against
# `zcube`, with the documented xfail list (tests/python/array_api_xfails.txt, a
# reason per entry). Few Hypothesis examples per test keep CI quick
# (ZC_ARRAY_API_EXAMPLES, default 3); a failure outside the list fails the test.
# No Hypothesis deadline: on a loaded machine it turns slowness into failures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/zcube-array-api.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
export PYTHONPYCACHEPREFIX="$work/pycache"
export ARRAY_API_TESTS_VERSION=${ARRAY_API_TESTS_VERSION:-2024.12}  # zcube.__array_api_version__
# Every file of the suite, named so that a file a new version of the suite adds
# is looked at (docs/python.md has the counts) before it joins CI: a failing
# Hypothesis test shrinks for minutes, too long for CI.
S=array_api_tests
files=($S/test_array_object.py $S/test_constants.py $S/test_creation_functions.py
       $S/test_data_type_functions.py $S/test_fft.py $S/test_has_names.py $S/test_indexing_functions.py
       $S/test_inspection_functions.py $S/test_linalg.py $S/test_manipulation_functions.py
       $S/test_operators_and_elementwise_functions.py $S/test_searching_functions.py
       $S/test_set_functions.py $S/test_signatures.py $S/test_sorting_functions.py $S/test_special_cases.py
       $S/test_statistical_functions.py $S/test_utility_functions.py)
bash "$root/third_party/array-api-tests/run.sh" zcube "${files[@]}" \
    --max-examples="${ZC_ARRAY_API_EXAMPLES:-3}" --xfails-file "$here/array_api_xfails.txt" \
    --hypothesis-seed="${ZC_ARRAY_API_SEED:-0}" --hypothesis-disable-deadline -q -p no:cacheprovider "$@"
