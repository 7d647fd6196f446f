/* mt_test.h - the few macros unit tests need. One test file per unit; each
 * TEST is a function named for the behaviour it checks. A failed CHECK
 * prints file:line and the expression and marks the test failed; main()
 * from MT_TEST_MAIN runs every registered test and exits 1 on any failure. */
#ifndef MT_TEST_H
#define MT_TEST_H
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct { const char *name; void (*fn)(int *failed); } mt_test_case;

#define TEST(name) static void name(int *mt__failed)
#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      *mt__failed = 1;                                                       \
    }                                                                        \
  } while (0)
#define CHECK_EQ_INT(a, b)                                                   \
  do {                                                                       \
    long long mt__a = (long long)(a), mt__b = (long long)(b);                \
    if (mt__a != mt__b) {                                                    \
      fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
              __LINE__, #a, mt__a, #b, mt__b);                               \
      *mt__failed = 1;                                                       \
    }                                                                        \
  } while (0)
/* |a - b| <= tol; NaN equals NaN. */
#define CHECK_NEAR(a, b, tol)                                                \
  do {                                                                       \
    double mt__a = (double)(a), mt__b = (double)(b);                         \
    if (!((isnan(mt__a) && isnan(mt__b)) || fabs(mt__a - mt__b) <= (tol) ||  \
          (mt__a == mt__b))) {                                               \
      fprintf(stderr, "  %s:%d: %s == %.9g, expected %.9g (tol %g)\n",      \
              __FILE__, __LINE__, #a, mt__a, mt__b, (double)(tol));          \
      *mt__failed = 1;                                                       \
    }                                                                        \
  } while (0)
#define CHECK_STATUS(expr, want)                                             \
  do {                                                                       \
    mt_status mt__s = (expr);                                                \
    if (mt__s != (want)) {                                                   \
      fprintf(stderr, "  %s:%d: %s returned %d, expected %s\n", __FILE__,    \
              __LINE__, #expr, (int)mt__s, #want);                           \
      *mt__failed = 1;                                                       \
    }                                                                        \
  } while (0)
/* The string s is want, byte for byte (both printed, escapes as \ooo, when not). */
#define CHECK_STR(s, want)                                                   \
  do {                                                                       \
    const char *mt__s = (s), *mt__w = (want);                                \
    if (!mt__s || strcmp(mt__s, mt__w)) {                                    \
      fprintf(stderr, "  %s:%d: %s == \"", __FILE__, __LINE__, #s);          \
      mt__print_escaped(mt__s ? mt__s : "(null)");                           \
      fputs("\", expected \"", stderr);                                      \
      mt__print_escaped(mt__w);                                              \
      fputs("\"\n", stderr);                                                  \
      *mt__failed = 1;                                                       \
    }                                                                        \
  } while (0)
static inline void mt__print_escaped(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 32 || *s == 127) fprintf(stderr, "\\%03o", (unsigned char)*s);
    else fputc(*s, stderr);
}
/* The string s contains sub (messages name what they should). */
#define CHECK_HAS(s, sub)                                                    \
  do {                                                                       \
    const char *mt__s = (s), *mt__sub = (sub);                               \
    if (!strstr(mt__s, mt__sub)) {                                           \
      fprintf(stderr, "  %s:%d: \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,   \
              mt__s, mt__sub);                                               \
      *mt__failed = 1;                                                       \
    }                                                                        \
  } while (0)

/* Runs the tests, prints a line each and a summary: 0 all passed, else 1. */
static inline int mt_test_run(const mt_test_case *tests, int n) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int failed = 0;
    tests[i].fn(&failed);
    printf("%s %s\n", failed ? "FAIL" : "ok  ", tests[i].name);
    bad += failed;
  }
  printf("%d passed, %d failed\n", n - bad, bad);
  return bad ? 1 : 0;
}

#define MT_TEST_MAIN(...)                                                    \
  int main(void) {                                                           \
    static const mt_test_case tests[] = {__VA_ARGS__};                       \
    return mt_test_run(tests, (int)(sizeof tests / sizeof tests[0]));        \
  }
/* As MT_TEST_MAIN, but skip(why, len) != 0 prints "SKIP: why" and exits 77
 * (ctest SKIP): for tests that need hardware the machine may not have. */
#define MT_TEST_MAIN_UNLESS(skip, ...)                                       \
  int main(void) {                                                           \
    static const mt_test_case tests[] = {__VA_ARGS__};                       \
    char mt__why[256];                                                       \
    if (skip(mt__why, sizeof mt__why)) {                                     \
      printf("SKIP: %s\n", mt__why);                                         \
      return 77;                                                             \
    }                                                                        \
    printf("%s\n", mt__why);                                                 \
    return mt_test_run(tests, (int)(sizeof tests / sizeof tests[0]));        \
  }
#define T(name) {#name, name}
#endif
