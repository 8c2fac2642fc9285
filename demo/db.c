/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * db.c - csrf-demo's data: an SQLite database in WAL mode with users
 * (Argon2id password hashes), login sessions (history only: the live
 * session lives in the csrf_store), stories, votes, accounts and
 * transfers. Created with its demo data on first start, in one
 * transaction that re-checks under the write lock, so instances started
 * at once on a new file create it once and all start. Every state change
 * is one transaction.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS users(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, pwhash TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS accounts(user_id INTEGER PRIMARY KEY REFERENCES users(id),"
    " balance INTEGER NOT NULL CHECK(balance >= 0));"
    "CREATE TABLE IF NOT EXISTS sessions(id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),"
    " started INTEGER NOT NULL, ended INTEGER);"
    "CREATE TABLE IF NOT EXISTS stories(id INTEGER PRIMARY KEY, title TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS votes(id INTEGER PRIMARY KEY, story_id INTEGER NOT NULL REFERENCES stories(id),"
    " user_id INTEGER REFERENCES users(id), type TEXT NOT NULL CHECK(type IN ('y','n')), at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS transfers(id INTEGER PRIMARY KEY, from_id INTEGER NOT NULL REFERENCES users(id),"
    " to_id INTEGER NOT NULL REFERENCES users(id), amount INTEGER NOT NULL CHECK(amount > 0),"
    " at INTEGER NOT NULL);";

static const struct {
	const char *name;
	const char *password;
	int64_t balance;
} demo_users[] = {
    {"alice", "wonderland", 1000},
    {"bob", "builder", 1000},
    {"mallory", "mallory-pw", 0},
};

/* Titles with markup on purpose: the pages must print them as text. */
static const char *const demo_stories[] = {
    "Cross-site request forgery, explained with one <img> tag",
    "Why SameSite=Lax does not stop a page on another port",
    "Tokens, origins & passwords: \"defence in depth\"",
};

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "csrf-demo: database: %s\n", err ? err : "error");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static int has_schema(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='users'", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		found = 1;
	sqlite3_finalize(st);
	return found;
}

/* Creates the tables and the demo data unless another instance did.
 * The passwords are hashed first (Argon2id is slow; the write lock is not
 * held meanwhile), then BEGIN IMMEDIATE takes the write lock (waiting
 * out a concurrent creator within the busy timeout) and the schema is
 * looked for again: the creator that finds it made by another commits
 * nothing. Tables, users, accounts and stories are one transaction, so
 * a reader sees all of it or none. */
static int create_schema(sqlite3 *db)
{
	char hashes[sizeof demo_users / sizeof demo_users[0]][CSRF_PWHASH_LEN];
	for (size_t i = 0; i < sizeof demo_users / sizeof demo_users[0]; i++) {
		const char *pw = demo_users[i].password;
		if (csrf_password_hash(pw, strlen(pw), hashes[i], sizeof hashes[i]) != CSRF_OK) {
			fprintf(stderr, "csrf-demo: could not hash the demo passwords\n");
			return -1;
		}
	}
	if (exec(db, "BEGIN IMMEDIATE") != 0)
		return -1;
	int have = has_schema(db);
	if (have < 0)
		goto fail;
	if (have)
		return exec(db, "COMMIT"); /* another instance was first */
	if (exec(db, schema) != 0)
		goto fail;
	sqlite3_stmt *st = NULL;
	for (size_t i = 0; i < sizeof demo_users / sizeof demo_users[0]; i++) {
		if (sqlite3_prepare_v2(db, "INSERT INTO users(id, name, pwhash) VALUES(?, ?, ?)", -1, &st, NULL) !=
		    SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_text(st, 2, demo_users[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, hashes[i], -1, SQLITE_TRANSIENT);
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			goto fail;
		if (sqlite3_prepare_v2(db, "INSERT INTO accounts(user_id, balance) VALUES(?, ?)", -1, &st, NULL) !=
		    SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_int64(st, 2, demo_users[i].balance);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			goto fail;
	}
	for (size_t i = 0; i < sizeof demo_stories / sizeof demo_stories[0]; i++) {
		if (sqlite3_prepare_v2(db, "INSERT INTO stories(id, title) VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_text(st, 2, demo_stories[i], -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			goto fail;
	}
	return exec(db, "COMMIT");
fail:
	fprintf(stderr, "csrf-demo: database: %s\n", sqlite3_errmsg(db));
	exec(db, "ROLLBACK");
	return -1;
}

/* PRAGMA journal_mode=WAL, tried again while SQLITE_BUSY for up to the
 * busy timeout. On a new file (rollback mode still) connections opened
 * at the same moment each hold a shared lock and want the exclusive one
 * the switch takes: SQLite answers one of them SQLITE_BUSY at once,
 * without the busy handler, as it does for any lock upgrade that would
 * deadlock (instances started together on one new database: "database
 * is locked", fleet.cold_start, about 1 start in 60 under load). */
static int wal_mode(sqlite3 *db)
{
	for (int waited_ms = 0;; waited_ms += 2) {
		int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= 5000) {
			fprintf(stderr, "csrf-demo: database: %s\n", sqlite3_errmsg(db));
			return -1;
		}
		nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
	}
}

static sqlite3 *open_conn(const char *path, int create)
{
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		fprintf(stderr, "csrf-demo: cannot open database %s: %s\n", path,
		        db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	/* a writer waits for another (BEGIN IMMEDIATE), never fails at once */
	sqlite3_busy_timeout(db, 5000);
	if (wal_mode(db) != 0 || exec(db, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL") != 0) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* The calling thread's connection: opened by its first query and kept
 * in app->db_conns for db_close; NULL (said on stderr) when it cannot be
 * opened. One connection shared by the threads would serialise every
 * page on its mutex, and sqlite3_last_insert_rowid would answer for
 * whichever thread inserted last. */
static sqlite3 *conn(demo_app *app)
{
	static __thread sqlite3 *mine;
	static __thread uint64_t mine_of; /* the db_open it belongs to */
	sqlite3 *db;

	if (mine != NULL && mine_of == app->db_gen)
		return mine;
	pthread_mutex_lock(&app->db_lock);
	if (app->db_n == DEMO_DB_CONNS || app->db_path == NULL) {
		if (app->db_path == NULL)
			fprintf(stderr, "csrf-demo: database: not open\n");
		else
			fprintf(stderr, "csrf-demo: database: more threads than connections (%d)\n", DEMO_DB_CONNS);
		pthread_mutex_unlock(&app->db_lock);
		return NULL;
	}
	db = open_conn(app->db_path, 0);
	if (db != NULL)
		app->db_conns[app->db_n++] = db;
	pthread_mutex_unlock(&app->db_lock);
	mine = db;
	mine_of = db != NULL ? app->db_gen : 0;
	return db;
}

int db_open(demo_app *app, const char *path)
{
	/* Numbers every open, so that a thread's cached connection is never
	 * one an earlier db_close closed (at the same app address). */
	static atomic_uint_fast64_t opens;
	app->db_gen = atomic_fetch_add(&opens, 1) + 1;
	app->db_n = 0;
	app->db_path = strdup(path);
	if (app->db_path == NULL || pthread_mutex_init(&app->db_lock, NULL) != 0) {
		fprintf(stderr, "csrf-demo: out of memory\n");
		free(app->db_path);
		app->db_path = NULL;
		return -1;
	}
	sqlite3 *db = open_conn(path, 1);
	if (db == NULL)
		goto fail;
	app->db_conns[app->db_n++] = db;
	int have = has_schema(db);
	if (have < 0)
		goto fail;
	if (!have && create_schema(db) != 0)
		goto fail;
	return 0;
fail:
	db_close(app);
	return -1;
}

void db_close(demo_app *app)
{
	if (app->db_path == NULL)
		return;
	for (int i = 0; i < app->db_n; i++)
		sqlite3_close(app->db_conns[i]);
	app->db_n = 0;
	pthread_mutex_destroy(&app->db_lock);
	free(app->db_path);
	app->db_path = NULL;
	app->db_gen = 0;
}

int db_user_get(demo_app *app, const char *name, size_t len, db_user *out)
{
	if (len > DEMO_USER_MAX)
		return 1;
	sqlite3 *db = conn(app);
	if (db == NULL)
		return -1;
	sqlite3_stmt *st = NULL;
	int ret = -1;
	if (sqlite3_prepare_v2(
	        db,
	        "SELECT u.id, u.name, u.pwhash, a.balance FROM users u JOIN accounts a ON a.user_id = u.id"
	        " WHERE u.name = ?",
	        -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, (int)len, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->id = sqlite3_column_int64(st, 0);
		snprintf(out->name, sizeof out->name, "%s", (const char *)sqlite3_column_text(st, 1));
		snprintf(out->pwhash, sizeof out->pwhash, "%s", (const char *)sqlite3_column_text(st, 2));
		out->balance = sqlite3_column_int64(st, 3);
		ret = 0;
	} else if (rc == SQLITE_DONE) {
		ret = 1;
	}
	sqlite3_finalize(st);
	return ret;
}

int db_stories(demo_app *app, db_story *out, int cap)
{
	sqlite3 *db = conn(app);
	if (db == NULL)
		return -1;
	sqlite3_stmt *st = NULL;
	int n = 0;
	if (sqlite3_prepare_v2(db,
	                       "SELECT s.id, s.title,"
	                       " (SELECT count(*) FROM votes v WHERE v.story_id = s.id AND v.type = 'y'),"
	                       " (SELECT count(*) FROM votes v WHERE v.story_id = s.id AND v.type = 'n')"
	                       " FROM stories s ORDER BY s.id",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (n < cap && sqlite3_step(st) == SQLITE_ROW) {
		out[n].id = sqlite3_column_int64(st, 0);
		snprintf(out[n].title, sizeof out[n].title, "%s", (const char *)sqlite3_column_text(st, 1));
		out[n].up = sqlite3_column_int64(st, 2);
		out[n].down = sqlite3_column_int64(st, 3);
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

/* BEGIN IMMEDIATE takes the database's write lock at once (waiting up
 * to the busy timeout for another thread's transaction), so a
 * transaction never fails half-way for a lock. tx_begin: 0, or -1. */
static int tx_begin(sqlite3 *db)
{
	return exec(db, "BEGIN IMMEDIATE");
}

/* Commits (commit set) or rolls back. 0 when committed; a failed COMMIT
 * is rolled back. */
static int tx_end(sqlite3 *db, int commit)
{
	int r = commit ? exec(db, "COMMIT") : -1;
	if (r != 0)
		exec(db, "ROLLBACK");
	return r;
}

int db_vote(demo_app *app, int64_t story, int64_t user_id, char type)
{
	sqlite3 *db = conn(app);
	if (db == NULL)
		return -1;
	sqlite3_stmt *st = NULL;
	int ret = -1;
	if (tx_begin(db) != 0)
		return -1;
	if (sqlite3_prepare_v2(db,
	                       "INSERT INTO votes(story_id, user_id, type, at)"
	                       " SELECT id, ?, ?, ? FROM stories WHERE id = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		goto done;
	char t[2] = {type, '\0'};
	sqlite3_bind_int64(st, 1, user_id);
	sqlite3_bind_text(st, 2, t, 1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, (int64_t)time(NULL));
	sqlite3_bind_int64(st, 4, story);
	if (sqlite3_step(st) == SQLITE_DONE)
		ret = sqlite3_changes(db) == 1 ? 0 : 1;
done:
	sqlite3_finalize(st);
	if (ret == 0)
		return tx_end(db, 1) == 0 ? 0 : -1;
	tx_end(db, 0);
	return ret;
}

db_xfer db_transfer(demo_app *app, int64_t from_id, int64_t to_id, int64_t amount)
{
	if (amount <= 0 || from_id == to_id)
		return DB_XFER_ERROR;
	sqlite3 *db = conn(app);
	if (db == NULL)
		return DB_XFER_ERROR;
	sqlite3_stmt *st = NULL;
	db_xfer ret = DB_XFER_ERROR;
	if (tx_begin(db) != 0)
		return DB_XFER_ERROR;
	/* The balance is checked inside the transaction that moves it. */
	if (sqlite3_prepare_v2(db, "UPDATE accounts SET balance = balance - ?1 WHERE user_id = ?2 AND balance >= ?1",
	                       -1, &st, NULL) != SQLITE_OK)
		goto done;
	sqlite3_bind_int64(st, 1, amount);
	sqlite3_bind_int64(st, 2, from_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto done;
	if (sqlite3_changes(db) != 1) {
		ret = DB_XFER_NO_FUNDS;
		goto done;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "UPDATE accounts SET balance = balance + ? WHERE user_id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		goto done;
	sqlite3_bind_int64(st, 1, amount);
	sqlite3_bind_int64(st, 2, to_id);
	if (sqlite3_step(st) != SQLITE_DONE || sqlite3_changes(db) != 1)
		goto done;
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "INSERT INTO transfers(from_id, to_id, amount, at) VALUES(?, ?, ?, ?)", -1, &st,
	                       NULL) != SQLITE_OK)
		goto done;
	sqlite3_bind_int64(st, 1, from_id);
	sqlite3_bind_int64(st, 2, to_id);
	sqlite3_bind_int64(st, 3, amount);
	sqlite3_bind_int64(st, 4, (int64_t)time(NULL));
	if (sqlite3_step(st) != SQLITE_DONE)
		goto done;
	ret = DB_XFER_OK;
done:
	sqlite3_finalize(st);
	if (ret == DB_XFER_OK)
		return tx_end(db, 1) == 0 ? DB_XFER_OK : DB_XFER_ERROR;
	tx_end(db, 0);
	return ret;
}

int64_t db_login_record(demo_app *app, int64_t user_id)
{
	sqlite3 *db = conn(app);
	if (db == NULL)
		return 0;
	sqlite3_stmt *st = NULL;
	int64_t row = 0;
	if (sqlite3_prepare_v2(db, "INSERT INTO sessions(user_id, started) VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, user_id);
	sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
	if (sqlite3_step(st) == SQLITE_DONE)
		row = sqlite3_last_insert_rowid(db);
	else
		fprintf(stderr, "csrf-demo: database: a login was not recorded: %s\n", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return row;
}

void db_logout_record(demo_app *app, int64_t row)
{
	if (row <= 0)
		return;
	sqlite3 *db = conn(app);
	if (db == NULL)
		return;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "UPDATE sessions SET ended = ? WHERE id = ? AND ended IS NULL", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
	sqlite3_bind_int64(st, 2, row);
	(void)sqlite3_step(st);
	sqlite3_finalize(st);
}

int db_transfers_of(demo_app *app, int64_t user_id, db_xfer_row *out, int cap)
{
	sqlite3 *db = conn(app);
	if (db == NULL)
		return -1;
	sqlite3_stmt *st = NULL;
	int n = 0;
	if (sqlite3_prepare_v2(db,
	                       "SELECT f.name, t.name, x.amount FROM transfers x JOIN users f ON f.id = x.from_id"
	                       " JOIN users t ON t.id = x.to_id WHERE x.from_id = ?1 OR x.to_id = ?1"
	                       " ORDER BY x.id DESC LIMIT ?2",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, user_id);
	sqlite3_bind_int(st, 2, cap);
	while (n < cap && sqlite3_step(st) == SQLITE_ROW) {
		snprintf(out[n].from, sizeof out[n].from, "%s", (const char *)sqlite3_column_text(st, 0));
		snprintf(out[n].to, sizeof out[n].to, "%s", (const char *)sqlite3_column_text(st, 1));
		out[n].amount = sqlite3_column_int64(st, 2);
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

int db_other_users(demo_app *app, int64_t user_id, char (*out)[DEMO_USER_MAX + 1], int cap)
{
	sqlite3 *db = conn(app);
	if (db == NULL)
		return -1;
	sqlite3_stmt *st = NULL;
	int n = 0;
	if (sqlite3_prepare_v2(db, "SELECT name FROM users WHERE id <> ? ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, user_id);
	while (n < cap && sqlite3_step(st) == SQLITE_ROW) {
		snprintf(out[n], DEMO_USER_MAX + 1, "%s", (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

/* Names and counts are printed into JSON; names are the demo's own
 * [a-z] names, but anything outside a plain safe set is escaped anyway. */
static void json_string(page *b, const char *s)
{
	page_add(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
			page_addn(b, s, 1);
		else
			page_printf(b, "\\u%04x", c);
	}
	page_add(b, "\"");
}

int db_state_json(demo_app *app, page *b)
{
	sqlite3 *db = conn(app);
	if (db == NULL)
		return -1;
	sqlite3_stmt *st = NULL;
	int first = 1;
	page_add(b, "{\"votes\":{");
	if (sqlite3_prepare_v2(db,
	                       "SELECT s.id,"
	                       " (SELECT count(*) FROM votes v WHERE v.story_id = s.id AND v.type = 'y'),"
	                       " (SELECT count(*) FROM votes v WHERE v.story_id = s.id AND v.type = 'n')"
	                       " FROM stories s ORDER BY s.id",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		page_printf(b, "%s\"%lld\":{\"y\":%lld,\"n\":%lld}", first ? "" : ",",
		            (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1),
		            (long long)sqlite3_column_int64(st, 2));
		first = 0;
	}
	sqlite3_finalize(st);
	page_add(b, "},\"balances\":{");
	if (sqlite3_prepare_v2(
	        db, "SELECT u.name, a.balance FROM users u JOIN accounts a ON a.user_id = u.id ORDER BY u.id", -1, &st,
	        NULL) != SQLITE_OK)
		return -1;
	first = 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (!first)
			page_add(b, ",");
		json_string(b, (const char *)sqlite3_column_text(st, 0));
		page_printf(b, ":%lld", (long long)sqlite3_column_int64(st, 1));
		first = 0;
	}
	sqlite3_finalize(st);
	page_add(b, "}}");
	return b->failed ? -1 : 0;
}
