/*
 * Adoption (adopt.c): a control plane that starts while the domain of its
 * configuration still runs (its predecessor died) takes it over instead
 * of creating a new one.  Internal to shmr-control: not for direct
 * inclusion outside control/.
 */
#ifndef SHMR_CONTROL_ADOPT_H
#define SHMR_CONTROL_ADOPT_H

#include "domain.h"
#include "model.h"
#include "pin.h"
#include "server.h"
#include "shmr_config.h"
#include "spawn.h"
#include "state.h"

struct shmr_ctl_adopt {
	/* Given by the daemon */
	const struct shmr_config *cfg;
	struct shmr_ctl_model *m;
	struct shmr_ctl_domain *d;
	struct shmr_ctl_spawner *sp;
	struct shmr_ctl_server *srv;
	struct shmr_ctl_pin *pin;
	const char *sock_path;
	/* Its own: the predecessor's state file, as read */
	struct shmr_ctl_state st;
	unsigned workers;   /* adopted alive */
};

/* shmr_ctl_adopt_domain(): the domain runs, but not as configured. */
#define SHMR_CTL_ADOPT_MISMATCH (-2)

/**
 * Is there a running domain to adopt?  Reads the state file @p f: 1 when
 * it names a live dataplane of this domain (pid and start time match);
 * 0 to start a new domain, after one line saying why when there was a
 * state file (not readable, another domain, its dataplane gone: then the
 * workers it names that still run are stopped, they would be orphans).
 * Context: start-up, holding the domain's lock.
 */
int shmr_ctl_adopt_probe(struct shmr_ctl_adopt *a,
			 const struct shmr_ctl_state_file *f);

/**
 * Take the domain's memory back from the live dataplane (pidfd_getfd of
 * its descriptor), map it and check it: magic, layout version, name and
 * the configuration's geometry.  Then rebuild the model from the domain
 * (spec, endpoint table), the state file and the configuration, and take
 * over the admin endpoint's and the control lane's sides of the dead
 * predecessor.  0; SHMR_CTL_ADOPT_MISMATCH when the running domain is
 * not the configuration's (its geometry, name or routers differ: the
 * caller then leaves it running, untouched, and refuses to start); or -1
 * when it cannot be taken back at all (the caller then stops the old
 * domain's processes and starts a new one); one line says why.
 */
int shmr_ctl_adopt_domain(struct shmr_ctl_adopt *a,
			  struct shmr_ctl_admin *admin);

/** Adoption failed: stop every process the state file names that still
 *  runs (pid and start time match). */
void shmr_ctl_adopt_abandon(struct shmr_ctl_adopt *a);

/** Each route's cpu set from its spec, as the configuration's are parsed
 *  at start-up (pin.c then plans as for a fresh domain). */
void shmr_ctl_adopt_pins(struct shmr_ctl_adopt *a);

/**
 * With the event loop set up: hold the dataplane and every live worker by
 * a pidfd, handle a worker that died meanwhile as a death now, resume the
 * pending operations, and keep the client endpoints of live processes
 * (owned by pid, server.h); those of dead ones are freed.
 */
void shmr_ctl_adopt_processes(struct shmr_ctl_adopt *a);

#endif
