// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd - attach, configure and watch the AFCD/FaLL tc-bpf datapath.
 *
 * The loader (docs/ALGORITHM.md sec. 1, 3, 5) attaches afcd_egress to
 * DEV's tcx or clsact egress with libbpf, checks that sch_fq is the root qdisc,
 * claims a slot in the per-interface maps, writes the config and then
 * keeps m_fair (AFD controller, eq. 3.4-3.5), N and FaLL's global target
 * (eq. 4.5-4.6) fresh every update_period, with a heartbeat the datapath
 * checks: from a BPF timer it arms (afcd_ctl.bpf.o; the process itself
 * only computes the water level every 50 ms), or from the process on old
 * kernels. Everything is pinned under AFCD_PIN_DIR (mode 0600); the
 * datapath keeps working, on its own fallback estimates, while no loader
 * runs.
 *
 * This file is the command table and nothing else; each command is in
 * its cmd_*.c, and its usage is generated from the tables below.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>

#include "cmds.h"
#include "log.h"
#include "opts.h"
#include "params.h"
#include "tc.h"

static int cmd_params(int argc, char **argv);
static const struct opt_def params_opts[];
static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

const struct command commands[] = {
	{ "attach", "DEV rate R [param value]... [options]",
	  "run in the foreground: attach, keep the estimates fresh, clean up on exit",
	  cmd_attach, attach_opts },
	{ "set", "DEV [param value]...",
	  "change a running instance, or configure a filter attached by hand", cmd_set, NULL },
	{ "stats", "DEV [options]", "counters, estimates and flows", cmd_stats, stats_opts_table },
	{ "detach", "DEV", "remove everything afcd put on DEV", cmd_detach, NULL },
	{ "params", "[-j]", "list the parameters and every command's options", cmd_params,
	  params_opts },
	{ "version", "", "the ABI, the libbpf it was built with and runs with, and whether "
	  "tcx is available", cmd_version, NULL },
	{ "completion", "bash", "print the bash completion script (generated from these tables)",
	  cmd_completion, NULL },
	{ "manpage", "afcd.8|afcd.conf.5", "print a manual page in roff (generated from these "
	  "tables; for packagers)", cmd_manpage, NULL },
	{ "help", "[COMMAND]", "this summary, or one command's usage and options (also "
	  "afcd COMMAND -h or --help)", cmd_help, NULL },
};
const size_t ncommands = sizeof(commands) / sizeof(commands[0]);
#define NCOMMANDS ncommands

static void usage(FILE *f)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "%s afcd %s %s\n%-10s %s\n", i ? "      " : "usage:", commands[i].name,
			commands[i].synopsis, "", commands[i].help);
	fprintf(f, "Maps are pinned under %s; see docs/OPERATING.md for bpftool recipes.\n",
		AFCD_PIN_DIR);
}

/* One command's usage: its synopsis, what it does, its options. */
static void command_usage(FILE *f, const struct command *c)
{
	fprintf(f, "usage: afcd %s %s\n  %s\n", c->name, c->synopsis, c->help);
	if (!strcmp(c->name, "attach") || !strcmp(c->name, "set"))
		fprintf(f, "parameters: afcd params\n");
	if (c->opts) {
		fprintf(f, "options:\n");
		opts_usage(f, c->opts);
	}
}

static const struct command *command_named(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* afcd help [COMMAND]: to standard output, exit 0; an unknown COMMAND is
 * an error (2). */
static int cmd_help(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (argc > 2 || !(c = command_named(argv[1]))) {
		pr_warn("help: %s", argc > 2 ? "one command at most" : "no such command");
		usage(stderr);
		return 2;
	}
	command_usage(stdout, c);
	return 0;
}

struct params_opts { bool json; };
static const struct opt_def params_opts[] = {
	{ "json", 'j', OPT_FLAG, offsetof(struct params_opts, json), NULL,
	  "the parameters as JSON: name, unit, help, default (per algo too), min, max" },
	{ NULL }
};

static int cmd_params(int argc, char **argv)
{
	struct params_opts o = { 0 };
	unsigned i;

	if (opts_parse(argc, argv, 1, params_opts, &o, NULL, NULL))
		return 2;
	if (o.json) {
		struct json_object *j = params_table_json();

		printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
		json_object_put(j);
		return 0;
	}
	printf("parameters (afcd attach DEV ... / afcd set DEV ... / config file lines):\n");
	for (i = 0; i < PARAMS_N; i++) {
		char help[512];

		param_help(&params_table[i], help, sizeof(help));
		printf("  %-14s %s\n", params_table[i].name, help);
	}
	for (i = 0; i < NCOMMANDS; i++) {
		if (!commands[i].opts)
			continue;
		printf("\n%s options:\n", commands[i].name);
		opts_usage(stdout, commands[i].opts);
	}
	return 0;
}

/* Machine-readable, one "key value" per line (tests read it). */
static int cmd_version(int argc, char **argv)
{
	char why[192];

	if (argc > 1) {
		pr_warn("usage: afcd version");
		return 2;
	}
	printf("abi %u\n", AFCD_ABI_VERSION);
	printf("libbpf_built %d.%d\n", LIBBPF_MAJOR_VERSION, LIBBPF_MINOR_VERSION);
	printf("libbpf_running %s\n", libbpf_version_string());
	if (tcx_available(1, why, sizeof(why)))    /* ifindex 1: lo, in every netns */
		printf("tcx yes\n");
	else
		printf("tcx no (%s)\n", why);
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	log_libbpf_setup();
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < NCOMMANDS; i++) {
		int k;

		if (strcmp(argv[1], commands[i].name))
			continue;
		/* afcd CMD ... -h|--help: that command's usage, nothing done */
		for (k = 2; k < argc; k++)
			if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
				command_usage(stdout, &commands[i]);
				return 0;
			}
		return commands[i].fn(argc - 1, argv + 1);
	}
	pr_warn("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
