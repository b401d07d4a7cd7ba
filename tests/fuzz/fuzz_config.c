/*
 * libFuzzer target: the configuration loader (config/), text in, one
 * parsed configuration or one error line out, then the whole-configuration
 * validation of whatever parsed.  config/ has no DPDK dependency, so this
 * links the loader alone.
 *
 * The input is the file's text (a NUL is appended; an input with a NUL of
 * its own is cut there, as a file read by libconfig would be).  Inputs
 * that name "@include" are skipped: libconfig would read another file
 * relative to the working directory, which makes a run depend on the
 * machine rather than on its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shmr_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shmr_config cfg; /* large: not on the stack */
	char err[256];
	char *text;

	if (size > 64 * 1024)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!strstr(text, "@include") &&
	    shmr_config_load_string(text, "<fuzz>", &cfg, err, sizeof(err)) ==
		    0)
		(void)shmr_config_validate(&cfg, err, sizeof(err));
	shmr_config_free(&cfg);
	free(text);
	return 0;
}
