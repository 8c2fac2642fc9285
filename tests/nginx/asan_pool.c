/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/nginx: the sanitized module's own pool memory, one malloc a piece.
 * Linked into asan/ngx_http_csrf_module.so only, with -Wl,--wrap=NAME for
 * each allocator below (tests/nginx/CMakeLists.txt): the module's calls
 * to nginx's pool allocators land here instead of carving pieces from the
 * pool's blocks, where ASan sees no bounds. nginx's own calls are not
 * relinked and stay nginx's (docs/hardening.md "The server modules under
 * ASan").
 *
 * Each piece is remembered in a list of its pool's record, found by the
 * pool's address in a hash table of this file's (O(1) a piece, whatever
 * the pool's number of cleanups, which were walked at every piece before),
 * and freed by one cleanup of the pool, which drops the record and runs
 * after all the others: it is moved to the tail of pool->cleanup when
 * created, and nginx only ever adds cleanups at the head (in a cycle's
 * pool it goes just before the cleanup that dlcloses the module,
 * registered by load_module before the module ran at all). So no cleanup of the module's or nginx's reads a
 * piece already freed, and nothing is freed before the pool is destroyed
 * but what the module hands to ngx_pfree.
 *
 * Memory nginx may reuse stays allocated until then: a chain link of the
 * module's that nginx puts back on pool->chain (ngx_free_chain,
 * ngx_chain_update_chains) and hands out again from its own
 * ngx_alloc_chain_link is a live malloc block until the pool goes; the
 * wrapped ngx_alloc_chain_link never takes from pool->chain (its links
 * are nginx's pool pieces). nginx's own ngx_pfree of a piece (not relinked)
 * finds it in no pool->large list and declines, so it stays too.
 */

#include <ngx_config.h>
#include <ngx_core.h>

void *__real_ngx_palloc(ngx_pool_t *pool, size_t size);
ngx_int_t __real_ngx_pfree(ngx_pool_t *pool, void *p);
ngx_pool_cleanup_t *__real_ngx_pool_cleanup_add(ngx_pool_t *p, size_t size);

void *__wrap_ngx_palloc(ngx_pool_t *pool, size_t size);
void *__wrap_ngx_pnalloc(ngx_pool_t *pool, size_t size);
void *__wrap_ngx_pcalloc(ngx_pool_t *pool, size_t size);
void *__wrap_ngx_pmemalign(ngx_pool_t *pool, size_t size, size_t alignment);
ngx_int_t __wrap_ngx_pfree(ngx_pool_t *pool, void *p);
ngx_buf_t *__wrap_ngx_create_temp_buf(ngx_pool_t *pool, size_t size);
ngx_chain_t *__wrap_ngx_alloc_chain_link(ngx_pool_t *pool);
ngx_array_t *__wrap_ngx_array_create(ngx_pool_t *p, ngx_uint_t n, size_t size);
void *__wrap_ngx_array_push(ngx_array_t *a);
ngx_pool_cleanup_t *__wrap_ngx_pool_cleanup_add(ngx_pool_t *p, size_t size);

typedef struct ngx_asan_piece_s ngx_asan_piece_t;
typedef struct ngx_asan_rec_s ngx_asan_rec_t;

struct ngx_asan_piece_s {
	void *p;
	ngx_asan_piece_t *next;
};

/* A pool that has pieces: malloc'd at its first, freed with the pool. */
struct ngx_asan_rec_s {
	ngx_pool_t *pool;
	ngx_asan_piece_t *pieces;
	ngx_asan_rec_t *next; /* in its bucket */
};

/* The records by pool address, a power of two buckets, doubled when the
 * records outnumber them (a worker's live pools: its connections' and
 * requests', the cycle's); a worker is one thread. */
static ngx_asan_rec_t **ngx_asan_buckets;
static ngx_uint_t ngx_asan_nbuckets, ngx_asan_nrecs;

static ngx_asan_rec_t **ngx_asan_bucket(ngx_asan_rec_t **buckets, ngx_uint_t n, ngx_pool_t *pool)
{
	uintptr_t h = (uintptr_t)pool;

	h ^= h >> 17;
	h *= (uintptr_t)0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	return &buckets[h & (n - 1)];
}

/* The pool's record, or NULL when it has none. */
static ngx_asan_rec_t *ngx_asan_pool_find(ngx_pool_t *pool)
{
	ngx_asan_rec_t *rec;

	if (ngx_asan_nbuckets == 0) {
		return NULL;
	}
	for (rec = *ngx_asan_bucket(ngx_asan_buckets, ngx_asan_nbuckets, pool); rec; rec = rec->next) {
		if (rec->pool == pool) {
			return rec;
		}
	}

	return NULL;
}

/* Adds rec to the table, growing it first when full; 0 when it cannot. */
static int ngx_asan_table_add(ngx_asan_rec_t *rec)
{
	ngx_asan_rec_t **buckets, **b, *r, *next;
	ngx_uint_t n, i;

	if (ngx_asan_nrecs >= ngx_asan_nbuckets) {
		n = ngx_asan_nbuckets ? 2 * ngx_asan_nbuckets : 256;
		buckets = calloc(n, sizeof(ngx_asan_rec_t *));
		if (buckets == NULL) {
			return 0;
		}
		for (i = 0; i < ngx_asan_nbuckets; i++) {
			for (r = ngx_asan_buckets[i]; r; r = next) {
				next = r->next;
				b = ngx_asan_bucket(buckets, n, r->pool);
				r->next = *b;
				*b = r;
			}
		}
		free(ngx_asan_buckets);
		ngx_asan_buckets = buckets;
		ngx_asan_nbuckets = n;
	}
	b = ngx_asan_bucket(ngx_asan_buckets, ngx_asan_nbuckets, rec->pool);
	rec->next = *b;
	*b = rec;
	ngx_asan_nrecs++;

	return 1;
}

/* The pool's cleanup: frees every piece not already given to ngx_pfree,
 * and the record. */
static void ngx_asan_pool_release(void *data)
{
	ngx_asan_rec_t *rec = data, **at;
	ngx_asan_piece_t *piece;

	for (piece = rec->pieces; piece; piece = piece->next) {
		free(piece->p);
		piece->p = NULL;
	}
	for (at = ngx_asan_bucket(ngx_asan_buckets, ngx_asan_nbuckets, rec->pool); *at; at = &(*at)->next) {
		if (*at == rec) {
			*at = rec->next;
			ngx_asan_nrecs--;
			break;
		}
	}
	free(rec);
}

/* The module's own dlopen handle: nginx's load_module dlcloses it in a
 * cleanup of the cycle's pool (its data the handle), which must run after
 * the release of the pieces, as ngx_asan_pool_release is the module's. */
static void *ngx_asan_self(void)
{
	static void *self;
	Dl_info info;
	void *h;

	if (self == NULL && dladdr((void *)ngx_asan_self, &info) && info.dli_fname) {
		h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			self = h;
			dlclose(h);
		}
	}

	return self;
}

/* The pool's record, made at the pool's first piece with a cleanup moved
 * to run last: at the tail, or just before the module's dlclose in a
 * cycle's pool. */
static ngx_asan_rec_t *ngx_asan_pool_rec(ngx_pool_t *pool)
{
	ngx_pool_cleanup_t *c, **at;
	ngx_asan_rec_t *rec;
	void *self;

	rec = ngx_asan_pool_find(pool);
	if (rec) {
		return rec;
	}

	rec = calloc(1, sizeof(ngx_asan_rec_t));
	if (rec == NULL) {
		return NULL;
	}
	rec->pool = pool;
	c = __real_ngx_pool_cleanup_add(pool, 0);
	if (c == NULL || !ngx_asan_table_add(rec)) {
		if (c) {
			c->handler = NULL; /* nginx skips a cleanup without one */
		}
		free(rec);
		return NULL;
	}
	c->handler = ngx_asan_pool_release;
	c->data = rec;

	/* without its handle (no dladdr) it goes to the tail, and the release
	 * after the dlclose is a report at exit */
	self = ngx_asan_self();
	pool->cleanup = c->next;
	for (at = &pool->cleanup; *at && (self == NULL || (*at)->data != self); at = &(*at)->next) {
		/* void */
	}
	c->next = *at;
	*at = c;

	return rec;
}

/* Remembers p as a piece of pool; frees it and says NULL when it cannot. */
static void *ngx_asan_pool_keep(ngx_pool_t *pool, void *p)
{
	ngx_asan_rec_t *rec;
	ngx_asan_piece_t *piece;

	if (p == NULL) {
		return NULL;
	}
	rec = ngx_asan_pool_rec(pool);
	piece = rec ? __real_ngx_palloc(pool, sizeof(ngx_asan_piece_t)) : NULL;
	if (piece == NULL) {
		free(p);
		return NULL;
	}
	piece->p = p;
	piece->next = rec->pieces;
	rec->pieces = piece;

	return p;
}

/* malloc's alignment is at least NGX_ALIGNMENT (sizeof(unsigned long)). */
void *__wrap_ngx_palloc(ngx_pool_t *pool, size_t size)
{
	return ngx_asan_pool_keep(pool, malloc(size));
}

void *__wrap_ngx_pnalloc(ngx_pool_t *pool, size_t size)
{
	return ngx_asan_pool_keep(pool, malloc(size));
}

void *__wrap_ngx_pcalloc(ngx_pool_t *pool, size_t size)
{
	return ngx_asan_pool_keep(pool, calloc(1, size ? size : 1));
}

void *__wrap_ngx_pmemalign(ngx_pool_t *pool, size_t size, size_t alignment)
{
	void *p;

	if (alignment < sizeof(void *)) {
		alignment = sizeof(void *);
	}
	if (posix_memalign(&p, alignment, size) != 0) {
		return NULL;
	}

	return ngx_asan_pool_keep(pool, p);
}

/* Frees a piece of the module's at once, whatever its size (nginx frees
 * only its large allocations and keeps a small piece until the pool
 * goes): a use after ngx_pfree is a report even where the stock pool
 * would have left the memory in place. */
ngx_int_t __wrap_ngx_pfree(ngx_pool_t *pool, void *p)
{
	ngx_asan_rec_t *rec;
	ngx_asan_piece_t *piece;

	/* the pool's pieces, newest first: the module gives back a buffer it
	 * grew, seldom (a request's kept body) */
	rec = ngx_asan_pool_find(pool);
	for (piece = rec ? rec->pieces : NULL; piece; piece = piece->next) {
		if (p && piece->p == p) {
			free(p);
			piece->p = NULL;
			return NGX_OK;
		}
	}

	return __real_ngx_pfree(pool, p);
}

/* As nginx's: a zeroed buf over size bytes of memory; the buf and its
 * memory are two pieces, each bounded. */
ngx_buf_t *__wrap_ngx_create_temp_buf(ngx_pool_t *pool, size_t size)
{
	ngx_buf_t *b;

	b = ngx_calloc_buf(pool);
	if (b == NULL) {
		return NULL;
	}
	b->start = ngx_palloc(pool, size);
	if (b->start == NULL) {
		return NULL;
	}
	b->pos = b->start;
	b->last = b->start;
	b->end = b->last + size;
	b->temporary = 1;

	return b;
}

/* A new link (its fields unset, as nginx's), never one from pool->chain. */
ngx_chain_t *__wrap_ngx_alloc_chain_link(ngx_pool_t *pool)
{
	return ngx_palloc(pool, sizeof(ngx_chain_t));
}

ngx_array_t *__wrap_ngx_array_create(ngx_pool_t *p, ngx_uint_t n, size_t size)
{
	ngx_array_t *a;

	a = ngx_palloc(p, sizeof(ngx_array_t));
	if (a == NULL || ngx_array_init(a, p, n, size) != NGX_OK) {
		return NULL;
	}

	return a;
}

/* As nginx's, but a full array always moves to a new piece of twice its
 * size (nginx grows it in place when it ends its pool's block). */
void *__wrap_ngx_array_push(ngx_array_t *a)
{
	void *elts;
	ngx_uint_t nalloc;

	if (a->nelts == a->nalloc) {
		nalloc = a->nalloc ? 2 * a->nalloc : 1;
		elts = ngx_palloc(a->pool, nalloc * a->size);
		if (elts == NULL) {
			return NULL;
		}
		if (a->nelts) {
			ngx_memcpy(elts, a->elts, a->nelts * a->size);
		}
		a->elts = elts;
		a->nalloc = nalloc;
	}

	return (u_char *)a->elts + a->size * a->nelts++;
}

/* The cleanup is nginx's, its data a piece (freed after every handler). */
ngx_pool_cleanup_t *__wrap_ngx_pool_cleanup_add(ngx_pool_t *p, size_t size)
{
	ngx_pool_cleanup_t *c;

	c = __real_ngx_pool_cleanup_add(p, 0);
	if (c == NULL) {
		return NULL;
	}
	if (size) {
		c->data = ngx_palloc(p, size);
		if (c->data == NULL) {
			return NULL;
		}
	}

	return c;
}
