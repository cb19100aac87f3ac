// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "cli/output_config.h"

static enum output_names names(const struct options *o)
{
	if (!o->names_given)
		return NAMES_BY_FORMAT;
	return o->short_names ? NAMES_SHORT : NAMES_FULL;
}

void options__output_config(const struct options *o, struct output_config *oc)
{
	memset(oc, 0, sizeof(*oc));
	memcpy(oc->outputs, o->outputs, sizeof(oc->outputs));
	oc->nr_outputs = o->nr_outputs;
	oc->format = o->format;
	oc->interval = o->interval;
	oc->top = o->top;
	oc->limit = o->limit;

	oc->user = !o->kernel_only;
	oc->kernel = !o->user_only;
	oc->delimited = o->delimited;
	oc->annotations = o->annotations;
	oc->verbose = o->verbose > 0;
	oc->per_cpu = o->per_cpu;
	oc->per_thread = o->per_thread;
	oc->module_labels = o->unknown_module;
	oc->lines = o->native_lines;
	oc->names = names(o);
	oc->title = o->title;
	oc->inverted = o->inverted;
	oc->min_width = o->min_width;
	oc->cmdline = o->cmdline;

	oc->event = o->event.name;
	oc->event_default = event__is_default(&o->event);
	oc->event_clock = event__is_clock(&o->event);
	oc->freq = o->freq;
	oc->period = o->period;
	oc->kind = o->kind;
	if (oc->event_clock && o->freq)
		oc->period_ns = 1000000000ULL / o->freq;
	oc->pids = o->pids ? o->pids_arg : NULL;
	oc->tids = o->tids ? o->tids_arg : NULL;
	oc->cmd = o->cmd ? o->cmd[0] : NULL;
	oc->cpu = o->cpu;
	oc->duration = o->duration;
	oc->otlp = o->otlp_config;
}
