// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Config files of parameters; see params_load_file() in params.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

/* The whole of path, at most PARAMS_FILE_MAX bytes, NUL-terminated, in
 * *buf (malloc'd) and its length in *len: 0, or -1 with the problem in
 * err (cannot open, a read error, too large). */
static int read_bounded(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t n;

	*buf = NULL;
	if (!f) {
		snprintf(err, errlen, "config file %s: %s", path, strerror(errno));
		return -1;
	}
	*buf = malloc(PARAMS_FILE_MAX + 2);
	if (!*buf) {
		snprintf(err, errlen, "config file %s: out of memory", path);
		fclose(f);
		return -1;
	}
	n = fread(*buf, 1, PARAMS_FILE_MAX + 1, f);
	if (ferror(f)) {
		snprintf(err, errlen, "config file %s: read error: %s", path, strerror(errno));
	} else if (n > PARAMS_FILE_MAX) {
		snprintf(err, errlen, "config file %s: larger than %d bytes", path,
			 PARAMS_FILE_MAX);
	} else {
		fclose(f);
		(*buf)[n] = 0;
		*len = n;
		return 0;
	}
	fclose(f);
	free(*buf);
	*buf = NULL;
	return -1;
}

/* Read "name value" or "name = value" lines; '#' starts a comment. A file
 * larger than PARAMS_FILE_MAX, one that cannot be read, a line longer
 * than PARAMS_LINE_MAX, one with a NUL byte, one with text after the
 * value, or a parameter given twice is an error naming the file (and the
 * line): nothing is half-read. */
int params_load_file(struct params *p, const char *path, char *err, size_t errlen)
{
	char *buf, *line, *next, sub[200];
	size_t len;
	int lineno = 0, rc = 0;

	if (read_bounded(path, &buf, &len, err, errlen))
		return -1;
	for (line = buf; line < buf + len; line = next) {
		char *s = line, *name, *val, *extra, *hash, *nl;

		lineno++;
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		next = nl ? nl + 1 : buf + len;
		if (memchr(line, 0, (size_t)(next - line))) {
			snprintf(err, errlen, "%s:%d: the line has a NUL byte", path, lineno);
			rc = -1;
			break;
		}
		if (next - line > PARAMS_LINE_MAX) {
			snprintf(err, errlen, "%s:%d: the line is longer than %d characters", path,
				 lineno, PARAMS_LINE_MAX);
			rc = -1;
			break;
		}
		if (nl)
			*nl = 0;
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
	free(buf);
	return rc;
}
