/*
 * shmr_version(): the library's own version, compiled in from the
 * project's (meson.build, through the generated <shmr/version.h>), so a
 * program sees which libshmr it runs with, not only the header it was
 * built against.
 */
#include <shmr/shmr.h>

const char *shmr_version(void)
{
	return SHMR_VERSION_TEXT;
}
