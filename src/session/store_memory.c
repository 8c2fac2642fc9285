/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store_memory.c - the embedded store ("memory", "memory://?max=N"): a
 * chained hash table under one mutex, with TTL expiry and a bound on the
 * number of entries that never costs a security counter.
 *
 * Every entry also sits in one of two binary min-heaps ordered by expiry
 * time (entries without a TTL count as expiring never), ties broken by
 * write order: counters (keys written by incr) in one, plain entries in
 * the other. That order serves both jobs:
 *  - expiry: expired entries are always at the top of a heap, so each
 *    call sweeps up to SWEEP_PER_CALL of them from each, besides the
 *    check on access;
 *  - eviction: when the store is full, a new key takes the place of an
 *    expired entry if a heap's top is one, else of the top of the plain
 *    heap (the plain entry closest to expiry: its loss matters for the
 *    shortest time; without TTLs the one written longest ago). Counters
 *    are never evicted: a store holding nothing but live counters
 *    refuses new keys with CSRF_STORE_FULL, so a flood of anonymous
 *    entries can log people out but cannot lift a lockout.
 *
 * Keys are hashed with SipHash-2-4 under a random per-store key, so
 * chosen keys (session ids, account names) cannot flood one bucket.
 * Values are copied in and out; an entry is wiped before it is freed,
 * since values hold secrets. Log events (evicting, refusing) are rate
 * limited and handed to the hook after the lock is released.
 */
#include "session_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SWEEP_PER_CALL 16
#define INITIAL_BUCKETS 64
#define NEVER INT64_MAX

typedef struct mem_entry {
	struct mem_entry *next; /* hash chain */
	uint64_t hash;
	int64_t expires; /* ms on the store's clock; NEVER without TTL */
	uint64_t seq;    /* write order */
	size_t heap_idx;
	int counter; /* written by incr: in the counters' heap, never evicted */
	size_t key_len;
	size_t val_len;
	unsigned char data[]; /* key, then value */
} mem_entry;

typedef struct {
	mem_entry **a;
	size_t n;
	size_t cap;
} mem_heap;

enum { PLAIN = 0, COUNTERS = 1 };

/* What a call has to tell the log once the lock is released. */
typedef struct {
	csrf_reason event; /* CSRF_OK: nothing */
	size_t entries;
	uint64_t skipped;
	int refused; /* else: evicting */
} mem_note;

typedef struct {
	csrf_store base;
	csrf_allocator alloc;
	pthread_mutex_t lock;
	unsigned char hash_key[CSRF_SIPHASH_KEY_LEN];
	mem_entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;    /* both heaps */
	size_t max;
	mem_heap heap[2]; /* PLAIN, COUNTERS */
	uint64_t seq;
	csrfi_store_clock_fn clock;
	void *clock_ud;
	csrfi_log_limit evict_limit, refuse_limit;
} mem_store;

static const csrfi_store_ops mem_ops;

static int64_t monotonic_ms(void *ud)
{
	(void)ud;
	return csrfi_mono_ms();
}

static void *m_alloc(const mem_store *m, size_t n)
{
	return m->alloc.alloc(n, m->alloc.ud);
}

static void *m_zalloc(const mem_store *m, size_t count, size_t size)
{
	void *p;

	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	p = m_alloc(m, count * size);
	if (p != NULL)
		memset(p, 0, count * size);
	return p;
}

static void m_free(const mem_store *m, void *p)
{
	if (p != NULL)
		m->alloc.free(p, m->alloc.ud);
}

static size_t entry_size(size_t key_len, size_t val_len)
{
	return sizeof(mem_entry) + key_len + val_len;
}

static void entry_free(const mem_store *m, mem_entry *e)
{
	csrfi_wipe(e, entry_size(e->key_len, e->val_len));
	m_free(m, e);
}

static uint64_t key_hash(const mem_store *m, const char *key, size_t key_len)
{
	return csrfi_siphash24(m->hash_key, key, key_len);
}

/* ---- the heaps ---- */

static int heap_less(const mem_entry *a, const mem_entry *b)
{
	return a->expires < b->expires || (a->expires == b->expires && a->seq < b->seq);
}

static void heap_place(mem_heap *h, size_t i, mem_entry *e)
{
	h->a[i] = e;
	e->heap_idx = i;
}

static void heap_up(mem_heap *h, size_t i)
{
	mem_entry *e = h->a[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!heap_less(e, h->a[parent]))
			break;
		heap_place(h, i, h->a[parent]);
		i = parent;
	}
	heap_place(h, i, e);
}

static void heap_down(mem_heap *h, size_t i)
{
	mem_entry *e = h->a[i];

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, best = i;
		const mem_entry *cur = e;
		if (l < h->n && heap_less(h->a[l], cur)) {
			best = l;
			cur = h->a[l];
		}
		if (r < h->n && heap_less(h->a[r], cur))
			best = r;
		if (best == i)
			break;
		heap_place(h, i, h->a[best]);
		i = best;
	}
	heap_place(h, i, e);
}

/* After a[i]'s order key changed. */
static void heap_fix(mem_heap *h, size_t i)
{
	mem_entry *e = h->a[i];

	heap_up(h, i);
	heap_down(h, e->heap_idx);
}

/* Room for one more; capacity is there (heap_reserve). */
static void heap_push(mem_heap *h, mem_entry *e)
{
	heap_place(h, h->n, e);
	h->n++;
	heap_up(h, e->heap_idx);
}

static void heap_remove(mem_heap *h, const mem_entry *e)
{
	size_t i = e->heap_idx;

	h->n--;
	if (i != h->n) {
		heap_place(h, i, h->a[h->n]);
		heap_fix(h, i);
	}
	h->a[h->n] = NULL;
}

/* Makes room for one more entry in h (at most m->max in all). 0 on
 * allocation failure, with nothing changed. */
static int heap_reserve(mem_store *m, mem_heap *h)
{
	size_t cap;
	mem_entry **na;

	if (h->n < h->cap || h->cap >= m->max)
		return 1;
	cap = h->cap > 0 ? h->cap * 2 : INITIAL_BUCKETS;
	if (cap > m->max)
		cap = m->max;
	na = m_zalloc(m, cap, sizeof *na);
	if (na == NULL)
		return 0;
	if (h->n > 0)
		memcpy(na, h->a, h->n * sizeof *na);
	m_free(m, h->a);
	h->a = na;
	h->cap = cap;
	return 1;
}

/* ---- the table ---- */

static mem_entry **chain_find(mem_store *m, uint64_t h, const char *key, size_t key_len)
{
	mem_entry **pp = &m->buckets[h & (m->nbuckets - 1)];

	for (; *pp != NULL; pp = &(*pp)->next) {
		const mem_entry *e = *pp;
		if (e->hash == h && e->key_len == key_len && csrfi_ct_eq(e->data, key, key_len))
			return pp;
	}
	return pp;
}

static mem_entry **chain_slot_of(mem_store *m, const mem_entry *e)
{
	mem_entry **pp = &m->buckets[e->hash & (m->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->next;
	return pp;
}

/* Unlinks e from its chain and its heap, then wipes and frees it. */
static void entry_remove(mem_store *m, mem_entry *e)
{
	mem_entry **pp = chain_slot_of(m, e);

	*pp = e->next;
	m->count--;
	heap_remove(&m->heap[e->counter ? COUNTERS : PLAIN], e);
	entry_free(m, e);
}

/* The top of heap h when it has expired, else NULL. */
static mem_entry *expired_top(const mem_heap *h, int64_t now)
{
	return h->n > 0 && h->a[0]->expires <= now ? h->a[0] : NULL;
}

static void sweep(mem_store *m, int64_t now)
{
	mem_entry *e;

	for (int k = PLAIN; k <= COUNTERS; k++)
		for (int n = 0; n < SWEEP_PER_CALL && (e = expired_top(&m->heap[k], now)) != NULL; n++)
			entry_remove(m, e);
}

/* Doubles the bucket array; on allocation failure the table keeps its
 * size (longer chains, still correct). */
static void maybe_grow(mem_store *m)
{
	size_t nb = m->nbuckets * 2;
	mem_entry **b;

	if (m->count < m->nbuckets || nb > SIZE_MAX / sizeof *b)
		return;
	b = m_zalloc(m, nb, sizeof *b);
	if (b == NULL)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		mem_entry *e = m->buckets[i];
		while (e != NULL) {
			mem_entry *next = e->next;
			mem_entry **head = &b[e->hash & (nb - 1)];
			e->next = *head;
			*head = e;
			e = next;
		}
	}
	m_free(m, m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
}

/* Live entry for key, or NULL; an expired one found here is removed. */
static mem_entry *lookup(mem_store *m, const char *key, size_t key_len, int64_t now)
{
	mem_entry *e = *chain_find(m, key_hash(m, key, key_len), key, key_len);

	if (e != NULL && e->expires <= now) {
		entry_remove(m, e);
		return NULL;
	}
	return e;
}

/* Frees a place for a new key in a full store: an expired entry, else
 * the plain entry closest to expiry. 0 when every entry is a live
 * counter. */
static int make_room(mem_store *m, int64_t now, mem_note *note)
{
	mem_entry *e = expired_top(&m->heap[PLAIN], now);

	if (e == NULL)
		e = expired_top(&m->heap[COUNTERS], now);
	if (e == NULL && m->heap[PLAIN].n > 0) {
		e = m->heap[PLAIN].a[0];
		if (csrfi_log_limit_take(&m->evict_limit, now, &note->skipped)) {
			note->event = CSRF_STORE_FULL;
			note->entries = m->count;
			note->refused = 0;
		}
	}
	if (e == NULL) {
		if (csrfi_log_limit_take(&m->refuse_limit, now, &note->skipped)) {
			note->event = CSRF_STORE_FULL;
			note->entries = m->count;
			note->refused = 1;
		}
		return 0;
	}
	entry_remove(m, e);
	return 1;
}

/* Writes key = val with the given expiry, replacing a live entry or
 * inserting (making room when full). counter: written by incr. A key
 * that is a counter stays one when rewritten. Nothing changes on
 * CSRF_ERR_NOMEM or CSRF_STORE_FULL. */
static csrf_reason put(mem_store *m, const char *key, size_t key_len, const void *val, size_t val_len, int64_t expires,
                       int counter, int64_t now, mem_note *note)
{
	uint64_t h = key_hash(m, key, key_len);
	mem_entry **pp;
	mem_entry *old;
	mem_entry *e = m_alloc(m, entry_size(key_len, val_len));

	if (e == NULL)
		return CSRF_ERR_NOMEM;
	e->hash = h;
	e->expires = expires;
	e->seq = ++m->seq;
	e->key_len = key_len;
	e->val_len = val_len;
	memcpy(e->data, key, key_len);
	if (val_len > 0)
		memcpy(e->data + key_len, val, val_len);

	pp = chain_find(m, h, key, key_len);
	old = *pp;
	if (old != NULL && old->expires <= now) {
		entry_remove(m, old);
		old = NULL;
	}
	if (old != NULL) {
		e->counter = old->counter || counter;
		if (e->counter != old->counter && !heap_reserve(m, &m->heap[COUNTERS])) {
			entry_free(m, e);
			return CSRF_ERR_NOMEM;
		}
		e->next = old->next;
		*pp = e;
		if (e->counter == old->counter) {
			mem_heap *hp = &m->heap[e->counter ? COUNTERS : PLAIN];
			heap_place(hp, old->heap_idx, e);
			heap_fix(hp, e->heap_idx);
		} else {
			heap_remove(&m->heap[PLAIN], old);
			heap_push(&m->heap[COUNTERS], e);
		}
		entry_free(m, old);
		return CSRF_OK;
	}
	e->counter = counter;
	if (!heap_reserve(m, &m->heap[counter ? COUNTERS : PLAIN])) {
		entry_free(m, e);
		return CSRF_ERR_NOMEM;
	}
	if (m->count >= m->max && !make_room(m, now, note)) {
		entry_free(m, e);
		return CSRF_STORE_FULL;
	}
	maybe_grow(m);
	pp = &m->buckets[h & (m->nbuckets - 1)];
	e->next = *pp;
	*pp = e;
	m->count++;
	heap_push(&m->heap[counter ? COUNTERS : PLAIN], e);
	return CSRF_OK;
}

static int64_t expiry_for(int64_t now, uint32_t ttl_s)
{
	return ttl_s == 0 ? NEVER : now + (int64_t)ttl_s * 1000;
}

static int64_t begin(mem_store *m)
{
	int64_t now;

	pthread_mutex_lock(&m->lock);
	now = m->clock(m->clock_ud);
	sweep(m, now);
	return now;
}

/* Unlocks, then tells the log what the call noted. */
static void end(mem_store *m, const mem_note *note)
{
	pthread_mutex_unlock(&m->lock);
	if (note->event == CSRF_OK)
		return;
	if (note->refused)
		csrfi_store_log(&m->base.log, note->event,
		                "memory store full: %zu entries, every one a security counter; a new key was refused "
		                "(%llu more refused since the last report)",
		                note->entries, (unsigned long long)note->skipped);
	else
		csrfi_store_log(&m->base.log, note->event,
		                "memory store full: %zu entries; new keys evict the plain entries closest to expiry, "
		                "never counters (%llu more evicted since the last report)",
		                note->entries, (unsigned long long)note->skipped);
}

static csrf_reason mem_get(csrf_store *st, const char *key, size_t key_len, void *buf, size_t cap, size_t *len)
{
	mem_store *m = (mem_store *)st;
	int64_t now = begin(m);
	const mem_entry *e = lookup(m, key, key_len, now);
	csrf_reason r = CSRF_OK;

	if (e == NULL) {
		r = CSRF_NOT_FOUND;
	} else if (e->val_len > cap) {
		*len = e->val_len;
		r = CSRF_ERR_BUFFER;
	} else {
		if (e->val_len > 0)
			memcpy(buf, e->data + e->key_len, e->val_len);
		*len = e->val_len;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

static csrf_reason mem_set(csrf_store *st, const char *key, size_t key_len, const void *val, size_t val_len,
                           uint32_t ttl_s)
{
	mem_store *m = (mem_store *)st;
	mem_note note = {CSRF_OK, 0, 0, 0};
	int64_t now = begin(m);
	csrf_reason r = put(m, key, key_len, val, val_len, expiry_for(now, ttl_s), 0, now, &note);

	end(m, &note);
	return r;
}

static csrf_reason mem_del(csrf_store *st, const char *key, size_t key_len)
{
	mem_store *m = (mem_store *)st;
	int64_t now = begin(m);
	mem_entry *e = lookup(m, key, key_len, now);

	if (e != NULL)
		entry_remove(m, e);
	pthread_mutex_unlock(&m->lock);
	return CSRF_OK;
}

static csrf_reason mem_incr(csrf_store *st, const char *key, size_t key_len, uint32_t ttl_s, int64_t *value)
{
	mem_store *m = (mem_store *)st;
	mem_note note = {CSRF_OK, 0, 0, 0};
	int64_t now = begin(m);
	const mem_entry *e = lookup(m, key, key_len, now);
	int64_t v = 0, expires = expiry_for(now, ttl_s);
	char num[24];
	int n;
	csrf_reason r = CSRF_OK;

	if (e != NULL) {
		/* an existing key keeps its TTL, as with Redis INCR */
		expires = e->expires;
		r = csrfx_parse_i64((const char *)e->data + e->key_len, e->val_len, &v);
		if (r == CSRF_OK && v == INT64_MAX)
			r = CSRF_MALFORMED;
	}
	if (r == CSRF_OK) {
		v++;
		n = snprintf(num, sizeof num, "%lld", (long long)v);
		r = put(m, key, key_len, num, (size_t)n, expires, 1, now, &note);
	}
	if (r == CSRF_OK)
		*value = v;
	end(m, &note);
	return r;
}

static void mem_destroy(mem_store *m)
{
	csrf_allocator a = m->alloc;

	for (int k = PLAIN; k <= COUNTERS; k++) {
		for (size_t i = 0; i < m->heap[k].n; i++)
			entry_free(m, m->heap[k].a[i]);
		m_free(m, m->heap[k].a);
	}
	m_free(m, m->buckets);
	csrfi_wipe(m, sizeof *m);
	a.free(m, a.ud);
}

static void mem_close(csrf_store *st)
{
	mem_store *m = (mem_store *)st;

	pthread_mutex_destroy(&m->lock);
	mem_destroy(m);
}

static const csrfi_store_ops mem_ops = {
    .get = mem_get,
    .set = mem_set,
    .del = mem_del,
    .incr = mem_incr,
    .close = mem_close,
};

csrf_reason csrfi_store_memory_open_with(csrf_store **out, size_t max_entries, const csrf_allocator *alloc)
{
	csrf_allocator a = csrfi_default_allocator;
	mem_store *m;

	if (out == NULL)
		return CSRF_ERR_ARG;
	*out = NULL;
	if (max_entries == 0 || max_entries > CSRF_STORE_MEMORY_MAX_MAX)
		return CSRF_ERR_ARG;
	if (alloc != NULL) {
		if (alloc->alloc == NULL || alloc->free == NULL)
			return CSRF_ERR_ARG;
		a = *alloc;
	}
	m = a.alloc(sizeof *m, a.ud);
	if (m == NULL)
		return CSRF_ERR_NOMEM;
	memset(m, 0, sizeof *m);
	m->base.ops = &mem_ops;
	m->alloc = a;
	m->max = max_entries;
	m->nbuckets = INITIAL_BUCKETS;
	m->clock = monotonic_ms;
	m->buckets = m_zalloc(m, m->nbuckets, sizeof *m->buckets);
	if (m->buckets == NULL) {
		mem_destroy(m);
		return CSRF_ERR_NOMEM;
	}
	if (csrf_random(m->hash_key, sizeof m->hash_key) != CSRF_OK) {
		mem_destroy(m);
		return CSRF_ERR_RANDOM;
	}
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		mem_destroy(m);
		return CSRF_ERR_INTERNAL;
	}
	*out = &m->base;
	return CSRF_OK;
}

csrf_reason csrfi_store_memory_open(csrf_store **out, size_t max_entries)
{
	return csrfi_store_memory_open_with(out, max_entries, NULL);
}

void csrfi_store_memory_set_clock(csrf_store *st, csrfi_store_clock_fn clock_ms, void *ud)
{
	mem_store *m = (mem_store *)st;

	if (st == NULL || st->ops != &mem_ops)
		return;
	pthread_mutex_lock(&m->lock);
	m->clock = clock_ms != NULL ? clock_ms : monotonic_ms;
	m->clock_ud = clock_ms != NULL ? ud : NULL;
	pthread_mutex_unlock(&m->lock);
}

static size_t count_of(csrf_store *st, int counters_only)
{
	mem_store *m = (mem_store *)st;
	size_t n;

	if (st == NULL || st->ops != &mem_ops)
		return 0;
	pthread_mutex_lock(&m->lock);
	n = counters_only ? m->heap[COUNTERS].n : m->count;
	pthread_mutex_unlock(&m->lock);
	return n;
}

size_t csrfi_store_memory_count(csrf_store *st)
{
	return count_of(st, 0);
}

size_t csrfi_store_memory_counters(csrf_store *st)
{
	return count_of(st, 1);
}
