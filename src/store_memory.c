/*
 * store_memory.c - the embedded store ("memory", "memory://?max=N"): a
 * chained hash table under one mutex, with TTL expiry and a bound on the
 * number of entries.
 *
 * Every entry also sits in a binary min-heap ordered by expiry time
 * (entries without a TTL count as expiring never), ties broken by write
 * order. That one order serves both jobs:
 *  - expiry: expired entries are always at the top of the heap, so each
 *    call sweeps up to SWEEP_PER_CALL of them, besides the check on
 *    access;
 *  - eviction: when the store is full, the top of the heap goes. That is
 *    an expired entry if there is one, else the entry closest to expiry
 *    (its loss matters for the shortest time), else, when no entry has a
 *    TTL, the one written longest ago. Eviction can drop a lockout
 *    counter, so max should be sized to never be reached in normal
 *    operation; the bound is there to keep a flood from exhausting memory.
 *
 * Keys are hashed with SipHash (libsodium crypto_shorthash) under a
 * random per-store key, so chosen keys (session ids, account names)
 * cannot flood one bucket. Values are copied in and out; an entry is
 * wiped before it is freed, since values hold secrets.
 */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

#include <openssl/rand.h>
#include <sodium.h>

#define SWEEP_PER_CALL 16
#define INITIAL_BUCKETS 64
#define NEVER INT64_MAX

typedef struct mem_entry {
	struct mem_entry *next; /* hash chain */
	uint64_t hash;
	int64_t expires; /* ms on the store's clock; NEVER without TTL */
	uint64_t seq;    /* write order */
	size_t heap_idx;
	size_t key_len;
	size_t val_len;
	unsigned char data[]; /* key, then value */
} mem_entry;

typedef struct {
	csrf_store base;
	csrf_allocator alloc;
	pthread_mutex_t lock;
	unsigned char hash_key[crypto_shorthash_KEYBYTES];
	mem_entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
	size_t max;
	mem_entry **heap;
	size_t heap_cap;
	uint64_t seq;
	csrf_store_clock_fn clock;
	void *clock_ud;
} mem_store;

static const csrf_store_ops mem_ops;

static int64_t monotonic_ms(void *ud)
{
	struct timespec ts;

	(void)ud;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	csrf_wipe(e, entry_size(e->key_len, e->val_len));
	m_free(m, e);
}

static uint64_t key_hash(const mem_store *m, const char *key, size_t key_len)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h;

	crypto_shorthash(out, (const unsigned char *)key, key_len, m->hash_key);
	memcpy(&h, out, sizeof h);
	return h;
}

/* ---- the heap ---- */

static int heap_less(const mem_entry *a, const mem_entry *b)
{
	return a->expires < b->expires || (a->expires == b->expires && a->seq < b->seq);
}

static void heap_place(mem_store *m, size_t i, mem_entry *e)
{
	m->heap[i] = e;
	e->heap_idx = i;
}

static void heap_up(mem_store *m, size_t i)
{
	mem_entry *e = m->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!heap_less(e, m->heap[parent]))
			break;
		heap_place(m, i, m->heap[parent]);
		i = parent;
	}
	heap_place(m, i, e);
}

static void heap_down(mem_store *m, size_t i)
{
	mem_entry *e = m->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, best = i;
		const mem_entry *cur = e;
		if (l < m->count && heap_less(m->heap[l], cur)) {
			best = l;
			cur = m->heap[l];
		}
		if (r < m->count && heap_less(m->heap[r], cur))
			best = r;
		if (best == i)
			break;
		heap_place(m, i, m->heap[best]);
		i = best;
	}
	heap_place(m, i, e);
}

/* After heap[i]'s order key changed. */
static void heap_fix(mem_store *m, size_t i)
{
	mem_entry *e = m->heap[i];

	heap_up(m, i);
	heap_down(m, e->heap_idx);
}

/* ---- the table ---- */

static mem_entry **chain_find(mem_store *m, uint64_t h, const char *key, size_t key_len)
{
	mem_entry **pp = &m->buckets[h & (m->nbuckets - 1)];

	for (; *pp != NULL; pp = &(*pp)->next) {
		const mem_entry *e = *pp;
		if (e->hash == h && e->key_len == key_len && csrf_ct_eq(e->data, key, key_len))
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

/* Unlinks e from its chain and the heap, then wipes and frees it. */
static void entry_remove(mem_store *m, mem_entry *e)
{
	mem_entry **pp = chain_slot_of(m, e);
	size_t i = e->heap_idx;

	*pp = e->next;
	m->count--;
	if (i != m->count) {
		heap_place(m, i, m->heap[m->count]);
		heap_fix(m, i);
	}
	m->heap[m->count] = NULL;
	entry_free(m, e);
}

static void sweep(mem_store *m, int64_t now)
{
	for (int n = 0; n < SWEEP_PER_CALL && m->count > 0 && m->heap[0]->expires <= now; n++)
		entry_remove(m, m->heap[0]);
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

/* Writes key = val with the given expiry, replacing a live entry or
 * inserting (evicting the heap's top when full). Nothing changes on
 * CSRF_ERR_NOMEM. */
static csrf_reason put(mem_store *m, const char *key, size_t key_len, const void *val, size_t val_len, int64_t expires,
                       int64_t now)
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
		e->next = old->next;
		*pp = e;
		heap_place(m, old->heap_idx, e);
		heap_fix(m, e->heap_idx);
		entry_free(m, old);
		return CSRF_OK;
	}
	if (m->count == m->heap_cap && m->count < m->max) {
		size_t cap = m->heap_cap * 2;
		mem_entry **nh;
		if (cap > m->max)
			cap = m->max;
		nh = m_zalloc(m, cap, sizeof *nh);
		if (nh == NULL) {
			entry_free(m, e);
			return CSRF_ERR_NOMEM;
		}
		memcpy(nh, m->heap, m->count * sizeof *nh);
		m_free(m, m->heap);
		m->heap = nh;
		m->heap_cap = cap;
	}
	if (m->count >= m->max)
		entry_remove(m, m->heap[0]);
	maybe_grow(m);
	pp = &m->buckets[h & (m->nbuckets - 1)];
	e->next = *pp;
	*pp = e;
	heap_place(m, m->count, e);
	m->count++;
	heap_up(m, e->heap_idx);
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
	int64_t now = begin(m);
	csrf_reason r = put(m, key, key_len, val, val_len, expiry_for(now, ttl_s), now);

	pthread_mutex_unlock(&m->lock);
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
	int64_t now = begin(m);
	const mem_entry *e = lookup(m, key, key_len, now);
	int64_t v = 0, expires = expiry_for(now, ttl_s);
	char num[24];
	int n;
	csrf_reason r = CSRF_OK;

	if (e != NULL) {
		/* an existing key keeps its TTL, as with Redis INCR */
		expires = e->expires;
		r = csrf_store_parse_i64((const char *)e->data + e->key_len, e->val_len, &v);
		if (r == CSRF_OK && v == INT64_MAX)
			r = CSRF_MALFORMED;
	}
	if (r == CSRF_OK) {
		v++;
		n = snprintf(num, sizeof num, "%lld", (long long)v);
		r = put(m, key, key_len, num, (size_t)n, expires, now);
	}
	if (r == CSRF_OK)
		*value = v;
	pthread_mutex_unlock(&m->lock);
	return r;
}

static void mem_destroy(mem_store *m)
{
	csrf_allocator a = m->alloc;

	for (size_t i = 0; i < m->count; i++)
		entry_free(m, m->heap[i]);
	m_free(m, m->heap);
	m_free(m, m->buckets);
	csrf_wipe(m, sizeof *m);
	a.free(m, a.ud);
}

static void mem_close(csrf_store *st)
{
	mem_store *m = (mem_store *)st;

	pthread_mutex_destroy(&m->lock);
	mem_destroy(m);
}

static const csrf_store_ops mem_ops = {
    .get = mem_get,
    .set = mem_set,
    .del = mem_del,
    .incr = mem_incr,
    .close = mem_close,
};

csrf_reason csrf_store_memory_open_with(csrf_store **out, size_t max_entries, const csrf_allocator *alloc)
{
	csrf_allocator a = csrf_default_allocator;
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
	m->heap_cap = max_entries < INITIAL_BUCKETS ? max_entries : INITIAL_BUCKETS;
	m->clock = monotonic_ms;
	m->buckets = m_zalloc(m, m->nbuckets, sizeof *m->buckets);
	m->heap = m->buckets != NULL ? m_zalloc(m, m->heap_cap, sizeof *m->heap) : NULL;
	if (m->heap == NULL) {
		mem_destroy(m);
		return CSRF_ERR_NOMEM;
	}
	if (RAND_bytes(m->hash_key, sizeof m->hash_key) != 1) {
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

csrf_reason csrf_store_memory_open(csrf_store **out, size_t max_entries)
{
	return csrf_store_memory_open_with(out, max_entries, NULL);
}

void csrf_store_memory_set_clock(csrf_store *st, csrf_store_clock_fn clock_ms, void *ud)
{
	mem_store *m = (mem_store *)st;

	if (st == NULL || st->ops != &mem_ops)
		return;
	pthread_mutex_lock(&m->lock);
	m->clock = clock_ms != NULL ? clock_ms : monotonic_ms;
	m->clock_ud = clock_ms != NULL ? ud : NULL;
	pthread_mutex_unlock(&m->lock);
}

size_t csrf_store_memory_count(csrf_store *st)
{
	mem_store *m = (mem_store *)st;
	size_t n;

	if (st == NULL || st->ops != &mem_ops)
		return 0;
	pthread_mutex_lock(&m->lock);
	n = m->count;
	pthread_mutex_unlock(&m->lock);
	return n;
}
