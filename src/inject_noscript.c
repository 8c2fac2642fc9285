/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_noscript.c - the content of a noscript element read twice: as
 * raw text, where the tokenizer (inject.c) reads it as a browser with
 * scripting does, only its end ("</noscript") is matched; as markup, as a
 * browser without scripting tokenizes it, a state machine of its own
 * (M_*, numbered after the HTML standard's tokenizer sections in
 * inject_shared.h) follows tags and attribute names far enough to know
 * whether that reading is back in its data state where the raw text ends,
 * which submitters it builds and which tables it leaves open. Byte by
 * byte: noscript content is short. The state is struct inj_noscript,
 * part of struct csrf_inject.
 */
#include "inject_shared.h"

void inj_noscript_begin(struct inj_noscript *ns)
{
	ns->match = 0;
	ns->lt_clean = 0;
	ns->state = M_TEXT;
	ns->raw = 0;
	ns->tables = 0;
}

static void name_byte(struct inj_noscript *ns, unsigned char c)
{
	if (ns->name_len < INJ_NAME_MAX)
		ns->name[ns->name_len++] = (char)inj_lower(c);
	else
		ns->name_len = INJ_NAME_MAX + 1;
}

/* What a submitter inside noscript has: only names are read. */
enum { NSB_ROUTE = 1 /* formmethod or formaction */, NSB_FORM = 2 /* form="" */ };

static void attr_byte(struct inj_noscript *ns, unsigned char c)
{
	if (ns->attr_len < INJ_ATTR_MAX)
		ns->attr[ns->attr_len++] = (char)inj_lower(c);
	else
		ns->attr_len = INJ_ATTR_MAX + 1;
}

/* An attribute name of a button or input in noscript ended. */
static void attr_done(struct inj_noscript *ns)
{
	const char *a = ns->attr;
	size_t n = ns->attr_len;
	if (!ns->button)
		return;
	if (n == 10 && (memcmp(a, "formmethod", 10) == 0 || memcmp(a, "formaction", 10) == 0))
		ns->bits |= NSB_ROUTE;
	else if (n == 4 && memcmp(a, "form", 4) == 0)
		ns->bits |= NSB_FORM;
}

/* The name of a tag ended: a start tag the model cannot follow spoils the
 * reading, and so does an end tag that moves the form element pointer or
 * what it depends on (</form> clears it, </template> and </select> end
 * what keeps it); iframe and style start their raw text at the tag's end. */
static void name_done(struct inj_noscript *ns, struct inj_tree *tree)
{
	ns->raw = 0;
	uint8_t id = ns->name_len <= INJ_NAME_MAX ? inj_tag_id_html(ns->name, ns->name_len) : T_OTHER;
	/* the depth bound's T: a browser without scripting builds the table */
	tree->table_starts += id == T_TABLE && !ns->is_end;
	ns->button = !ns->is_end && (id == T_BUTTON || id == T_INPUT);
	ns->bits = 0;
	if (inj_is_table_tag(id) && inj_tree_noscript_table(tree, id, ns->is_end, &ns->tables)) {
		ns->state = M_BAD;
		return;
	}
	if (ns->is_end) {
		if (id == T_FORM || id == T_TEMPLATE || id == T_SELECT)
			ns->state = M_BAD;
		return;
	}
	if (inj_tree_noscript_unsafe(id))
		ns->state = M_BAD;
	else if (id == T_IFRAME || id == T_STYLE)
		ns->raw = id;
}

/* A tag in noscript ended: a submitter there that may send its form by
 * GET or elsewhere is judged as such (a browser without scripting builds
 * it: a submitter of the pointer's form). */
static void ns_tag_end(struct inj_noscript *ns, struct inj_tree *tree)
{
	ns->state = ns->raw ? M_RAW : M_TEXT;
	if (ns->button && (ns->bits & NSB_ROUTE))
		inj_tree_noscript_button(tree, ns->bits & NSB_FORM);
	ns->button = 0;
}

/* One byte of noscript content through the markup reading. */
static void markup_byte(struct inj_noscript *ns, struct inj_tree *tree, unsigned char c)
{
	for (;;) {
		switch (ns->state) {
		case M_TEXT:
			if (c == '<')
				ns->state = M_LT;
			return;
		case M_LT:
			if (inj_is_alpha(c)) {
				tree->starts++; /* the depth bound's S: a start tag without scripting */
				ns->is_end = 0;
				ns->name_len = 0;
				name_byte(ns, c);
				ns->state = M_NAME;
				return;
			}
			if (c == '/') {
				ns->state = M_END_OPEN;
				return;
			}
			if (c == '!' || c == '?') { /* comments swallow what follows */
				ns->state = M_BAD;
				return;
			}
			ns->state = M_TEXT;
			continue;
		case M_END_OPEN:
			if (inj_is_alpha(c)) {
				ns->is_end = 1;
				ns->name_len = 0;
				name_byte(ns, c);
				ns->state = M_NAME;
			} else {
				ns->state = c == '>' ? M_TEXT : M_BAD;
			}
			return;
		case M_NAME:
			if (inj_is_ws(c) || c == '/' || c == '>') {
				name_done(ns, tree);
				if (ns->state == M_BAD)
					return;
				ns->state = c == '/' ? M_SELF_CLOSING : M_BEFORE_ATTR;
				if (c == '>')
					ns_tag_end(ns, tree);
			} else {
				name_byte(ns, c);
			}
			return;
		case M_BEFORE_ATTR:
			if (inj_is_ws(c))
				return;
			if (c == '/') {
				ns->state = M_SELF_CLOSING;
			} else if (c == '>') {
				ns_tag_end(ns, tree);
			} else {
				ns->state = M_ATTR; /* '=' first is part of the name */
				ns->attr_len = 0;
				attr_byte(ns, c);
			}
			return;
		case M_ATTR:
			if (inj_is_ws(c) || c == '/' || c == '=' || c == '>')
				attr_done(ns);
			else
				attr_byte(ns, c);
			if (inj_is_ws(c))
				ns->state = M_AFTER_ATTR;
			else if (c == '/')
				ns->state = M_SELF_CLOSING;
			else if (c == '=')
				ns->state = M_BEFORE_VALUE;
			else if (c == '>')
				ns_tag_end(ns, tree);
			return;
		case M_AFTER_ATTR:
			if (inj_is_ws(c))
				return;
			if (c == '/')
				ns->state = M_SELF_CLOSING;
			else if (c == '=')
				ns->state = M_BEFORE_VALUE;
			else if (c == '>')
				ns_tag_end(ns, tree);
			else {
				ns->state = M_ATTR;
				ns->attr_len = 0;
				attr_byte(ns, c);
			}
			return;
		case M_BEFORE_VALUE:
			if (inj_is_ws(c))
				return;
			if (c == '"')
				ns->state = M_DQ;
			else if (c == '\'')
				ns->state = M_SQ;
			else if (c == '>')
				ns_tag_end(ns, tree);
			else
				ns->state = M_UQ;
			return;
		case M_DQ:
		case M_SQ:
			if (c == (ns->state == M_DQ ? '"' : '\''))
				ns->state = M_AFTER_VALUE;
			return;
		case M_UQ:
			if (inj_is_ws(c))
				ns->state = M_BEFORE_ATTR;
			else if (c == '>')
				ns_tag_end(ns, tree);
			return;
		case M_AFTER_VALUE:
			if (inj_is_ws(c)) {
				ns->state = M_BEFORE_ATTR;
				return;
			}
			if (c == '/') {
				ns->state = M_SELF_CLOSING;
				return;
			}
			if (c == '>') {
				ns_tag_end(ns, tree);
				return;
			}
			ns->state = M_BEFORE_ATTR;
			continue;
		case M_SELF_CLOSING:
			if (c == '>') {
				ns_tag_end(ns, tree);
				return;
			}
			ns->state = M_BEFORE_ATTR;
			continue;
		case M_RAW:
			if (c == '<')
				ns->state = M_RAW_LT;
			return;
		case M_RAW_LT:
			if (c == '/') {
				ns->rmatch = 0;
				ns->state = M_RAW_END;
				return;
			}
			ns->state = M_RAW;
			continue;
		case M_RAW_END: {
			uint8_t rl;
			const char *rn = inj_raw_name(ns->raw, &rl);
			if (ns->rmatch < rl && inj_lower(c) == (unsigned char)rn[ns->rmatch]) {
				ns->rmatch++;
				return;
			}
			if (ns->rmatch == rl && (inj_is_ws(c) || c == '/' || c == '>')) {
				ns->raw = 0;
				ns->is_end = 1;
				ns->state = c == '/' ? M_SELF_CLOSING : M_BEFORE_ATTR;
				if (c == '>')
					ns_tag_end(ns, tree);
				return;
			}
			ns->state = M_RAW;
			continue;
		}
		default: /* M_BAD stays */
			return;
		}
	}
}

/* One byte of noscript content through the matcher of its end,
 * "</noscript" and a space, '/' or '>'; 1 when c completes it. */
static int end_byte(struct inj_noscript *ns, unsigned char c)
{
	static const char n[] = "noscript";
	uint8_t m = ns->match;
	if (m == 1 && c == '/') {
		ns->match = 2;
		return 0;
	}
	if (m >= 2 && m < 2 + (sizeof n - 1) && inj_lower(c) == (unsigned char)n[m - 2]) {
		ns->match++;
		return 0;
	}
	if (m == 2 + (sizeof n - 1) && (inj_is_ws(c) || c == '/' || c == '>'))
		return 1;
	ns->match = 0;
	if (c == '<') {
		ns->match = 1;
		ns->lt_clean = ns->state == M_TEXT;
	}
	return 0;
}

size_t inj_noscript_scan(struct inj_noscript *ns, struct inj_tree *tree, const char *chunk, size_t i, size_t len,
                         size_t start, size_t room)
{
	/* byte by byte: noscript content is short */
	while (i < len && !end_byte(ns, (unsigned char)chunk[i]) && ns->state != M_BAD) {
		if (i - start > room && inj_tree_pending(tree))
			inj_tree_too_long(tree);
		markup_byte(ns, tree, (unsigned char)chunk[i++]);
	}
	return i;
}
