/*
 * The dataplane's DPDK telemetry commands (telemetry.c).  Internal to
 * shmr-dataplane: not for direct inclusion elsewhere.
 */
#ifndef SHMR_DP_TELEMETRY_H
#define SHMR_DP_TELEMETRY_H

struct shmr_dp_env;

/**
 * Register /shmr/lcores, /shmr/routers, /shmr/routes, /shmr/endpoints and
 * /shmr/lanes with EAL's telemetry, answering from @p env's domain.
 *
 * Context:     after rte_eal_init(), before the lcores start; @p env must
 *              outlive EAL (rte_eal_cleanup()).
 * Concurrency: the callbacks run on DPDK's telemetry threads and only
 *              load from the domain (telemetry.c's opening).
 * Errors:      rte_telemetry_register_cmd()'s -EINVAL / -ENOENT / -ENOMEM.
 */
int shmr_dp_telemetry_register(const struct shmr_dp_env *env);

#endif
