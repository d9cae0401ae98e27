// SPDX-License-Identifier: MIT
/* Daemon configuration, the INI front end: reads the file's text with inih, checks what inih
 * lets through (section lines, line lengths, duplicate keys), and sets each key through the
 * key table (lib/config.c). The result is published only when the whole file is valid. */
#include "config.h"
#include "config_internal.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parse {
	struct npf_config *cfg; /* scratch copy, published on success */
	const char *text;
	size_t len, pos;
	int line;     /* lines handed to inih so far */
	int err_line; /* first error we found ourselves, 0 if none */
	char *err;
	size_t errlen;
};

static void parse_fail(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void parse_fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err_line)
		return;
	p->err_line = p->line;
	if (!p->err || !p->errlen)
		return;
	n = snprintf(p->err, p->errlen, "line %d: ", p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* A "[name]" line must name a known section and carry nothing but a comment
 * after it: inih would accept "[bogus]" with no keys, or "[probe] junk". */
static bool check_section_line(struct parse *p, const char *l, size_t len)
{
	const char *close = memchr(l, ']', len);
	size_t rest;

	if (!close)
		return true; /* inih reports the syntax error */
	if (!npf_cfg_known_section(l + 1, (size_t)(close - l - 1))) {
		parse_fail(p, "unknown section [%.*s]",
			   (int)(close - l - 1 > 40 ? 40 : close - l - 1), l + 1);
		return false;
	}
	rest = len - (size_t)(close + 1 - l);
	for (const char *c = close + 1; rest; c++, rest--) {
		if (*c == ';' || *c == '#')
			break;
		if (*c != ' ' && *c != '\t') {
			parse_fail(p, "text after [%.*s]", (int)(close - l - 1), l + 1);
			return false;
		}
	}
	return true;
}

/* fgets-like reader for inih: one line per call, so inih's line numbers are
 * ours; it refuses what inih would mangle rather than let it through. */
static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	const char *l, *start;
	size_t end, len;

	if (p->err_line || p->pos >= p->len)
		return NULL;
	p->line++;
	l = start = p->text + p->pos;
	for (end = p->pos; end < p->len && p->text[end] != '\n'; end++)
		;
	len = end - p->pos;
	p->pos = end < p->len ? end + 1 : end;
	if (len && l[len - 1] == '\r')
		len--;
	/* A UTF-8 BOM is dropped here rather than by inih, so the section
	 * check below sees the '[' after it. */
	if (p->line == 1 && len >= 3 && memcmp(l, "\xef\xbb\xbf", 3) == 0) {
		l += 3;
		len -= 3;
	}
	/* Leading blanks would make inih join this line to the previous
	 * value (continuation lines); an indented key is just a key here. */
	while (len && (*l == ' ' || *l == '\t')) {
		l++;
		len--;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)l[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			parse_fail(p, "control character 0x%02x at column %zu", c,
				   (size_t)(l - start) + i + 1);
			return NULL;
		}
	}
	/* inih only knows " ;" inline comments; people write " #" as well
	 * (shell habit) and would otherwise get it inside the value. */
	if (len && *l != ';' && *l != '#') {
		for (size_t i = 1; i < len; i++) {
			if ((l[i] == '#' || l[i] == ';') && (l[i - 1] == ' ' || l[i - 1] == '\t')) {
				len = i - 1;
				break;
			}
		}
	}
	/* +2: the '\n' we hand over and the NUL; inih truncates silently. */
	if (num < 2 || len + 2 > (size_t)num || len > NPF_CONFIG_LINE_MAX) {
		parse_fail(p, "longer than %d bytes",
			   num - 2 < NPF_CONFIG_LINE_MAX ? num - 2 : NPF_CONFIG_LINE_MAX);
		return NULL;
	}
	if (len && *l == '[' && !check_section_line(p, l, len))
		return NULL;
	memcpy(str, l, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	return str;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	const struct npf_config_key *k;
	char why[160], q[72];

	if (p->err_line)
		return 1; /* only the first error is reported */
	if (!section[0]) {
		parse_fail(p, "'%s' is outside any [section]", name);
		return 0;
	}
	k = npf_config_key_find(section, name);
	if (!k) {
		parse_fail(p, "unknown key '%s' in [%s]", name, section);
		return 0;
	}
	if (!value) {
		parse_fail(p, "[%s] %s: no value", section, name);
		return 0;
	}
	if (npf_cfg_apply(p->cfg, k, value, why, sizeof(why)) < 0) {
		parse_fail(p, "[%s] %s: bad value '%s': %s", section, name, npf_cfg_quote(value, q),
			   why);
		return 0;
	}
	return 1;
}

int npf_config_parse(struct npf_config *cfg, const char *text, size_t len, char *err, size_t errlen)
{
	struct parse p = {.text = text, .len = text ? len : 0, .err = err, .errlen = errlen};
	int rc;

	npf_cfg_set_err(err, errlen, "%s", "");
	if (len > NPF_CONFIG_FILE_MAX) {
		npf_cfg_set_err(err, errlen, "config is %zu bytes, more than %u", len,
				NPF_CONFIG_FILE_MAX);
		return -EFBIG;
	}
	p.cfg = malloc(sizeof(*p.cfg));
	if (!p.cfg) {
		npf_cfg_set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	npf_config_defaults(p.cfg);
	/* Debian's inih sizes its line buffer from this knob (default 200);
	 * paths reach 4095 bytes. The reader refuses longer lines whatever
	 * it is set to, so nothing is ever truncated silently. */
	if (ini_max_line < NPF_CONFIG_LINE_MAX + 2)
		ini_max_line = NPF_CONFIG_LINE_MAX + 2;
	rc = ini_parse_stream(reader, &p, handler, &p);
	if (rc == -2) {
		npf_cfg_set_err(err, errlen, "out of memory");
		rc = -ENOMEM;
	} else if (rc > 0 && (!p.err_line || rc < p.err_line)) {
		npf_cfg_set_err(err, errlen,
				"line %d: expected [section], key = value or a comment", rc);
		rc = -EINVAL;
	} else if (p.err_line) {
		rc = -EINVAL;
	} else if (rc != 0) {
		npf_cfg_set_err(err, errlen, "inih failed (%d)", rc);
		rc = -EINVAL;
	} else {
		/* memcpy, not assignment: padding too, so equal configs stay
		 * equal bytes (the zero-fill promise in config.h). */
		memcpy(cfg, p.cfg, sizeof(*cfg));
	}
	free(p.cfg);
	return rc;
}
