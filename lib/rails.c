// SPDX-License-Identifier: MIT
/* Rails: which networks carry the job's RDMA traffic (the fabric and its rails), one row
 * per case (docs/decision.md, "Rails"). */
#include "decide.h"

/* The RDMA network the ports follow: the chosen network when it is RDMA-backed; else (the
 * sockets went elsewhere by policy, prefer=eno1 for the bootstrap) the best-ranked RDMA
 * network, if it works here. A lower RDMA network never stands in for a failed better
 * one: that is a broken fabric, not a choice (NCCL_IB_DISABLE). */
int dec_fabric_net(const struct ctx *c)
{
	if (c->nets[c->chosen].rdma)
		return c->chosen;
	for (size_t n = 0; n < c->n_nets; n++)
		if (c->nets[n].rdma)
			return c->nets[n].state == EST_WORKS && !c->nets[n].avoid ? (int)n : -1;
	return -1;
}

/* The rail rule (docs/decision.md, "Rails"): whether network n carries the job's RDMA
 * traffic, one row per case, the first that matches decides. cfg: the port is named by
 * [publish] rdma_fabric (the operator configured it as a rail). */
static bool rail_chosen(const struct ctx *c, size_t n, bool cfg)
{
	(void)cfg;
	return (int)n == c->chosen;
}

static bool rail_mgmt_cfg(const struct ctx *c, size_t n, bool cfg)
{
	return c->nets[n].mgmt && cfg;
}

static bool rail_mgmt(const struct ctx *c, size_t n, bool cfg)
{
	(void)cfg;
	return c->nets[n].mgmt;
}

static bool rail_no_fabric(const struct ctx *c, size_t n, bool cfg)
{
	(void)n;
	(void)cfg;
	return c->fabric < 0;
}

static bool rail_fabric(const struct ctx *c, size_t n, bool cfg)
{
	(void)cfg;
	return (int)n == c->fabric;
}

/* One subnet per rail: RDMA-backed and equal to the fabric on every quality row. */
static bool rail_equal(const struct ctx *c, size_t n, bool cfg)
{
	(void)cfg;
	return c->nets[n].rdma && dec_net_quality_cmp(&c->nets[n], &c->nets[c->fabric]) == 0;
}

static const struct rail_row {
	bool (*match)(const struct ctx *c, size_t n, bool cfg);
	bool rail;
} rail_rows[] = {
    {rail_chosen, true},     /* the job's network itself */
    {rail_mgmt_cfg, true},   /* management (names resolve, default route), rdma_fabric= names it */
    {rail_mgmt, false},	     /* management: never otherwise */
    {rail_no_fabric, false}, /* no RDMA network works: nothing to be a rail of */
    {rail_fabric, true},     /* the RDMA network the ports follow (dec_fabric_net) */
    {rail_equal, true},	     /* a rail of it */
};

bool dec_rail_net(const struct ctx *c, size_t n, bool cfg)
{
	for (size_t i = 0; i < sizeof(rail_rows) / sizeof(rail_rows[0]); i++)
		if (rail_rows[i].match(c, n, cfg))
			return rail_rows[i].rail;
	return false; /* a management or storage network */
}

bool dec_is_rail(const struct ctx *c, size_t n)
{
	return dec_rail_net(c, n, false);
}
