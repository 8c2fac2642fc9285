/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metrics.c - the counters adapters keep of the library's answers
 * (requests by verdict and reason, the injector's outcomes), their
 * lock-free increments, and their Prometheus text exposition.
 */
#include "internal.h"

/* 64-bit atomics where the target has them lock-free; plain adds where it
 * has not (32-bit MIPS: the caller serialises, csrf.h says so), never a
 * call into libatomic. */
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8)
#define METRICS_ADD(p, n) ((void)__atomic_fetch_add((p), (n), __ATOMIC_RELAXED))
#define METRICS_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#else
#define METRICS_ADD(p, n) ((void)(*(p) += (n)))
#define METRICS_LOAD(p) (*(p))
#endif

/* The CSRF_INJECT_* bits by their exposed names: the macro's name in
 * lower case without its prefix. Bit i is 1u << i. */
static const char *const status_names[] = {
    "nested_form", "foreign",     "template",        "select",     "noscript",   "base",       "late_base",
    "formaction",  "escape",      "stopped",         "get_button", "form_owner", "late_owner", "unclosed",
    "long_form",   "late_button", "noscript_button", "table_form", "frameset",   "deep",
};

/* the last bit named is the last bit defined; unit.test_metrics checks
 * that every bit with a phrase (csrf_inject_status_str) has its series */
_Static_assert(1u << (sizeof status_names / sizeof status_names[0] - 1) == CSRF_INJECT_DEEP,
               "a name for every CSRF_INJECT_* bit");

static const char *const pass_names[] = {"charset", "encoding", "error"};

static const char *const verdict_names[CSRF_METRICS_VERDICTS] = {"allowed", "report_only", "rejected"};

CSRF_API void csrf_metrics_init(csrf_metrics *m, int64_t now)
{
	if (!m)
		return;
	memset(m, 0, sizeof *m);
	m->magic = CSRF_METRICS_MAGIC;
	now = csrfi_now(now);
	m->start_time = now > 0 ? (uint64_t)now : 0;
}

CSRF_API int csrf_metrics_valid(const void *mem, size_t len)
{
	uint64_t magic;

	if (!mem || len != sizeof(csrf_metrics))
		return 0;
	memcpy(&magic, mem, sizeof magic);
	return magic == CSRF_METRICS_MAGIC;
}

CSRF_API void csrf_metrics_count(csrf_metrics *m, csrf_metrics_verdict verdict, csrf_reason reason)
{
	unsigned col;

	if (!m || (unsigned)verdict >= CSRF_METRICS_VERDICTS)
		return;
	col = (unsigned)reason < CSRF_METRICS_REASONS ? (unsigned)reason : CSRF_METRICS_REASONS;
	METRICS_ADD(&m->requests[verdict][col], 1);
}

CSRF_API void csrf_metrics_count_check(csrf_metrics *m, const csrf_result *res)
{
	if (!m || !res || res->needs_body)
		return;
	csrf_metrics_count(m,
	                   res->report_only ? CSRF_METRICS_REPORT_ONLY
	                   : res->allowed   ? CSRF_METRICS_ALLOWED
	                                    : CSRF_METRICS_REJECTED,
	                   res->reason);
}

CSRF_API void csrf_metrics_count_page(csrf_metrics *m, unsigned injected, unsigned status)
{
	if (!m)
		return;
	METRICS_ADD(&m->inject_pages, 1);
	if (injected)
		METRICS_ADD(&m->inject_insertions, injected);
	for (unsigned i = 0; i < CSRF_METRICS_STATUS_BITS && status; i++, status >>= 1)
		if (status & 1u)
			METRICS_ADD(&m->inject_withheld[i], 1);
}

CSRF_API void csrf_metrics_count_passed(csrf_metrics *m, csrf_metrics_pass cause)
{
	if (!m || (unsigned)cause >= CSRF_METRICS_PASS_CAUSES)
		return;
	METRICS_ADD(&m->inject_passed[cause], 1);
}

/* ---- rendering ---- */

/* A bounded writer: what does not fit is counted, not written, so the
 * caller learns the size it needs. */
typedef struct {
	char *out;
	size_t cap;
	size_t len;
} writer;

static void put(writer *w, const char *s, size_t n)
{
	if (w->len < w->cap && n <= w->cap - w->len)
		memcpy(w->out + w->len, s, n);
	w->len += n;
}

static void puts_(writer *w, const char *s)
{
	put(w, s, strlen(s));
}

static void put_u64(writer *w, uint64_t v)
{
	char d[20];
	size_t n = 0;

	do {
		d[sizeof d - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, d + sizeof d - n, n);
}

static void family(writer *w, const char *name, const char *type, const char *help)
{
	puts_(w, "# HELP ");
	puts_(w, name);
	put(w, " ", 1);
	puts_(w, help);
	puts_(w, "\n# TYPE ");
	puts_(w, name);
	put(w, " ", 1);
	puts_(w, type);
	put(w, "\n", 1);
}

/* A label value, escaped as the text format asks: \\, \" and \n. */
static void put_label_value(writer *w, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			put(w, "\\\\", 2);
		else if (*v == '"')
			put(w, "\\\"", 2);
		else if (*v == '\n')
			put(w, "\\n", 2);
		else
			put(w, v, 1);
	}
}

/* name{zone="z",l1="v1",l2="v2"} value, each label optional (NULL). l1
 * and l2 values are names of ours, [a-z_] only; the zone is escaped. */
static void sample(writer *w, const char *name, const char *zone, const char *l1, const char *v1, const char *l2,
                   const char *v2, uint64_t value)
{
	const char *sep = "{";

	puts_(w, name);
	if (zone) {
		puts_(w, "{zone=\"");
		put_label_value(w, zone);
		put(w, "\"", 1);
		sep = ",";
	}
	if (l1) {
		puts_(w, sep);
		puts_(w, l1);
		put(w, "=\"", 2);
		puts_(w, v1);
		put(w, "\"", 1);
		sep = ",";
		if (l2) {
			put(w, ",", 1);
			puts_(w, l2);
			put(w, "=\"", 2);
			puts_(w, v2);
			put(w, "\"", 1);
		}
	}
	if (zone || l1)
		put(w, "}", 1);
	put(w, " ", 1);
	put_u64(w, value);
	put(w, "\n", 1);
}

/* Whether (verdict, code) is listed even at 0: the pairs csrf_check can
 * answer, so a rate over them exists from the first scrape. */
static int always_listed(unsigned verdict, unsigned code)
{
	if (verdict == CSRF_METRICS_ALLOWED)
		return code < 16;
	return code >= 16 && code < 64;
}

static int named(unsigned code)
{
	return strcmp(csrf_reason_name((csrf_reason)code), "unknown") != 0;
}

/* Every family once, its HELP and TYPE, then its samples for every set
 * in turn: a family's lines stay together, as the format requires. */
static void render(writer *w, const csrf_metrics *const *sets, const char *const *zones, size_t n)
{
	family(w, "csrf_requests_total", "counter",
	       "Requests libcsrf judged, by verdict (allowed, report_only: rejected by the checks but let through "
	       "by report-only, rejected) and reason.");
	for (size_t z = 0; z < n; z++) {
		const csrf_metrics *m = sets[z];
		const char *zone = zones ? zones[z] : NULL;

		for (unsigned v = 0; v < CSRF_METRICS_VERDICTS; v++) {
			for (unsigned c = 0; c < CSRF_METRICS_REASONS; c++) {
				uint64_t k = METRICS_LOAD(&m->requests[v][c]);

				/* a code without a name yet: with the unknown ones, below */
				if (named(c) && (k || always_listed(v, c)))
					sample(w, "csrf_requests_total", zone, "verdict", verdict_names[v], "reason",
					       csrf_reason_name((csrf_reason)c), k);
			}
		}
		for (unsigned v = 0; v < CSRF_METRICS_VERDICTS; v++) {
			uint64_t k = METRICS_LOAD(&m->requests[v][CSRF_METRICS_REASONS]);

			for (unsigned c = 0; c < CSRF_METRICS_REASONS; c++)
				if (!named(c))
					k += METRICS_LOAD(&m->requests[v][c]);
			if (k)
				sample(w, "csrf_requests_total", zone, "verdict", verdict_names[v], "reason", "unknown",
				       k);
		}
	}

	family(w, "csrf_inject_pages_total", "counter", "HTML pages streamed through the token injector.");
	for (size_t z = 0; z < n; z++)
		sample(w, "csrf_inject_pages_total", zones ? zones[z] : NULL, NULL, NULL, NULL, NULL,
		       METRICS_LOAD(&sets[z]->inject_pages));

	family(w, "csrf_inject_insertions_total", "counter",
	       "Elements the injector inserted: one per hidden token field, one per pair of meta tags.");
	for (size_t z = 0; z < n; z++)
		sample(w, "csrf_inject_insertions_total", zones ? zones[z] : NULL, NULL, NULL, NULL, NULL,
		       METRICS_LOAD(&sets[z]->inject_insertions));

	family(w, "csrf_inject_withheld_total", "counter",
	       "HTML pages where the injector left a form without a token, or stopped, by its status (once per "
	       "page and status).");
	for (size_t z = 0; z < n; z++)
		for (unsigned i = 0; i < sizeof status_names / sizeof status_names[0]; i++)
			sample(w, "csrf_inject_withheld_total", zones ? zones[z] : NULL, "status", status_names[i],
			       NULL, NULL, METRICS_LOAD(&sets[z]->inject_withheld[i]));

	family(w, "csrf_inject_passed_total", "counter",
	       "HTML pages passed through without tokens, by cause (a charset the injector does not read, a "
	       "compressed body, a page that could not be prepared).");
	for (size_t z = 0; z < n; z++)
		for (unsigned i = 0; i < sizeof pass_names / sizeof pass_names[0]; i++)
			sample(w, "csrf_inject_passed_total", zones ? zones[z] : NULL, "cause", pass_names[i], NULL,
			       NULL, METRICS_LOAD(&sets[z]->inject_passed[i]));

	family(w, "csrf_metrics_start_time_seconds", "gauge", "Unix time at which these counters started.");
	for (size_t z = 0; z < n; z++)
		sample(w, "csrf_metrics_start_time_seconds", zones ? zones[z] : NULL, NULL, NULL, NULL, NULL,
		       sets[z]->start_time);
}

static csrf_reason finish(writer *w, char *out, size_t cap, size_t *out_len)
{
	if (w->len >= cap) {
		if (cap)
			out[0] = '\0';
		if (out_len)
			*out_len = w->len + 1;
		return CSRF_ERR_BUFFER;
	}
	out[w->len] = '\0';
	if (out_len)
		*out_len = w->len;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_metrics_render(const csrf_metrics *m, char *out, size_t cap, size_t *out_len)
{
	writer w = {out, cap, 0};

	if (out_len)
		*out_len = 0;
	if (!m || !out || !csrf_metrics_valid(m, sizeof *m))
		return CSRF_ERR_ARG;
	render(&w, &m, NULL, 1);
	return finish(&w, out, cap, out_len);
}

CSRF_API csrf_reason csrf_metrics_render_zones(const csrf_metrics *const *sets, const char *const *zones, size_t n,
                                               char *out, size_t cap, size_t *out_len)
{
	writer w = {out, cap, 0};

	if (out_len)
		*out_len = 0;
	if (!sets || !zones || !out || n == 0 || n > CSRF_METRICS_ZONES_MAX)
		return CSRF_ERR_ARG;
	for (size_t i = 0; i < n; i++) {
		if (!sets[i] || !zones[i] || !csrf_metrics_valid(sets[i], sizeof *sets[i]) ||
		    strlen(zones[i]) > CSRF_METRICS_ZONE_NAME_MAX)
			return CSRF_ERR_ARG;
		for (size_t j = 0; j < i; j++)
			if (strcmp(zones[i], zones[j]) == 0)
				return CSRF_ERR_ARG; /* one series twice */
	}
	render(&w, sets, zones, n);
	return finish(&w, out, cap, out_len);
}
