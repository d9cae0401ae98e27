// SPDX-License-Identifier: MIT
/* The variable set being built: whether the policy publishes a variable, and setting or
 * dropping one value (lib/pubvar.h's gates). */
#include "decide.h"

#include <errno.h>
#include <stdlib.h>

bool dec_var_wanted(const struct ctx *c, enum npf_var v)
{
	const struct npf_var_info *r = npf_var_info(v);

	if (!r)
		return false;
	switch (r->gate) {
	case NPF_GATE_ALWAYS:
		return true;
	case NPF_GATE_MASTER_ADDR:
		return c->pol->master_addr;
	case NPF_GATE_VARIABLES:
		break;
	}
	return c->pol->publish == 0 || (c->pol->publish & r->bit);
}

void dec_set_var(struct ctx *c, char **vals, enum npf_var v, const char *value)
{
	if (c->err || !dec_var_wanted(c, v))
		return;
	free(vals[v]);
	vals[v] = strdup(value);
	if (!vals[v])
		c->err = -ENOMEM;
}

void dec_drop_var(char **vals, enum npf_var v)
{
	free(vals[v]);
	vals[v] = NULL;
}
