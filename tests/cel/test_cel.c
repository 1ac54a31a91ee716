/* The CEL subset for DRA device selectors: every construct, CEL's error
 * absorption, missing keys, quantities, semantic versions, regular
 * expressions, refusals at compile time and the runtime cost limit. */
#include "cel.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ks_cel_attr_t attrs[] = {
    { "gpu.example.com", "model", KS_CEL_ATTR_STRING, 0, 0, "A100-SXM4-80GB" },
    { "gpu.example.com", "cores", KS_CEL_ATTR_INT, 108, 0, NULL },
    { "gpu.example.com", "mig", KS_CEL_ATTR_BOOL, 0, 1, NULL },
    { "gpu.example.com", "driverVersion", KS_CEL_ATTR_VERSION, 0, 0, "535.104.5" },
    { "gpu.example.com", "firmware", KS_CEL_ATTR_VERSION, 0, 0, "1.2.3-rc.1+build.5" },
    { "numa.example.com", "node", KS_CEL_ATTR_INT, 1, 0, NULL },
};
static const ks_cel_capacity_t caps[] = {
    { "gpu.example.com", "memory", "80Gi" },
    { "gpu.example.com", "power", "300500m" },
};
static const ks_cel_device_t dev = {
    "gpu.example.com", attrs, sizeof attrs / sizeof attrs[0], caps, 2, 1
};

/* Compiles and evaluates expr; returns the result and leaves the message. */
static char msg[1024];
static int run_limit(const char *expr, uint64_t limit)
{
    ks_cel_program_t *p = ks_cel_compile(expr, msg, sizeof msg);
    if (!p)
        return -2;
    int r = ks_cel_eval(p, &dev, limit, msg, sizeof msg);
    ks_cel_free(p);
    return r;
}
static int run(const char *expr) { return run_limit(expr, 0); }

#define T(e) ck_assert_msg(run(e) == 1, "%s: want true, got %d (%s)", e, run(e), msg)
#define F(e) ck_assert_msg(run(e) == 0, "%s: want false, got %d (%s)", e, run(e), msg)
#define ERR(e, m) do { int r_ = run(e); \
    ck_assert_msg(r_ == -1, "%s: want runtime error, got %d", e, r_); \
    ck_assert_msg(strstr(msg, m), "%s: message '%s' lacks '%s'", e, msg, m); } while (0)
#define REFUSE(e, m) do { int r_ = run(e); \
    ck_assert_msg(r_ == -2, "%s: want refusal, got %d (%s)", e, r_, msg); \
    ck_assert_msg(strstr(msg, m), "%s: message '%s' lacks '%s'", e, msg, m); } while (0)

START_TEST(literals)
{
    T("1 == 1 && 1u == 1u && 1.5 == 1.5 && 0x10 == 16 && 1e3 == 1000.0 && .5 == 0.5");
    T("-9223372036854775808 < 0 && 18446744073709551615u > 0u");
    T("'a\\tb' == \"a\\x09b\" && \"\\u00e9\" == \"é\" && '\\101' == 'A'");
    T("r'\\n' == '\\\\n' && R\"x\\y\" == 'x\\\\y' && '''a\"b''' == 'a\"b'");
    T("b'ab' + b'c' == b'abc' && size(b'\\xff') == 1");
    T("null == null && true != false");
    T("[1, 2, 3] == [1, 2, 3] && [] == [] && {'a': 1, 'b': 2} == {'b': 2, 'a': 1}");
    T("[[1], [2, 3]][1][0] == 2 && {'k': [1]}['k'][0] == 1");
    REFUSE("9223372036854775808", "out of range");
    REFUSE("'abc", "unterminated");
    REFUSE("'\\q'", "invalid escape");
}
END_TEST

START_TEST(device_fields)
{
    T("device.driver == 'gpu.example.com'");
    T("device.attributes['gpu.example.com']['model'] == 'A100-SXM4-80GB'");
    T("device.attributes['gpu.example.com'].model.startsWith('A100')");
    T("device.attributes['gpu.example.com'].cores == 108 && device.attributes['gpu.example.com'].mig");
    T("device.attributes['numa.example.com'].node == 1");
    T("device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0");
    T("device.capacity['gpu.example.com'].power.isGreaterThan(quantity('300'))");
    T("device.allowMultipleAllocations");
    T("'model' in device.attributes['gpu.example.com'] && !('x' in device.attributes['gpu.example.com'])");
    T("'gpu.example.com' in device.attributes && !('other.com' in device.attributes)");
    T("size(device.attributes['gpu.example.com']) == 5 && size(device.capacity) == 1");
    T("has(device.attributes.other) && !has(device.attributes['gpu.example.com'].nope)");
    T("has(device.driver)");
    /* unknown domains are empty maps, unknown ids missing keys */
    ERR("device.attributes['gpu.example.com'].nope", "no such key: nope");
    ERR("device.attributes['other.com'].model == 'x'", "no such key: model");
    ERR("device.capacity['gpu.example.com']['disk'].sign() == 0", "no such key: disk");
    REFUSE("device.nope", "undefined field 'nope'");
    REFUSE("foo == 1", "undeclared reference to 'foo'");
}
END_TEST

START_TEST(operators)
{
    T("1 + 2 * 3 - 4 / 2 % 3 == 5");
    T("7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1 && 5u / 2u == 2u");
    T("'ab' + 'cd' == 'abcd' && [1] + [2] == [1, 2]");
    T("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 'a' < 'b' && false < true");
    T("1 < 1.5 && 2u > 1 && 1.0 <= 1u"); /* cross-type numeric ordering */
    T("1.0 / 0.0 > 1e308");
    T("true ? 1 == 1 : 1 / 0 == 0");
    T("!false && !!true && -(-3) == 3");
    T("(1 + 2) * 3 == 9");
    T("2 in [1, 2] && 'a' in {'a': 1} && !(3 in [1, 2])");
    T("size('héllo') == 5 && 'héllo'.size() == 5 && size([1, 2]) == 2 && size({'a': 1}) == 1");
    T("dyn(1) == 1.0 && dyn(1u) == 1"); /* heterogeneous equality at runtime */
    T("int('42') == 42 && uint(3) == 3u && double(2) == 2.0 && string(5) == '5'");
    T("int(device.attributes['gpu.example.com'].model.size()) == 14");
    /* string(double) as Go's %g: shortest digits, exponent form from 1e+06 */
    T("string(0.1) == '0.1' && string(100000.0) == '100000' && string(1234567.0) == '1.234567e+06'");
    T("string(0.00001) == '1e-05' && string(3.0) == '3' && string(0.30000000000000004) == '0.30000000000000004'");
    /* a conversion of a constant that fails refuses the program, as cel-go's planner does */
    REFUSE("int('x') == 1", "type conversion error");
    ERR("int(device.driver) == 1", "type conversion error");
    /* `in` an empty constant list is false without evaluating its left side */
    F("device.attributes['gpu.example.com'].nope in []");
    ERR("9223372036854775807 + 1 > 0", "overflow");
    ERR("-9223372036854775808 - 1 < 0", "overflow");
    ERR("0u - 1u > 0u", "overflow");
    ERR("-9223372036854775808 % -1 == 0", "overflow"); /* cel-go's rule */
    /* where the JS reference implementation differs, cel-go's answers */
    T("18446744073709551615u / 1u == 18446744073709551615u");
    ERR("-(-(-9223372036854775808)) < 0", "overflow"); /* negated twice */
    ERR("[1, 2][dyn(true)] == 1", "no such overload");
    ERR("-9223372036854775808 / -1 == 0", "overflow");
    ERR("1 / 0 == 0", "division by zero");
    ERR("1 % 0 == 0", "modulus by zero");
    ERR("[1, 2][2] == 1", "index '2' out of range in list size '2'");
    ERR("{'a': 1}['b'] == 1", "no such key: b");
    ERR("device.attributes['gpu.example.com'].model > 3", "no such overload");
    ERR("device.attributes['gpu.example.com'].cores + 'x' == 'x'", "no such overload");
    REFUSE("1 == 1.0", "no matching overload for '_==_'");
    REFUSE("1 + 1u == 2", "no matching overload for '_+_'");
    REFUSE("[1, 'a'] == []", "expected type 'int' but found 'string'");
    REFUSE("[1, device.attributes['gpu.example.com'].cores] == []", "expected type 'int' but found 'any'");
    T("[[], [1]] == [[], [1]] && [[1], []][1] == []"); /* an empty literal's element type is free */
    REFUSE("true ? 1 : 'a'", "no matching overload for '_?_:_'");
    REFUSE("1 + 1", "must evaluate to bool");
    REFUSE("'a' == 'a' &&", "syntax error");
    REFUSE("device.driver = 'x'", "'=' is not an operator");
}
END_TEST

START_TEST(error_absorption)
{
    const char *err = "device.attributes['gpu.example.com'].nope";
    char e[512];
    snprintf(e, sizeof e, "false && %s", err); F(e);
    snprintf(e, sizeof e, "%s && false", err); F(e);
    snprintf(e, sizeof e, "true || %s", err); T(e);
    snprintf(e, sizeof e, "%s || true", err); T(e);
    snprintf(e, sizeof e, "true && %s", err); ERR(e, "no such key");
    snprintf(e, sizeof e, "%s || false", err); ERR(e, "no such key");
    snprintf(e, sizeof e, "%s && %s", err, err); ERR(e, "no such key");
    snprintf(e, sizeof e, "false ? %s : true", err); T(e);
    snprintf(e, sizeof e, "true ? %s : true", err); ERR(e, "no such key");
    /* a non-bool operand is an error that the other side can absorb */
    F("device.attributes['gpu.example.com'].cores && false");
    ERR("device.attributes['gpu.example.com'].cores && true", "no such overload");
    ERR("device.attributes['gpu.example.com'].cores ? true : false", "no such overload");
    /* a non-bool result */
    ERR("device.attributes['gpu.example.com'].cores", "CEL result of type int could not be converted to bool");
}
END_TEST

START_TEST(strings)
{
    T("'Hello'.startsWith('He') && 'Hello'.endsWith('llo') && 'Hello'.contains('ell')");
    F("'Hello'.startsWith('he')");
    T("'HeLLo'.lowerAscii() == 'hello' && 'HeLLo'.upperAscii() == 'HELLO'");
    T("''.startsWith('') && 'a'.contains('')");
}
END_TEST

START_TEST(regex)
{
    T("'abc-123'.matches('^[a-z]+-\\\\d{3}$')");
    T("'xxabcxx'.matches('abc')"); /* unanchored, as RE2's partial match */
    F("'xxabcxx'.matches('^abc$')");
    T("matches('A100', '^A1(00|50)$')");
    T("'a.b'.matches('a\\\\.b') && !'axb'.matches('a\\\\.b')");
    T("'aaa'.matches('^a{2,3}$') && !'aaaa'.matches('^a{2,3}$')");
    T("'ABC'.matches('(?i)^abc$') && 'x y'.matches('x\\\\sy') && 'é'.matches('^.$')");
    T("'foo bar'.matches('\\\\bbar') && !'foobar'.matches('\\\\bbar')");
    T("'ab'.matches('^[[:alpha:]]+$') && 'a_1'.matches('^\\\\w+$') && !'a-1'.matches('^\\\\w+$')");
    T("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a+)+!$')");
    T("'line1\\nline2'.matches('(?m)^line2$') && !'line1\\nline2'.matches('^line2$')");
    /* (?i) folds ASCII letters, and the Kelvin sign and long s with k and s as RE2 does */
    T("'\\u212A'.matches('(?i)^k$') && '\\u017F'.matches('(?i)S') && !'\\u212A'.matches('(?i)^[^k]$')");
    REFUSE("'É'.matches('(?i)é')", "case-insensitive matching of non-ASCII characters");
    REFUSE("'a'.matches('(?=a)')", "invalid or unsupported Perl syntax");
    REFUSE("'a'.matches('(a)\\\\1')", "invalid escape sequence");
    REFUSE("'a'.matches('[a-')", "missing closing ]");
    REFUSE("'a'.matches('(a')", "missing closing )");
    REFUSE("'a'.matches('a**')", "bad repetition operator");
    REFUSE("'a'.matches('\\\\pL')", "unsupported Unicode class");
    REFUSE("'a'.matches('a{1001}')", "invalid repeat count");
    /* a pattern that is not a literal is compiled at evaluation */
    ERR("'a'.matches(device.attributes['gpu.example.com'].model + '(')", "missing closing )");
}
END_TEST

START_TEST(quantity)
{
    T("quantity('1.5Ki') == quantity('1536')");
    T("quantity('1k') == quantity('1000') && quantity('1e3') == quantity('1k') && quantity('1E3') == quantity('1000')");
    T("quantity('500m').isLessThan(quantity('1')) && quantity('1Mi').isGreaterThan(quantity('1M'))");
    T("quantity('1Gi').compareTo(quantity('1073741824')) == 0");
    T("quantity('0.1n') == quantity('1n')"); /* rounded up to a nano */
    T("quantity('-0.1n') == quantity('-1n')");
    T("quantity('100m').add(quantity('900m')) == quantity('1') && quantity('1').sub(2) == quantity('-1')");
    T("quantity('2k').asInteger() == 2000 && quantity('2k').isInteger() && !quantity('1.5').isInteger()");
    T("quantity('-3').sign() == -1 && quantity('0').sign() == 0");
    T("quantity('1Ei').isGreaterThan(quantity('1E'))");
    T("quantity('123456789012345678901234567890').isGreaterThan(quantity('1E'))");
    T("quantity('1.5').asApproximateFloat() == 1.5");
    T("isQuantity('10Gi') && !isQuantity('10 Gi') && !isQuantity('1Qi')");
    T("device.capacity['gpu.example.com'].memory == quantity('80Gi')");
    ERR("quantity('abc') == quantity('1')", "quantities must match");
    ERR("quantity('1.5').asInteger() == 1", "cannot convert value to integer");
    REFUSE("quantity('1') < quantity('2')", "no matching overload for '_<_'");
}
END_TEST

START_TEST(semver)
{
    T("semver('1.2.3').isLessThan(semver('1.10.0'))");
    T("semver('1.2.3-alpha').isLessThan(semver('1.2.3'))");
    T("semver('1.2.3-alpha.1').isLessThan(semver('1.2.3-alpha.beta'))");
    T("semver('1.2.3-alpha.2').isLessThan(semver('1.2.3-alpha.10'))");
    T("semver('1.2.3+a') == semver('1.2.3+b')");
    T("semver('2.0.0').compareTo(semver('1.9.9')) == 1 && semver('1.0.0').compareTo(semver('1.0.0')) == 0");
    T("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3");
    T("semver('v1.2', true) == semver('1.2.0') && semver('01.02.03', true) == semver('1.2.3')");
    T("isSemver('1.2.3') && !isSemver('1.2') && !isSemver('01.2.3') && !isSemver('1.2.3-01')");
    T("device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('535.0.0'))");
    T("device.attributes['gpu.example.com'].firmware.isLessThan(semver('1.2.3'))");
    T("device.attributes['gpu.example.com'].driverVersion.major() == 535");
    /* a version compared with a string: the version's Equal refuses it */
    ERR("device.attributes['gpu.example.com'].firmware == '1.2.3-rc.1'", "no such overload");
    F("'1.2.3-rc.1' == device.attributes['gpu.example.com'].firmware");
    F("device.attributes['gpu.example.com'].firmware == null");
    ERR("semver('1.2') == semver('1.2.0')", "No Major.Minor.Patch");
    ERR("semver('1.02.3').major() == 1", "must not begin with 0");
}
END_TEST

START_TEST(macros)
{
    T("[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists(x, x > 2) && !([1, 2, 3].exists_one(x, x > 1))");
    T("[1, 2, 3].map(x, x * 2) == [2, 4, 6] && [1, 2, 3].filter(x, x % 2 == 1) == [1, 3]");
    T("[1, 2, 3].map(x, x > 1, x * 10) == [20, 30] && [].all(x, false) && ![].exists(x, true)");
    T("{'a': 1, 'b': 2}.all(k, k.size() == 1)"); /* a map's keys */
    T("device.attributes['gpu.example.com'].exists(id, id.startsWith('mo'))");
    T("[[1, 2], [3]].all(l, l.all(x, x > 0))");
    T("cel.bind(x, 5, [1, 2].all(x, x < 5) && x == 5)"); /* the iteration variable shadows */
    /* all and exists absorb an error as && and || do; the others do not */
    F("[0, 1].all(x, 1 / x > 5)");
    T("[0, 1].exists(x, 1 / x > 0)");
    ERR("[0, 1].all(x, 1 / x > 0)", "division by zero");
    ERR("[0, 1].exists_one(x, 1 / x > 0)", "division by zero");
    ERR("[0, 1].filter(x, 1 / x > 0) == []", "division by zero");
    ERR("device.attributes['gpu.example.com'].all(id, device.attributes['gpu.example.com'][id] > 0)",
        "no such overload");
    REFUSE("[1, 2].all(x, x)", "condition must be a bool");
    REFUSE("1.all(x, true)", "cannot be range of a comprehension");
    REFUSE("[1].all(x.y, true)", "argument must be a simple name");
    REFUSE("[1].all(x, y, true)", "two-variable comprehensions are not supported");
    REFUSE("[1].existsOne(x, true)", "unsupported function 'existsOne'");
    REFUSE("[1].transformList(i, x, x) == []", "unsupported function 'transformList'");
    REFUSE("[1, 2].exists(x, x == 2) && x == 1", "undeclared reference to 'x'");
    /* each iteration costs */
    ck_assert_int_eq(run_limit("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, x > 0)", 20), -1);
}
END_TEST

START_TEST(refusals)
{
    REFUSE("'a'.indexOf('a') == 0", "unsupported function 'indexOf'");
    REFUSE("Foo{a: 1}", "message construction");
    REFUSE("has(device)", "invalid argument to has()");
    REFUSE("'a'.startsWith(1)", "no matching overload for 'startsWith'");
    REFUSE("size(1) == 1", "no matching overload for 'size'");
    /* the column is named */
    REFUSE("true && foo", "column 9:");
}
END_TEST

START_TEST(bindings)
{
    T("cel.bind(gpu, device.attributes['gpu.example.com'], gpu.mig && gpu.cores > 100)");
    T("cel.bind(x, 1, cel.bind(x, 'a', x == 'a') && x == 1)"); /* shadowing */
    T("cel.bind(device, 2, device == 2)");
    /* an error in the value stays a value: only a use fails */
    F("cel.bind(x, device.attributes['gpu.example.com'].nope, false && x)");
    T("cel.bind(x, 1 / 0, true)");
    ERR("cel.bind(x, device.attributes['gpu.example.com'].nope, x)", "no such key: nope");
    REFUSE("cel.bind(x.y, 1, true)", "simple identifiers");
    REFUSE("cel.bind(x, 1)", "cel.bind() takes");
    REFUSE("x == 1 && cel.bind(x, 1, x == 1)", "undeclared reference to 'x'");
    REFUSE("cel.bind(x, 1, x)", "must evaluate to bool");
}
END_TEST

START_TEST(cost_limit)
{
    const char *e = "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'.matches('a+a+a+a+a+a+a+a+a+a+a+a+')";
    ck_assert_int_eq(run_limit(e, 0), 1);
    ck_assert_int_eq(run_limit(e, 10), -1);
    ck_assert_str_eq(msg, "operation cancelled: actual cost limit exceeded");
    /* the limit is not absorbed by || */
    ck_assert_int_eq(run_limit("true || [1, 2, 3] == [1, 2, 3]", 1), 1);
    ck_assert_int_eq(run_limit("[device.driver] == [device.driver] || true", 5), -1);
    /* cel-go's costs: an identifier and each selection 1, a constant 0,
     * equality ceil(min size / 10), startsWith ceil(size / 10) of the
     * receiver, a list literal 10 (0 when all its elements are constants),
     * `in` a list its size (0 for a constant list of scalars), has() free */
    ck_assert_int_eq(run_limit("device.driver == 'gpu.example.com'", 4), 1);
    ck_assert_int_eq(run_limit("device.driver == 'gpu.example.com'", 3), -1);
    ck_assert_int_eq(run_limit("'aaaaaaaaaaaaaaaaaaaaa'.startsWith('a')", 3), 1);
    ck_assert_int_eq(run_limit("'aaaaaaaaaaaaaaaaaaaaa'.startsWith('a')", 2), -1);
    ck_assert_int_eq(run_limit("device.driver in [device.driver, 'x']", 16), 1);
    ck_assert_int_eq(run_limit("device.driver in [device.driver, 'x']", 15), -1);
    ck_assert_int_eq(run_limit("device.driver in ['a', 'gpu.example.com', 'c']", 2), 1);
    ck_assert_int_eq(run_limit("[[1, 2], [3]] == [[1, 2], [3]]", 1), 1);
    ck_assert_int_eq(run_limit("has(device.attributes.x)", 2), 1);
    ck_assert_int_eq(run_limit("has(device.attributes.x)", 1), -1);
    /* the default is upstream's 1,000,000 */
    ck_assert_uint_eq(KS_CEL_DEFAULT_COST_LIMIT, 1000000u);
}
END_TEST

START_TEST(api_edges)
{
    char err[8];
    ck_assert_ptr_null(ks_cel_compile("foo", err, sizeof err));
    ck_assert_uint_lt(strlen(err), sizeof err); /* truncated, terminated */
    ck_assert_ptr_null(ks_cel_compile(NULL, NULL, 0));
    ks_cel_free(NULL);
    ck_assert_int_eq(ks_cel_eval(NULL, &dev, 0, NULL, 0), KS_CEL_ERROR);
    ks_cel_program_t *p = ks_cel_compile("device.driver == ''", NULL, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ks_cel_eval(p, NULL, 0, NULL, 0), KS_CEL_TRUE);
    ks_cel_free(p);
    /* deep nesting is refused, not a stack overflow */
    char deep[4000];
    memset(deep, '(', 1500);
    strcpy(deep + 1500, "true");
    memset(deep + 1504, ')', 1500);
    deep[3004] = 0;
    REFUSE(deep, "nested too deeply");
    /* a left-deep chain is refused past cel-go's depth, a long && chain is balanced */
    char chain[8000];
    size_t k = 0;
    for (int i = 0; i < 300; i++)
        k += (size_t)snprintf(chain + k, sizeof chain - k, "%s1", i ? " + " : "");
    snprintf(chain + k, sizeof chain - k, " > 0");
    REFUSE(chain, "max recursion depth 250");
    k = 0;
    for (int i = 0; i < 1000; i++)
        k += (size_t)snprintf(chain + k, sizeof chain - k, "%strue", i ? " && " : "");
    ck_assert_int_eq(run(chain), 1);
    REFUSE("1e400 > 0.0", "invalid double literal");
}
END_TEST

/* One program evaluated from several threads at once (under
 * ThreadSanitizer this checks that evaluation writes nothing shared). */
static void *eval_many(void *arg)
{
    const ks_cel_program_t *p = arg;
    char err[256];
    for (int i = 0; i < 2000; i++)
        if (ks_cel_eval(p, &dev, 0, err, sizeof err) != KS_CEL_TRUE)
            return (void *)1;
    return NULL;
}

START_TEST(threads)
{
    ks_cel_program_t *p = ks_cel_compile(
        "cel.bind(g, device.attributes['gpu.example.com'], g.model.matches('^A100-') && "
        "g.firmware.isLessThan(semver('1.2.3')) && [g.cores] == [108] && "
        "device.capacity['gpu.example.com'].memory.isGreaterThan(quantity('40Gi')) && "
        "'gpu.example.com' in device.attributes && size(g) == 5)", msg, sizeof msg);
    ck_assert_msg(p != NULL, "%s", msg);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, eval_many, p), 0);
    for (int i = 0; i < 4; i++) {
        void *rc;
        ck_assert_int_eq(pthread_join(t[i], &rc), 0);
        ck_assert_ptr_null(rc);
    }
    ks_cel_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cel");
    TCase *tc = tcase_create("cel");
    tcase_add_test(tc, literals);
    tcase_add_test(tc, device_fields);
    tcase_add_test(tc, operators);
    tcase_add_test(tc, error_absorption);
    tcase_add_test(tc, strings);
    tcase_add_test(tc, regex);
    tcase_add_test(tc, quantity);
    tcase_add_test(tc, semver);
    tcase_add_test(tc, macros);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, bindings);
    tcase_add_test(tc, cost_limit);
    tcase_add_test(tc, api_edges);
    tcase_add_test(tc, threads);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
