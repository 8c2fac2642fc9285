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
 * Each piece is remembered in a list kept in the pool's own memory and
 * freed by one cleanup of the pool that runs after all the others: it is
 * moved to the tail of pool->cleanup when created, and nginx only ever
 * adds cleanups at the head (in a cycle's pool it goes just before the
 * cleanup that dlcloses the module, registered by load_module before the
 * module ran at all). So no cleanup of the module's or nginx's reads a
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

struct ngx_asan_piece_s {
	void *p;
	ngx_asan_piece_t *next;
};

/* Frees every piece of the pool not already given to ngx_pfree. */
static void ngx_asan_pool_release(void *data)
{
	ngx_asan_piece_t **head = data;
	ngx_asan_piece_t *piece;

	for (piece = *head; piece; piece = piece->next) {
		free(piece->p);
		piece->p = NULL;
	}
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

/* The list head of the pool's pieces, or NULL when it has none yet. */
static ngx_asan_piece_t **ngx_asan_pool_find(ngx_pool_t *pool)
{
	ngx_pool_cleanup_t *c;

	for (c = pool->cleanup; c; c = c->next) {
		if (c->handler == ngx_asan_pool_release) {
			return c->data;
		}
	}

	return NULL;
}

/* The list head of the pool's pieces, its cleanup created at the pool's
 * first piece and moved to run last: at the tail, or just before the
 * module's dlclose in a cycle's pool. */
static ngx_asan_piece_t **ngx_asan_pool_pieces(ngx_pool_t *pool)
{
	ngx_pool_cleanup_t *c, **at;
	ngx_asan_piece_t **head;
	void *self;

	head = ngx_asan_pool_find(pool);
	if (head) {
		return head;
	}

	c = __real_ngx_pool_cleanup_add(pool, sizeof(ngx_asan_piece_t *));
	if (c == NULL) {
		return NULL;
	}
	head = c->data;
	*head = NULL;
	c->handler = ngx_asan_pool_release;

	/* without its handle (no dladdr) it goes to the tail, and the release
	 * after the dlclose is a report at exit */
	self = ngx_asan_self();
	pool->cleanup = c->next;
	for (at = &pool->cleanup; *at && (self == NULL || (*at)->data != self); at = &(*at)->next) {
		/* void */
	}
	c->next = *at;
	*at = c;

	return head;
}

/* Remembers p as a piece of pool; frees it and says NULL when it cannot. */
static void *ngx_asan_pool_keep(ngx_pool_t *pool, void *p)
{
	ngx_asan_piece_t **head, *piece;

	if (p == NULL) {
		return NULL;
	}
	head = ngx_asan_pool_pieces(pool);
	piece = head ? __real_ngx_palloc(pool, sizeof(ngx_asan_piece_t)) : NULL;
	if (piece == NULL) {
		free(p);
		return NULL;
	}
	piece->p = p;
	piece->next = *head;
	*head = piece;

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
	ngx_asan_piece_t **head, *piece;

	head = ngx_asan_pool_find(pool);
	for (piece = head ? *head : NULL; piece; piece = piece->next) {
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
