/*
 * A router's admin-path handlers for test_inspect_size.c: handle_inspect
 * adds as many keys as one inspect takes (64), each of the longest key
 * and value the control plane keeps, so that the router's INSPECT is as
 * large as a router can make it; the first one overrides a built-in key
 * (the first route's cpus) with a value of its own.
 *
 * handlers_arg is the first route's name.  Only the public
 * <shmr/handler.h>: it is loaded as any handlers object.
 */
#include <stdio.h>
#include <string.h>

#include <shmr/handler.h>

#define FAT_KEYS 64
#define FAT_KEY_LEN 95  /* struct shmr_ctl_kv_pair.key, less its NUL */
#define FAT_VALUE_LEN 159

static char first_route[64];

static int fat_init(struct shmr_admin *a, const char *arg)
{
	(void)a;
	if (!arg || strlen(arg) >= sizeof(first_route))
		return -1;
	strcpy(first_route, arg);
	return 0;
}

static int fat_inspect(struct shmr_admin *a)
{
	char key[FAT_KEY_LEN + 1], value[FAT_VALUE_LEN + 1];

	memset(value, 'v', FAT_VALUE_LEN);
	value[FAT_VALUE_LEN] = '\0';
	snprintf(key, sizeof(key), "shmr:route:%s:cpus", first_route);
	a->ops->inspect_add(a, key, "fat");
	for (unsigned i = 1; i < FAT_KEYS; i++) {
		memset(key, 'k', FAT_KEY_LEN);
		key[FAT_KEY_LEN] = '\0';
		snprintf(key, 8, "fat:%02u:", i);
		key[7] = 'k';
		a->ops->inspect_add(a, key, value);
	}
	return 0;
}

const struct shmr_handlers shmr_handlers = {
	.abi = SHMR_HANDLERS_ABI,
	.init = fat_init,
	.handle_inspect = fat_inspect,
};
