/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_tree.c - the injector's model of the HTML tree builder: the
 * part of it that decides which form a field belongs to and which base
 * URL applies. It follows the form element pointer (a <form> while it is
 * set is dropped; </form> clears it even out of scope, but not inside
 * template or select), template contents (no pointer), select (parsed
 * differently by older and newer browsers), foreign content (svg and
 * math, their integration points, the tags that break out of them, and
 * where raw text and CDATA are real), noscript (raw text with scripting,
 * markup without), the first <base href> the browser honours, and the
 * submit buttons of the pointer's form (and form="" ones anywhere). A
 * POST form to this origin is pending until its end tag, its bytes held
 * back by the tokenizer: the token goes in after its start tag unless a
 * button sends the form by GET or elsewhere. Where the
 * model cannot be sure what a browser builds it stops: no token goes
 * into any later form (nor the pending one), and the reason is kept for
 * csrf_inject_status.
 */
#include "inject_internal.h"

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
	return (tag->id >= T_BR && tag->id <= T_BREAKOUT) || tag->id == T_HEAD || (tag->id == T_FONT && tag->font_attr);
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

static void form_start(struct inj_tree *t, struct inj_tag *tag, int *ins)
{
	int relative;
	int v = inj_policy_form(tag, t->base, t->self, &relative);
	if (t->templates > 0) { /* template contents: no pointer, no token */
		if (v == FP_POST_SELF)
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
	t->cur_rel = (uint8_t)relative;
	t->cur_id = tag->has_id;
	if (v == FP_POST_SELF) {
		if (tag->has_id && t->owner_out) { /* a button before it may name it */
			t->status |= CSRF_INJECT_FORM_OWNER;
		} else {
			t->cur_form = CF_PENDING;
			*ins = INS_HOLD;
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
	if (!t->ptr || t->cur_form != CF_PENDING)
		return;
	if (b & BTN_GET)
		hold_back(t, CSRF_INJECT_GET_BUTTON);
	else if (b & BTN_ACTION_OTHER)
		hold_back(t, CSRF_INJECT_FORMACTION);
	else if (b & BTN_ACTION_REL)
		t->cur_rel = 1; /* a later <base> elsewhere would move it */
}

int inj_tree_form_end(struct inj_tree *t)
{
	if (t->stopped || t->depth > 0 || t->select || t->templates > 0 || !t->ptr || t->cur_form != CF_PENDING)
		return 0;
	t->cur_form = CF_OTHER; /* the end tag clears the pointer */
	t->rel_token |= t->cur_rel;
	t->id_token |= t->cur_id;
	t->any_token = 1;
	t->count++;
	return 1;
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

unsigned inj_tree_finish(const struct inj_tree *t)
{
	if (!t->stopped && t->ptr && t->cur_form == CF_PENDING)
		return CSRF_INJECT_UNCLOSED;
	return 0;
}

static void base_start(struct inj_tree *t, struct inj_tag *tag, int maybe)
{
	if (t->base != B_NONE || t->templates > 0)
		return;
	int b = inj_policy_base(tag, t->self);
	if (b == B_NONE || (maybe && b == B_SAME)) /* a maybe-base that is ours: a later one may still count */
		return;
	t->base = (uint8_t)b;
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
		inj_tree_stop(t, CSRF_INJECT_SELECT);
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
	if (is_raw(tag->id)) {
		*next = raw_next(tag->id);
		if (tag->id == T_PLAINTEXT) /* the rest is text: no end tag will come */
			hold_back(t, CSRF_INJECT_UNCLOSED);
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
		if (t->templates == UINT8_MAX)
			inj_tree_stop(t, CSRF_INJECT_TEMPLATE);
		else
			t->templates++;
		return;
	case T_SELECT:
		t->select = 1;
		return;
	case T_FORM:
		form_start(t, tag, ins);
		return;
	case T_BUTTON:
	case T_INPUT:
		button_start(t, tag);
		return;
	case T_BASE:
		base_start(t, tag, 0);
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
		else if (tag->id == T_FORM && t->templates == 0) /* older parsers drop it, newer may not */
			hold_back(t, CSRF_INJECT_SELECT);
		return;
	}
	if (tag->id == T_FORM && t->templates == 0) {
		t->ptr = 0;
		t->cur_form = CF_OTHER;
	} else if (tag->id == T_TEMPLATE && t->templates > 0) {
		t->templates--;
	}
}

int inj_tree_tag(struct inj_tree *t, struct inj_tag *tag, uint8_t *next)
{
	int ins = INS_NONE;
	*next = NEXT_DATA;
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
