/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_tree.c - the injector's model of the HTML tree builder: the
 * part of it that decides which form a field belongs to and which base
 * URL applies. It follows the form element pointer (a <form> while it is
 * set is dropped; </form> clears it even out of scope, but not inside
 * template or select), template contents (no pointer; the insertion
 * mode their first start tag picks, "in column group" dropping most
 * tags), select (parsed differently by older and newer browsers),
 * foreign content (svg and math, their integration points, the tags
 * that break out of them, and where raw text and CDATA are real),
 * noscript (raw text with scripting, markup without), the first <base
 * href> the browser honours, and the submit buttons of the pointer's
 * form (and form="" ones anywhere), and the table modes (whether a form
 * start tag stays open or is popped at once). A POST form to this origin
 * is pending until its end tag, its bytes held back by the tokenizer: the
 * token goes in after its start tag unless a button sends the form by GET
 * or elsewhere. Where the model cannot be sure what a browser builds it stops: no token goes
 * into any later form (nor the pending one), and the reason is kept for
 * csrf_inject_status.
 */
#include "inject_shared.h"

enum { NS_SVG = 1, NS_MATH = 2 };
enum {
	F_HTML_IP = 1, /* HTML integration point: start tags and text are HTML */
	F_TEXT_IP = 2, /* MathML text integration point */
	F_ANNOT = 4    /* MathML annotation-xml: <svg> inside is SVG */
};

void inj_tree_reset(struct inj_tree *t)
{
	const csrf_origin *self = t->self;
	memset(t, 0, offsetof(struct inj_tree, stack));
	t->self = self;
}

void inj_tree_stop(struct inj_tree *t, unsigned reason)
{
	t->stopped = 1;
	t->status |= reason | CSRF_INJECT_STOPPED;
	/* what follows is not read: a <base> there could move a relative action that has the token */
	if (t->rel_token && t->base == B_NONE)
		t->status |= CSRF_INJECT_LATE_BASE;
	/* nor a form="" button that sends a form with an id and the token elsewhere */
	if (t->id_token)
		t->status |= CSRF_INJECT_LATE_OWNER;
	/* nor a button the browser may give to a form with the token */
	if (t->any_token)
		t->status |= CSRF_INJECT_LATE_BUTTON;
}

int inj_tree_cdata(const struct inj_tree *t)
{
	return t->depth > 0;
}

int inj_tree_noscript_unsafe(uint8_t id)
{
	switch (id) {
	case T_IFRAME:
	case T_STYLE: /* the tokenizer follows these two */
		return 0;
	case T_SCRIPT:
	case T_TEXTAREA:
	case T_TITLE:
	case T_XMP:
	case T_NOEMBED:
	case T_NOFRAMES:
	case T_NOSCRIPT:
	case T_PLAINTEXT:
	case T_FORM:
	case T_BASE:
	case T_SELECT:
	case T_TEMPLATE:
	case T_SVG:
	case T_MATH:
	case T_FRAMESET:
		return 1;
	default:
		return 0;
	}
}

/* The tokenizer's state after a raw-text start tag in HTML content. */
static uint8_t raw_next(uint8_t id)
{
	switch (id) {
	case T_SCRIPT:
		return NEXT_SCRIPT;
	case T_NOSCRIPT:
		return NEXT_NOSCRIPT;
	case T_PLAINTEXT:
		return NEXT_PLAINTEXT;
	default:
		return NEXT_RAW;
	}
}

static int is_raw(uint8_t id)
{
	return id >= T_SCRIPT && id <= T_PLAINTEXT;
}

static int is_breakout(const struct inj_tag *tag)
{
	return (tag->id >= T_BR && tag->id <= T_BREAKOUT) || tag->id == T_HEAD || tag->id == T_TABLE ||
	       (tag->id == T_FONT && tag->font_attr);
}

/* A start tag an integration point may hold without the model losing
 * track: void elements that change nothing it follows. */
static int void_ok(uint8_t id)
{
	return (id >= T_BR && id <= T_EMBED) || id == T_VOID || id == T_INPUT || id == T_KEYGEN;
}

static int push(struct inj_tree *t, struct inj_tag *tag, uint8_t ns)
{
	if (t->depth == INJ_FOREIGN_MAX) {
		inj_tree_stop(t, CSRF_INJECT_FOREIGN);
		return 0;
	}
	struct inj_foreign *e = &t->stack[t->depth++];
	e->ns = ns;
	e->len = tag->name_len;
	memcpy(e->name, tag->name, tag->name_len <= INJ_NAME_MAX ? tag->name_len : INJ_NAME_MAX);
	e->flags = 0;
	if (ns == NS_SVG && (tag->id == T_FOREIGNOBJECT || tag->id == T_DESC || tag->id == T_TITLE))
		e->flags = F_HTML_IP;
	else if (ns == NS_MATH && tag->id >= T_MI && tag->id <= T_MTEXT)
		e->flags = F_TEXT_IP;
	else if (ns == NS_MATH && tag->id == T_ANNOTATION_XML)
		e->flags = (uint8_t)(F_ANNOT | (inj_policy_html_annotation(tag) ? F_HTML_IP : 0));
	if (tag->self_closing) /* acknowledged: popped at once */
		t->depth--;
	return 1;
}

/* A start tag processed by the HTML rules at an integration point. */
static void ip_start(struct inj_tree *t, struct inj_tag *tag)
{
	if (tag->id == T_SVG)
		push(t, tag, NS_SVG);
	else if (tag->id == T_MATH)
		push(t, tag, NS_MATH);
	else if (!void_ok(tag->id))
		inj_tree_stop(t, CSRF_INJECT_FOREIGN);
}

static void html_start(struct inj_tree *t, struct inj_tag *tag, uint8_t *next, int *ins);

/* A start tag inside foreign content. */
static void foreign_start(struct inj_tree *t, struct inj_tag *tag, uint8_t *next, int *ins)
{
	const struct inj_foreign *cur = &t->stack[t->depth - 1];
	int html = (cur->flags & F_HTML_IP) ||
	           ((cur->flags & F_TEXT_IP) && tag->id != T_MGLYPH && tag->id != T_MALIGNMARK) ||
	           ((cur->flags & F_ANNOT) && tag->id == T_SVG);
	if (html) {
		ip_start(t, tag);
		return;
	}
	if (is_breakout(tag)) {
		/* pop to an integration point, or out of foreign content */
		while (t->depth > 0 && !(t->stack[t->depth - 1].flags & (F_HTML_IP | F_TEXT_IP)))
			t->depth--;
		if (t->depth == 0)
			html_start(t, tag, next, ins);
		else
			ip_start(t, tag);
		return;
	}
	push(t, tag, cur->ns);
}

/* An end tag inside foreign content: pops to the nearest open element of
 * that name. One that matches none goes to the HTML rules with a stack
 * the model does not keep; </p> and </br> are read differently by the
 * specification and by older parsers. */
static void foreign_end(struct inj_tree *t, const struct inj_tag *tag)
{
	if (tag->id == T_P || tag->id == T_BR) {
		inj_tree_stop(t, CSRF_INJECT_FOREIGN);
		return;
	}
	for (size_t k = t->depth; k-- > 0;) {
		const struct inj_foreign *e = &t->stack[k];
		if (e->len != tag->name_len)
			continue;
		if (e->len > INJ_NAME_MAX) { /* both long: the kept bytes cannot tell */
			inj_tree_stop(t, CSRF_INJECT_FOREIGN);
			return;
		}
		if (memcmp(e->name, tag->name, e->len) == 0) {
			t->depth = (uint8_t)k;
			return;
		}
	}
	inj_tree_stop(t, CSRF_INJECT_FOREIGN);
}

/* ---- template contents (HTML 13.2.6.4.18 "in template", 13.2.6.4.12
 * "in column group") ----
 * The contents begin in the "in template" insertion mode, which their
 * first start tag other than the head's replaces for good (characters,
 * comments and end tags leave it). A <col> there puts them "in column
 * group" with the template as the current node, where every start tag
 * but col and template is ignored (no element, and a <title>, <script>,
 * <noembed> or <plaintext> starts no raw text), and every end tag but
 * </template>; a <template> opens contents of its own, and its end tag
 * brings the mode back. The model follows each level's mode (bits of
 * tpl_moved, tpl_col, tpl_maybe; 64 levels, deeper ones never leave
 * "in template"): while the innermost level's is not picked (tpl_fresh)
 * no tag is plain, so every start tag reaches the model on every scanner
 * path and the first one is known. The head's tags are the spec's base,
 * basefont, bgsound, link, meta, noframes, script, style, template,
 * title; Chromium (156) reads base, basefont, bgsound, noframes and
 * title as any other start tag (the "in body" mode, where a <col> is
 * dropped), Firefox (153 ESR) by the head's rules: a <col> after one of
 * those alone may be either, and the model stops there. */

static uint64_t tpl_bit(const struct inj_tree *t)
{
	return t->templates <= 64 ? UINT64_C(1) << (t->templates - 1u) : 0;
}

static void tpl_sync(struct inj_tree *t)
{
	t->tpl_fresh = (uint8_t)(t->templates > 0 && !(t->tpl_moved & tpl_bit(t)));
}

/* A <template> start tag in HTML content outside select: its contents
 * open "in template". */
static void tpl_open(struct inj_tree *t)
{
	if (t->templates == UINT8_MAX) {
		inj_tree_stop(t, CSRF_INJECT_TEMPLATE);
		return;
	}
	t->templates++;
	uint64_t bit = tpl_bit(t);
	t->tpl_moved &= ~bit;
	t->tpl_col &= ~bit;
	t->tpl_maybe &= ~bit;
	t->tpl_row &= ~bit;
	t->tpl_tbl &= ~bit;
	t->tpl_fresh = 1;
}

/* A table tag in template contents whose first start tag was a table part
 * (HTML content outside select): 1 when Firefox (153 ESR) may look for the
 * row, section or table it closes past the template. The spec's table
 * scope ends at the template, and Chromium (156) keeps to it; Firefox
 * finds the page's own <tr> for a <caption>, <col>, <colgroup>, <tbody>,
 * <tfoot>, <thead>, <tr> or </tr> in "in row" (the template is the row:
 * a <td> or <th> first), its <table> for a </table> in "in table" (the
 * template is the table: another table part first), and its section for
 * a </tbody>, </tfoot> or </thead> in "in table body" that no section of
 * that name inside the template takes (whatever the first tag: a table
 * of the contents' own), pops the template with it, and what
 * follows is live where the model reads inert contents (a form="" button
 * there that sends the page's form elsewhere). Only where a table may be
 * open around the template (outside template contents or in outer ones);
 * levels past 64 count as both. */
static int tpl_table_pop(const struct inj_tree *t, uint8_t id, int is_end)
{
	if (t->tables == 0 && t->templates < 2)
		return 0;
	uint64_t bit = tpl_bit(t);
	int row = !bit || (t->tpl_row & bit), tbl = row || (t->tpl_tbl & bit);
	if (id == T_TBODY || id == T_TFOOT || id == T_THEAD)
		return is_end || row; /* the end tag whatever the kind: an inner table's "in table body" too */
	if (is_end)
		return (tbl && id == T_TABLE) || (row && id == T_TR);
	return row && (id == T_CAPTION || id == T_COL || id == T_COLGROUP || id == T_TR);
}

/* A table end tag in template contents (HTML content outside select). */
static void tpl_table_end(struct inj_tree *t, uint8_t id)
{
	if (tpl_table_pop(t, id, 1))
		inj_tree_stop(t, CSRF_INJECT_TEMPLATE);
}

/* A </template> that closes the innermost one: the mode of the level
 * around it comes back. */
static void tpl_close(struct inj_tree *t)
{
	t->templates--;
	tpl_sync(t);
}

/* A start tag in template contents, HTML content outside select (id, or
 * T_FORM for a form start tag): picks the contents' mode if it is the
 * first. 1 when the tag is ignored ("in column group": no element, no
 * raw text, nothing the model follows) or the model stopped. */
static int tpl_start(struct inj_tree *t, uint8_t id)
{
	uint64_t bit = tpl_bit(t);
	if (t->tpl_col & bit)
		return id != T_COL && id != T_TEMPLATE;
	if (tpl_table_pop(t, id, 0)) {
		inj_tree_stop(t, CSRF_INJECT_TEMPLATE);
		return 1;
	}
	if (t->tpl_moved & bit)
		return 0;
	switch (id) {
	case T_COL:
		if (!bit || (t->tpl_maybe & bit)) { /* "in column group" in some browsers, "in body" in others */
			inj_tree_stop(t, CSRF_INJECT_TEMPLATE);
			return 1;
		}
		t->tpl_col |= bit;
		break;
	case T_TITLE: /* the head's in the spec, any other in Chromium */
	case T_BASE:
	case T_BASEFONT:
	case T_BGSOUND:
	case T_NOFRAMES:
		t->tpl_maybe |= bit;
		return 0;
	case T_LINK: /* the head's everywhere: the mode stays */
	case T_META:
	case T_SCRIPT:
	case T_STYLE:
	case T_TEMPLATE:
		return 0;
	case T_TD:
	case T_TH:
		t->tpl_row |= bit;
		break;
	case T_CAPTION:
	case T_COLGROUP:
	case T_TBODY:
	case T_TFOOT:
	case T_THEAD:
	case T_TR:
		t->tpl_tbl |= bit;
		break;
	default:
		break;
	}
	t->tpl_moved |= bit; /* picked for good */
	tpl_sync(t);
	return 0;
}

/* ---- the table modes (HTML 13.2.6.4.9 to 13.2.6.4.15) ----
 * A <form> start tag in "in table" (and in "in table body", "in row" and
 * "in column group", which hand it there) is inserted and popped at once:
 * the form stays empty, and the elements after it belong to it only
 * through the form element pointer. When the tree builder moves them
 * later (the adoption agency for an <a>, <b>, <nobr>..., foster
 * parenting), browsers reset their form owner to the nearest form among
 * their new ancestors: one that markup before it left open. In a cell or
 * a caption ("in cell", "in caption": the "in body" rules) a form start
 * tag stays open, and the field after it is its child. So the model
 * follows, for each open table, whether a cell or caption is open in it,
 * and which row group (an end tag of another one closes nothing). */

#define TCELL(s) ((unsigned)(s)&3u)
#define TSECT(s) ((unsigned)(s) >> 2 & 3u)

static uint8_t tstate(unsigned cell, unsigned sect)
{
	return (uint8_t)(cell | sect << 2);
}

/* 1 when a form start tag now is inserted and popped at once: a table is
 * open and no cell or caption in it. */
static int table_mode(const struct inj_tree *t)
{
	return t->tables > 0 && TCELL(t->table[t->tables - 1]) == TC_NONE;
}

/* A table start tag (T_TABLE to T_TH) outside template contents. */
static void table_start(struct inj_tree *t, uint8_t id)
{
	if (id == T_TABLE) {
		if (table_mode(t)) { /* "in table": the open table closes, a new one opens */
			t->table[t->tables - 1] = 0;
		} else if (t->tables == INJ_TABLE_MAX) {
			inj_tree_stop(t, CSRF_INJECT_TABLE_FORM);
		} else { /* in body, a cell or a caption: a table inside */
			t->table[t->tables++] = 0;
		}
		return;
	}
	if (t->tables == 0) /* "in body" drops the others */
		return;
	/* an open cell or caption closes first; a row or a cell implies a tbody */
	uint8_t *s = &t->table[t->tables - 1];
	unsigned sect = TSECT(*s) != TS_NONE ? TSECT(*s) : TS_TBODY;
	switch (id) {
	case T_CAPTION:
		*s = tstate(TC_CAPTION, TS_NONE);
		break;
	case T_TBODY:
		*s = tstate(TC_NONE, TS_TBODY);
		break;
	case T_THEAD:
		*s = tstate(TC_NONE, TS_THEAD);
		break;
	case T_TFOOT:
		*s = tstate(TC_NONE, TS_TFOOT);
		break;
	case T_TR:
		*s = tstate(TC_NONE, sect);
		break;
	case T_TD:
		*s = tstate(TC_TD, sect);
		break;
	case T_TH:
		*s = tstate(TC_TH, sect);
		break;
	default: /* colgroup, col: "in column group" */
		*s = 0;
		break;
	}
}

/* 1 when a table end tag closes something the model follows (the element
 * is in table scope); -1 when it may or may not (a </tr>, </tbody>,
 * </thead>, </tfoot> with no cell open: the model keeps no rows); 0 when
 * it is dropped. */
static int table_closes(const struct inj_tree *t, uint8_t id)
{
	if (t->tables == 0)
		return 0;
	unsigned cell = TCELL(t->table[t->tables - 1]), sect = TSECT(t->table[t->tables - 1]);
	switch (id) {
	case T_TABLE:
		return 1;
	case T_TD:
		return cell == TC_TD;
	case T_TH:
		return cell == TC_TH;
	case T_CAPTION:
		return cell == TC_CAPTION;
	case T_TR:
		return cell == TC_TD || cell == TC_TH ? 1 : cell == TC_NONE ? -1 : 0;
	case T_TBODY:
	case T_THEAD:
	case T_TFOOT:
		/* the model knows the open row group: another one's end tag is dropped */
		return cell != TC_CAPTION && sect == (unsigned)(id == T_TBODY   ? TS_TBODY
		                                                : id == T_THEAD ? TS_THEAD
		                                                                : TS_TFOOT);
	default: /* colgroup, col: nothing a cell or caption is closed by */
		return 0;
	}
}

/* A table end tag outside template contents. */
static void table_end(struct inj_tree *t, uint8_t id)
{
	if (table_closes(t, id) != 1)
		return;
	if (id == T_TABLE) {
		t->tables--;
		return;
	}
	uint8_t *s = &t->table[t->tables - 1];
	if (id == T_TBODY || id == T_THEAD || id == T_TFOOT)
		*s = 0; /* the cell, the row and the row group close */
	else
		*s = tstate(TC_NONE, TSECT(*s));
}

/* A table end tag inside select, outside template contents: inside a
 * table, one that closes what is open closes the select first (older
 * parsers: "in select in table"; newer: the cell or table rules); one
 * that may close a row the model does not follow: a stop. */
static void select_table_end(struct inj_tree *t, uint8_t id)
{
	int c = table_closes(t, id);
	if (c < 0) {
		inj_tree_stop(t, CSRF_INJECT_SELECT);
	} else if (c > 0) {
		t->select = 0;
		table_end(t, id);
	}
}

/* 1 when a form's id is simple: 1 to INJ_ID_MAX bytes, each of
 * [A-Za-z0-9_.:-], read whole. Its bytes are then the value the browser
 * reads (no reference, no NUL, no CR), and they go raw into its field's
 * form="". */
static int id_simple(const struct inj_tag *tag)
{
	if (tag->id_over || tag->id_len == 0)
		return 0;
	for (size_t k = 0; k < tag->id_len; k++) {
		unsigned char c = (unsigned char)tag->id_val[k];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == ':' || c == '-'))
			return 0;
	}
	return 1;
}

/* FNV-1a, folded to 32 bits: two ids of one hash only make a deep form
 * fail closed. */
static uint32_t id_hash(const char *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t k = 0; k < n; k++)
		h = (h ^ (unsigned char)p[k]) * UINT64_C(0x100000001b3);
	return (uint32_t)(h ^ (h >> 32));
}

/* A form start tag with an id attribute, anywhere the model reads one as
 * a form (dropped, in template contents, in select: counted alike, the
 * safe side): its id joins the earlier forms'. 1 when its field may name
 * it: the id is simple and no earlier form's is the same (a form=""
 * names the first element in tree order with that id). An empty id is
 * no id (nothing names it); one that is not simple, or one past
 * INJ_FORM_IDS, spoils every later form's (form_ids_bad). */
static int form_id_note(struct inj_tree *t, const struct inj_tag *tag)
{
	if (!id_simple(tag)) {
		t->form_ids_bad |= (uint8_t)(tag->id_len != 0 || tag->id_over);
		return 0;
	}
	uint32_t h = id_hash(tag->id_val, tag->id_len);
	for (size_t k = 0; k < t->form_ids_n; k++)
		if (t->form_ids[k] == h)
			return 0;
	if (t->form_ids_n == INJ_FORM_IDS) {
		t->form_ids_bad = 1;
		return 0;
	}
	t->form_ids[t->form_ids_n++] = h;
	return !t->form_ids_bad;
}

/* The field of a form read deep with an id of its own names that id
 * (cur_own), so that no ghost among its ancestors owns it; when it
 * cannot (own: form_id_note's answer; in a table, content after it could
 * be foster-parented before it with that id), no token. */
static int own_pin(struct inj_tree *t, const struct inj_tag *tag, int own)
{
	if (!own || t->tables > 0)
		return 0;
	memcpy(t->own_id, tag->id_val, tag->id_len);
	t->own_id_len = tag->id_len;
	t->cur_own = 1;
	return 1;
}

static inline void form_start(struct inj_tree *t, struct inj_tag *tag, int *ins)
{
	int relative;
	int v = inj_policy_form(tag, t->base, t->self, &relative);
	int own = tag->has_id && form_id_note(t, tag);
	if (t->templates > 0) { /* template contents: no pointer, no token; "in column group" no form */
		if (!tpl_start(t, T_FORM) && v == FP_POST_SELF)
			t->status |= CSRF_INJECT_TEMPLATE;
		return;
	}
	if (t->ptr) { /* dropped: what follows belongs to the open form */
		if (v == FP_POST_SELF)
			t->status |= CSRF_INJECT_NESTED_FORM;
		return;
	}
	t->ptr = 1;
	t->cur_form = CF_OTHER;
	/* a form="" button before it with a relative formaction may name it */
	t->cur_rel = (uint8_t)(relative || (tag->has_id && t->owner_rel));
	t->cur_id = tag->has_id;
	t->cur_pin = 0;
	t->cur_own = 0;
	if (v == FP_POST_SELF) {
		/* deep, maybe beside its parent, its field then owned by its
		 * nearest ancestor form, which a ghost (a form without the
		 * token whose </form> left it open) can be: the field names
		 * the form, by the injector's id when it has none (cur_pin),
		 * else by its own when that is safe (docs/architecture.md) */
		int deep = inj_tree_deep(t);
		if (table_mode(t)) { /* inserted and popped at once: the field would not be its child */
			t->status |= CSRF_INJECT_TABLE_FORM;
		} else if (tag->has_id && t->owner_out) { /* a button before it may name it */
			t->status |= CSRF_INJECT_FORM_OWNER;
		} else if (deep && tag->has_id && t->ghost && !own_pin(t, tag, own)) {
			t->status |= CSRF_INJECT_DEEP;
		} else {
			t->cur_form = CF_PENDING;
			*ins = INS_HOLD;
			t->cur_pin = (uint8_t)(deep && !tag->has_id);
		}
	} else if (v == FP_POST_BASE) {
		t->status |= CSRF_INJECT_BASE;
	}
}

/* The pointer's form loses its token (reason: a CSRF_INJECT_* bit). */
static void hold_back(struct inj_tree *t, unsigned reason)
{
	if (t->cur_form == CF_PENDING) {
		t->cur_form = CF_OTHER;
		t->status |= reason;
	}
}

void inj_tree_too_long(struct inj_tree *t)
{
	hold_back(t, CSRF_INJECT_LONG_FORM);
}

void inj_tree_pin_failed(struct inj_tree *t)
{
	hold_back(t, CSRF_INJECT_DEEP);
}

/* A button that sends by GET or elsewhere, after a form got the token:
 * read where no form element pointer is set, the tree builder gives it to
 * the nearest form among its ancestors, which can be that form (its end
 * tag came while an element inside it was still open); and a button the
 * pointer gave to a later form loses that owner when the adoption agency
 * moves it, and lands maybe inside that form. The model keeps no open
 * elements: reported. */
static void stray_button(struct inj_tree *t)
{
	if (t->templates == 0 && t->any_token)
		t->status |= CSRF_INJECT_LATE_BUTTON;
}

/* A submit button with a form="" attribute: it submits the form that
 * attribute names, wherever that form is in the document, before or
 * after it. The stream keeps no ids: one that sends by GET or elsewhere
 * takes the token from the open form if that has an id, and from every
 * later form with an id; a form with an id that already has the token
 * cannot be helped: reported. */
static void owner_button(struct inj_tree *t, struct inj_tag *tag)
{
	int b = inj_policy_button(tag, t->base, t->self);
	if (b & BTN_ACTION_REL) { /* a later <base> elsewhere would move it, with whatever form it names */
		t->owner_rel = 1;
		if (t->ptr && t->cur_id)
			t->cur_rel = 1;
		if (t->id_token)
			t->rel_token = 1;
	}
	if (!(b & (BTN_GET | BTN_ACTION_OTHER)))
		return;
	t->owner_out = 1;
	if (t->ptr && t->cur_id)
		hold_back(t, CSRF_INJECT_FORM_OWNER);
	if (t->id_token)
		t->status |= CSRF_INJECT_LATE_OWNER;
}

/* A button or input: a submitter of the pointer's form, or, with form="",
 * of the form it names. */
static void button_start(struct inj_tree *t, struct inj_tag *tag)
{
	if (t->templates > 0) /* template contents: inert */
		return;
	if (tag->has_form) {
		owner_button(t, tag);
		return;
	}
	int b = inj_policy_button(tag, t->base, t->self);
	if (b & (BTN_GET | BTN_ACTION_OTHER))
		stray_button(t);
	/* A relative formaction after a form got the token: the browser may
	 * give the button to that form as it may a stray one (an element left
	 * open in it), and a later <base> elsewhere sends the form there. */
	if ((b & BTN_ACTION_REL) && t->any_token)
		t->rel_token = 1;
	if (!t->ptr || t->cur_form != CF_PENDING)
		return;
	if (b & BTN_GET)
		hold_back(t, CSRF_INJECT_GET_BUTTON);
	else if (b & BTN_ACTION_OTHER)
		hold_back(t, CSRF_INJECT_FORMACTION);
	else if (b & BTN_ACTION_REL)
		t->cur_rel = 1; /* a later <base> elsewhere would move it */
}

void inj_tree_noscript_button(struct inj_tree *t, int has_form)
{
	if (t->stopped || t->templates > 0)
		return;
	if (has_form) {
		t->owner_out = 1;
		if (t->ptr && t->cur_id)
			hold_back(t, CSRF_INJECT_FORM_OWNER);
		if (t->id_token)
			t->status |= CSRF_INJECT_LATE_OWNER;
		return;
	}
	if (t->ptr)
		hold_back(t, CSRF_INJECT_NOSCRIPT_BUTTON);
	stray_button(t);
}

int inj_tree_noscript_table(const struct inj_tree *t, uint8_t id, int is_end, uint8_t *open)
{
	if (*open > 0) { /* inside a table of the noscript's own */
		if (id == T_TABLE && (is_end || *open < UINT8_MAX))
			*open = (uint8_t)(is_end ? *open - 1 : *open + 1);
		return id == T_TABLE && !is_end && *open == UINT8_MAX;
	}
	/* a table inside it (one that replaces another is counted as one more) */
	if (id == T_TABLE && !is_end && !table_mode(t)) {
		(*open)++;
		return 0;
	}
	/* outside tables the others are dropped; inside one they close or open what the model follows */
	return t->tables > 0 || (id == T_TABLE && !is_end);
}

unsigned inj_tree_finish(const struct inj_tree *t)
{
	if (!t->stopped && t->ptr && t->cur_form == CF_PENDING)
		return CSRF_INJECT_UNCLOSED;
	return 0;
}

static void base_start(struct inj_tree *t, struct inj_tag *tag, int maybe)
{
	if (t->templates > 0)
		return;
	if (t->base != B_NONE) {
		/* A base read in a table outside a cell is foster-parented: put
		 * before the table, ahead in tree order of a first base read
		 * inside it (in a cell of it, or of a table in one), which then
		 * is no longer the first. The model keeps no tree: one read while
		 * a table this deep was open may be inside this one. */
		if (t->base == B_SAME && !maybe && table_mode(t) && t->base_tables >= t->tables &&
		    inj_policy_base(tag, t->self) == B_OTHER) {
			t->base = B_NONE;
			base_start(t, tag, 0);
		}
		return;
	}
	int b = inj_policy_base(tag, t->self);
	if (b == B_NONE || (maybe && b == B_SAME)) /* a maybe-base that is ours: a later one may still count */
		return;
	t->base = (uint8_t)b;
	t->base_tables = t->tables;
	if (b == B_OTHER && t->owner_rel) /* form="" buttons read before now send elsewhere */
		t->owner_out = 1;
	if (b == B_OTHER && t->ptr && t->cur_rel)
		hold_back(t, CSRF_INJECT_BASE);
	if (b == B_OTHER && t->rel_token)
		t->status |= CSRF_INJECT_LATE_BASE;
}

/* A start tag inside select: older parsers drop most tags there (and do
 * not switch the tokenizer for them), newer ones build them. */
static void select_start(struct inj_tree *t, struct inj_tag *tag, uint8_t *next)
{
	switch (tag->id) {
	case T_SCRIPT:
		*next = NEXT_SCRIPT;
		return;
	case T_FORM: /* maybe built: the pointer may be set */
		if (tag->has_id)
			(void)form_id_note(t, tag);
		if (!t->ptr && t->templates == 0) {
			t->ptr = 1;
			t->cur_form = CF_OTHER;
		}
		return;
	case T_BASE:
		base_start(t, tag, 1);
		return;
	case T_BUTTON: /* maybe built, and then a submitter */
		button_start(t, tag);
		return;
	case T_SVG:
	case T_MATH:
	case T_TEMPLATE:
	case T_SELECT:
	case T_INPUT:
	case T_KEYGEN:
	case T_TABLE: /* older parsers close the select (in a table) or drop it, newer may build it */
		inj_tree_stop(t, CSRF_INJECT_SELECT);
		return;
	case T_COLGROUP:
	case T_COL: /* inside a table: older parsers drop them, newer close the cell */
		if (t->tables > 0 || t->templates > 0)
			inj_tree_stop(t, CSRF_INJECT_SELECT);
		return;
	case T_CAPTION:
	case T_TBODY:
	case T_THEAD:
	case T_TFOOT:
	case T_TR:
	case T_TD:
	case T_TH:
		/* inside a table both close the select ("in select in table",
		 * or the cell or table rules that pop it); outside one both drop
		 * them; template contents: not followed */
		if (t->templates > 0) {
			inj_tree_stop(t, CSRF_INJECT_SELECT);
		} else if (t->tables > 0) {
			t->select = 0;
			table_start(t, tag->id);
		}
		return;
	default:
		if (is_raw(tag->id))
			inj_tree_stop(t, CSRF_INJECT_SELECT);
		return;
	}
}

static void html_start(struct inj_tree *t, struct inj_tag *tag, uint8_t *next, int *ins)
{
	if (t->select) {
		select_start(t, tag, next);
		return;
	}
	if (t->templates > 0 && tpl_start(t, tag->id))
		return; /* ignored, or stopped */
	if (is_raw(tag->id)) {
		*next = raw_next(tag->id);
		if (tag->id == T_PLAINTEXT) /* the rest is text: no end tag will come */
			hold_back(t, CSRF_INJECT_UNCLOSED);
		return;
	}
	/* a form's usual tags by compares, not in the switch: its jump
	 * table mispredicts as they alternate */
	if (tag->id == T_INPUT || tag->id == T_BUTTON) {
		button_start(t, tag);
		return;
	}
	if (tag->id == T_FORM) {
		form_start(t, tag, ins);
		return;
	}
	switch (tag->id) {
	case T_SVG:
		push(t, tag, NS_SVG);
		return;
	case T_MATH:
		push(t, tag, NS_MATH);
		return;
	case T_TEMPLATE:
		tpl_open(t);
		return;
	case T_SELECT:
		t->select = 1;
		return;
	case T_TABLE:
	case T_CAPTION:
	case T_COLGROUP:
	case T_COL:
	case T_TBODY:
	case T_THEAD:
	case T_TFOOT:
	case T_TR:
	case T_TD:
	case T_TH:
		if (t->templates == 0) /* template contents: a tree of their own */
			table_start(t, tag->id);
		return;
	case T_BASE:
		base_start(t, tag, 0);
		return;
	case T_FRAMESET:
		/* "after head" takes it, "in body" too before any text or
		 * most elements (the frameset-ok flag, not followed): the body
		 * goes, and "in frameset" ignores every start tag but frameset,
		 * frame and noframes, so a <title> or <textarea> starts no raw
		 * text and what the tokenizer reads as its text is markup (a
		 * <frame src> around a form the injector gives the token).
		 * Template contents never take it. */
		if (t->templates == 0)
			inj_tree_stop(t, CSRF_INJECT_FRAMESET);
		return;
	case T_HEAD:
		if (!t->head_done && t->templates == 0) {
			t->head_done = 1;
			*ins = INS_META;
		}
		return;
	default:
		return;
	}
}

static void html_end(struct inj_tree *t, const struct inj_tag *tag)
{
	if (t->select) {
		if (tag->id == T_SELECT)
			t->select = 0;
		else if (tag->id == T_TEMPLATE) /* older parsers close the select with it */
			inj_tree_stop(t, CSRF_INJECT_SELECT);
		else if (tag->id == T_FORM && t->templates == 0) { /* older parsers drop it, newer may not */
			hold_back(t, CSRF_INJECT_SELECT);
			t->ghost |= t->ptr; /* the pointer cleared, maybe: its form has no token */
		} else if (inj_is_table_tag(tag->id) && t->templates == 0)
			select_table_end(t, tag->id);
		else if (inj_is_table_tag(tag->id)) /* closes the select in a table, then tpl_table_pop's */
			inj_tree_stop(t, CSRF_INJECT_SELECT);
		return;
	}
	if (tag->id == T_TEMPLATE && t->templates > 0) {
		tpl_close(t);
	} else if (inj_is_table_tag(tag->id)) {
		if (t->templates == 0)
			table_end(t, tag->id);
		else
			tpl_table_end(t, tag->id);
	}
}

int inj_tree_table_tag(struct inj_tree *t, const struct inj_tag *tag)
{
	/* a <table> start tag may stop the model (too deep): inj_tree_tag */
	if (!inj_is_table_tag(tag->id) || (tag->id == T_TABLE && !tag->is_end) || t->depth > 0 || t->select ||
	    t->stopped)
		return 0;
	if (t->templates == 0) {
		if (tag->is_end)
			table_end(t, tag->id);
		else
			table_start(t, tag->id);
	} else {
		if (tag->is_end)
			tpl_table_end(t, tag->id);
		else
			tpl_start(t, tag->id);
		if (t->stopped)
			return 0; /* inj_tree_tag: the rest passes */
	}
	return 1;
}

int inj_tree_form_start(struct inj_tree *t, struct inj_tag *tag)
{
	int ins = INS_NONE;
	form_start(t, tag, &ins);
	return ins;
}

int inj_tree_tag(struct inj_tree *t, struct inj_tag *tag, uint8_t *next)
{
	int ins = INS_NONE;
	*next = NEXT_DATA;
	if (inj_tree_form_usual(t, tag))
		return inj_tree_form_start(t, tag);
	if (t->stopped) {
		*next = NEXT_PASS;
		return INS_NONE;
	}
	if (t->depth > 0) {
		if (tag->is_end)
			foreign_end(t, tag);
		else
			foreign_start(t, tag, next, &ins);
	} else if (tag->is_end) {
		html_end(t, tag);
	} else {
		html_start(t, tag, next, &ins);
	}
	if (t->stopped) {
		*next = NEXT_PASS;
		return INS_NONE;
	}
	if (ins == INS_META)
		t->count++;
	return ins;
}
