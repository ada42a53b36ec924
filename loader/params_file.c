// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Config files of parameters; see params_load_file() in params.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

/* Read "name value" or "name = value" lines; '#' starts a comment. A line
 * longer than PARAMS_LINE_MAX, one with a NUL byte, one with text after
 * the value, or a parameter given twice is an error naming the file and
 * line: nothing is half-read. */
int params_load_file(struct params *p, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, sub[200];
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, rc = 0;

	if (!f) {
		snprintf(err, errlen, "config file %s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *s = line, *name, *val, *extra, *hash;

		lineno++;
		if ((size_t)n != strlen(line)) {
			snprintf(err, errlen, "%s:%d: the line has a NUL byte", path, lineno);
			rc = -1;
			break;
		}
		if (n > PARAMS_LINE_MAX) {
			snprintf(err, errlen, "%s:%d: the line is longer than %d characters", path,
				 lineno, PARAMS_LINE_MAX);
			rc = -1;
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		name = strtok(s, " \t=\r\n");
		val = strtok(NULL, " \t=\r\n");
		extra = strtok(NULL, " \t\r\n");
		if (extra) {
			snprintf(err, errlen, "%s:%d: '%s' after the value of %s", path, lineno,
				 extra, name);
			rc = -1;
			break;
		}
		/* a second line for one parameter is a mistake (which one was
		 * meant?), not an override */
		if (param_index(name) >= 0 && param_given(p, name)) {
			snprintf(err, errlen, "%s:%d: %s is given twice", path, lineno, name);
			rc = -1;
			break;
		}
		if (param_set(p, name, val, sub, sizeof(sub))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, sub);
			rc = -1;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

