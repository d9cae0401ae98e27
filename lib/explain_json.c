// SPDX-License-Identifier: MIT
/* `explain`, the report as JSON (docs/json.md): the per-process table, the cause and its
 * evidence. */
#include "explain.h"

static json_t *jstr_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static json_t *line_json(const struct npf_xp_report *rep, const struct npf_xp_line *l)
{
	char who[96];

	return json_pack("{s:I, s:I, s:s, s:s, s:s}", "line", (json_int_t)l->lineno, "continued",
			 (json_int_t)l->n_cont, "kind", npf_xp_kind_name(l->kind), "process",
			 npf_xp_proc_label(rep, l->proc, who, sizeof(who)), "text", l->text);
}

json_t *npf_xp_report_to_json(const struct npf_xp_report *rep)
{
	json_t *o = json_object(), *procs = json_array(), *ev = json_array(), *also = json_array();
	char who[96];

	if (!o || !procs || !ev || !also)
		goto fail;
	for (size_t i = 0; i < rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &rep->procs[i];
		json_t *env, *p;

		if (npf_xp_proc_empty(pr))
			continue;
		env = json_object();
		if (!env)
			goto fail;
		for (size_t k = 0; k < pr->n_env; k++)
			if (json_object_set_new(env, pr->env[k].name,
						json_string(pr->env[k].value)))
				break;
		p = json_pack(
		    "{s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}, s:o, s:o, s:{s:o, s:o}, "
		    "s:b, s:I}",
		    "rank", pr->rank >= 0 ? json_integer(pr->rank) : json_null(), "host",
		    jstr_or_null(pr->host), "pid",
		    pr->pid >= 0 ? json_integer(pr->pid) : json_null(), "label",
		    json_string(npf_xp_proc_label(rep, (int)i, who, sizeof(who))), "nccl_version",
		    jstr_or_null(pr->nccl_version), "env", env, "bootstrap", "ifname",
		    jstr_or_null(pr->boot_if), "address", jstr_or_null(pr->boot_addr), "net",
		    jstr_or_null(pr->net), "net_devices", jstr_or_null(pr->net_devs), "ib_oob",
		    "ifname", jstr_or_null(pr->oob_if), "address", jstr_or_null(pr->oob_addr),
		    "init_complete", pr->init_done, "errors", (json_int_t)pr->n_errors);
		if (!p)
			goto fail;
		if (pr->has_error) {
			json_t *fe = line_json(rep, &pr->first_error);

			if (fe && pr->first_error_time >= 0)
				json_object_set_new(fe, "time", json_real(pr->first_error_time));
			json_object_set_new(p, "first_error", fe ? fe : json_null());
			json_object_set_new(p, "failed_because",
					    json_string(pr->primary ? "cause" : "consequence"));
		} else {
			json_object_set_new(p, "first_error", json_null());
			json_object_set_new(p, "failed_because", json_null());
		}
		json_object_set_new(p, "peer_address", jstr_or_null(pr->peer_addr));
		if (json_array_append_new(procs, p))
			goto fail;
	}
	for (size_t i = 0; i < rep->n_evidence; i++)
		if (json_array_append_new(ev, line_json(rep, &rep->evidence[i])))
			goto fail;
	for (size_t i = 0; i < rep->n_also; i++)
		if (json_array_append_new(also, json_string(npf_xp_cause_name(rep->also[i]))))
			goto fail;
	if (json_object_set_new(o, "cause", json_string(npf_xp_cause_name(rep->cause))) ||
	    json_object_set_new(o, "ambiguous", json_boolean(rep->ambiguous)) ||
	    json_object_set_new(o, "summary", jstr_or_null(rep->summary)) ||
	    json_object_set_new(o, "fix_hint", jstr_or_null(rep->fix_hint)) ||
	    json_object_set_new(o, "subject",
				json_pack("{s:o, s:o, s:o}", "ifname",
					  jstr_or_null(rep->subject_if), "address",
					  jstr_or_null(rep->subject_addr), "host",
					  jstr_or_null(rep->subject_host))) ||
	    json_object_set(o, "also", also) ||
	    json_object_set_new(o, "first_failure",
				rep->first_proc >= 0 ? json_string(npf_xp_proc_label(
							   rep, rep->first_proc, who, sizeof(who)))
						     : json_null()) ||
	    json_object_set_new(o, "failed_as_cause", json_integer((json_int_t)rep->n_primary)) ||
	    json_object_set_new(o, "failed_as_consequence",
				json_integer((json_int_t)rep->n_secondary)) ||
	    json_object_set(o, "evidence", ev) ||
	    json_object_set_new(o, "lines", json_integer((json_int_t)rep->n_lines)) ||
	    json_object_set_new(o, "recognised", json_integer((json_int_t)rep->n_recognised)) ||
	    json_object_set_new(o, "timestamps", json_boolean(rep->has_times)) ||
	    json_object_set_new(o, "truncated", json_boolean(rep->truncated)) ||
	    json_object_set_new(o, "hostlist", jstr_or_null(rep->hostlist)) ||
	    json_object_set(o, "processes", procs))
		goto fail;
	json_decref(procs);
	json_decref(ev);
	json_decref(also);
	return o;
fail:
	json_decref(o);
	json_decref(procs);
	json_decref(ev);
	json_decref(also);
	return NULL;
}
