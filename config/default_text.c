/*
 * The embedded default configuration: config/default.conf, pulled into
 * .rodata by the assembler at build time, so the binary and the file that
 * operators read can never disagree.  meson passes the file's absolute path
 * as SHMR_DEFAULT_CONF and rebuilds this object when the file changes
 * (default_conf_stamp.h is regenerated from it).
 */
#include "default_conf_stamp.h"
#include "shmr_config.h"

#ifndef SHMR_DEFAULT_CONF
#error "SHMR_DEFAULT_CONF (absolute path of config/default.conf) is not set"
#endif

/* The text, then one NUL so it is a C string. */
__asm__(".pushsection .rodata, \"a\", @progbits\n"
	".balign 16\n"
	".globl shmr_config_default_blob\n"
	".hidden shmr_config_default_blob\n"
	".type shmr_config_default_blob, @object\n"
	"shmr_config_default_blob:\n"
	".incbin \"" SHMR_DEFAULT_CONF "\"\n"
	".byte 0\n"
	".size shmr_config_default_blob, . - shmr_config_default_blob\n"
	".popsection\n");

extern const char shmr_config_default_blob[]
	__attribute__((visibility("hidden")));

const char *shmr_config_default_text(void)
{
	return shmr_config_default_blob;
}
