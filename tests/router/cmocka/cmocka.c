/* cmocka.c - the runner of tests/router/cmocka/cmocka.h. */
#include "cmocka.h"

jmp_buf cm_jmp;

int cm_run(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	void *group = NULL;
	volatile int failed = 0;

	if (setup && setup(&group) != 0) {
		fprintf(stderr, "[  ERROR   ] group setup failed\n");
		return (int)n;
	}
	for (size_t i = 0; i < n; i++) {
		void *state = group;
		printf("[ RUN      ] %s\n", tests[i].name);
		if (tests[i].setup_func && tests[i].setup_func(&state) != 0) {
			printf("[  FAILED  ] %s (setup)\n", tests[i].name);
			failed++;
			continue;
		}
		int jumped = setjmp(cm_jmp);
		if (jumped == 0) {
			tests[i].test_func(&state);
			printf("[       OK ] %s\n", tests[i].name);
		} else if (jumped == 2) {
			printf("[  SKIPPED ] %s\n", tests[i].name);
		} else {
			printf("[  FAILED  ] %s\n", tests[i].name);
			failed++;
		}
		if (tests[i].teardown_func)
			tests[i].teardown_func(&state);
	}
	if (teardown)
		teardown(&group);
	printf("[==========] %zu test(s) run, %d failed.\n", n, failed);
	return failed;
}
