/*
 * shmr-perf iceoryx: the same large payloads through Eclipse iceoryx
 * (Debian's libiceoryx-binding-c-dev and iox-roudi), beside shmr's own
 * (perf_iceoryx_run()).  Built only when the library is found
 * (perf/meson.build).
 *
 * What is compared.  shmr-perf large's arena stream (large.c): a producer
 * allocates a buffer of o->size bytes, stamps a sequence number into it
 * and sends it through the router "perf" to one sink, which checks it.
 * Here a publisher process loans a chunk of o->size bytes from RouDi's
 * mempool, stamps the sequence number, publishes it; a subscriber process
 * takes each chunk, checks the number and releases the chunk.  Neither
 * side rewrites the payload, so both figures are what handing a buffer
 * over costs.  The pool holds as many chunks as shmr's arena class has
 * buffers (64, 16 from 4M up), the subscriber's queue half of them (so a
 * loan never finds the pool empty: iceoryx logs every such failure), and
 * both sides wait rather than drop (the publisher waits for a slow
 * subscriber, the subscriber's queue blocks its producer): nothing is
 * lost, as in shmr.  The two systems get the same two cpus: the producer
 * runs on the client's (shmr's client and sink share it), the consumer on
 * the one shmr's dataplane has (iceoryx has no process in between); the
 * consumer polls and yields when its queue is empty.
 * iceoryx has no router in the path: the pair is a direct
 * publisher-subscriber connection, the way iceoryx moves data.
 *
 * Each run starts its own RouDi (iox-roudi from PATH, a configuration of
 * one segment with one mempool written to a temporary directory) and two
 * fresh processes (iceoryx allows one runtime per process), and stops all
 * three after.  Runs alternate with shmr's own, o->reps pairs, and the
 * ratio printed is the median of the pairs' ratios.  With --json: the
 * memcpy run's record, both runs' of each pair as it ends, and a summary
 * with that ratio's range and spread (perf_json_ratio()).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iceoryx_binding_c/enums.h>
#include <iceoryx_binding_c/log.h>
#include <iceoryx_binding_c/publisher.h>
#include <iceoryx_binding_c/runtime.h>
#include <iceoryx_binding_c/subscriber.h>

#include "perf_internal.h"
#include "perf_modes.h"

#define IOX_SERVICE "shmr", "perf", "large"
#define IOX_STALL_NS 10000000000ull /* no progress for 10 s: a failed run */
#define IOX_REPORT_MS 120000

/* The chunks of the pool: as many as shmr-perf large's arena class has
 * buffers. */
static unsigned iox_pool(const struct perf_opts *o)
{
	return o->size >= (4u << 20) ? 16u : 64u;
}

/* What a child reports on its pipe. */
struct iox_report {
	uint64_t t;        /* publisher: first loan; subscriber: last take */
	uint64_t received; /* subscriber: chunks taken */
	uint64_t bad;      /* subscriber: chunks out of sequence */
	int ok;
};

static void report(int fd, const struct iox_report *r)
{
	(void)!write(fd, r, sizeof(*r));
	close(fd);
}

/* The subscriber: o->count chunks, each stamped with its index. */
static void iox_subscriber(const struct perf_opts *o, int fd)
{
	struct iox_report r = { 0 };
	iox_sub_options_t so;
	iox_sub_storage_t ss;
	iox_sub_t sub;
	uint64_t last = perf_now_ns();

	(void)perf_pin(o->cpu_hub);
	iox_set_loglevel(Iceoryx_LogLevel_Error); /* not "waiting for RouDi" */
	iox_runtime_init("shmr_perf_iox_sub");
	iox_sub_options_init(&so);
	so.queueCapacity = iox_pool(o) / 2;
	so.queueFullPolicy = QueueFullPolicy_BLOCK_PRODUCER;
	sub = iox_sub_init(&ss, IOX_SERVICE, &so);
	while (r.received < o->count) {
		const void *p;
		uint64_t seq, now;

		if (iox_sub_take_chunk(sub, &p) == ChunkReceiveResult_SUCCESS) {
			memcpy(&seq, p, sizeof(seq));
			r.bad += seq != r.received;
			r.received++;
			iox_sub_release_chunk(sub, p);
			last = perf_now_ns();
			continue;
		}
		now = perf_now_ns();
		if (now - last > IOX_STALL_NS)
			break;
		sched_yield(); /* our cpu may be shared (a loaded machine) */
	}
	r.t = perf_now_ns();
	r.ok = r.received == o->count && r.bad == 0;
	report(fd, &r);
	iox_sub_deinit(sub);
	iox_runtime_shutdown();
	exit(0); /* iceoryx's destructors unregister us from RouDi */
}

/* The publisher: waits for the subscriber, reports when it began, then
 * publishes o->count chunks; stays until @p done_fd closes (its chunks
 * may still be queued). */
static void iox_publisher(const struct perf_opts *o, int fd, int done_fd)
{
	struct iox_report r = { 0 };
	iox_pub_options_t po;
	iox_pub_storage_t ps;
	iox_pub_t pub;
	uint64_t t0 = perf_now_ns();
	char c;

	(void)perf_pin(o->cpu_client);
	iox_set_loglevel(Iceoryx_LogLevel_Error);
	iox_runtime_init("shmr_perf_iox_pub");
	iox_pub_options_init(&po);
	po.subscriberTooSlowPolicy = ConsumerTooSlowPolicy_WAIT_FOR_CONSUMER;
	pub = iox_pub_init(&ps, IOX_SERVICE, &po);
	while (!iox_pub_has_subscribers(pub)) {
		if (perf_now_ns() - t0 > IOX_STALL_NS) {
			report(fd, &r);
			_exit(1);
		}
		usleep(1000);
	}
	r.t = perf_now_ns();
	r.ok = 1;
	for (uint64_t k = 0; k < o->count && r.ok; k++) {
		void *p;
		enum iox_AllocationResult a;

		while ((a = iox_pub_loan_chunk(pub, &p, (uint32_t)o->size)) ==
		       AllocationResult_RUNNING_OUT_OF_CHUNKS)
			sched_yield(); /* the subscriber may share our core */
		if (a != AllocationResult_SUCCESS) {
			fprintf(stderr, "shmr-perf iceoryx: loan of %zu bytes "
					"failed (%d)\n",
				o->size, (int)a);
			r.ok = 0;
			break;
		}
		memcpy(p, &k, sizeof(k)); /* the stamp, nothing more */
		iox_pub_publish_chunk(pub, p);
	}
	report(fd, &r);
	(void)!read(done_fd, &c, 1);
	iox_pub_deinit(pub);
	iox_runtime_shutdown();
	exit(0); /* iceoryx's destructors unregister us from RouDi */
}

/* RouDi with one mempool of @p count chunks that hold @p size bytes,
 * its configuration and log in @p dir.  Its pid, or -1. */
static pid_t roudi_start(const char *dir, size_t size, unsigned count)
{
	char conf[512], log[512];
	FILE *f;
	pid_t pid, parent = getpid();

	snprintf(conf, sizeof(conf), "%s/roudi.toml", dir);
	snprintf(log, sizeof(log), "%s/roudi.log", dir);
	f = fopen(conf, "w");
	if (!f)
		return -1;
	/* The chunk header and the payload's alignment fit in 256 bytes. */
	fprintf(f,
		"[general]\nversion = 1\n\n[[segment]]\n\n"
		"[[segment.mempool]]\nsize = %zu\ncount = %u\n",
		size + 256, count);
	fclose(f);
	pid = fork();
	if (pid == 0) {
		int fd;

		/* RouDi cleans its shared memory up on SIGTERM. */
		perf_child_init(parent, SIGTERM);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, 0);
		/* -m off: a subscriber starved of its cpu for 1.5 s (a
		 * loaded machine) must not be taken for dead. */
		execlp("iox-roudi", "iox-roudi", "-c", conf, "-l", "warning",
		       "-m", "off", (char *)NULL);
		fprintf(stderr, "iox-roudi: %s\n", strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		perf_track_pid(pid, SIGTERM);
	return pid;
}

/* Child @p pid's exit status; one that has not exited within
 * IOX_STALL_NS (stuck in iceoryx, say) is killed and counts as failed. */
static int child_wait(pid_t pid)
{
	uint64_t t0 = perf_now_ns();
	int st;
	pid_t r;

	while ((r = waitpid(pid, &st, WNOHANG)) == 0 ||
	       (r < 0 && errno == EINTR)) {
		if (perf_now_ns() - t0 > IOX_STALL_NS) {
			fprintf(stderr, "shmr-perf iceoryx: process %d did not "
					"exit: killed\n", (int)pid);
			kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			return -1;
		}
		usleep(1000);
	}
	if (r < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Read a child's report; 0, or -1 when it sent none within
 * IOX_REPORT_MS (a liveness bound: a run of the largest sizes takes
 * seconds). */
static int report_read(int fd, struct iox_report *r)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n = -1;

	if (poll(&p, 1, IOX_REPORT_MS) == 1)
		n = read(fd, r, sizeof(*r));

	close(fd);
	return n == (ssize_t)sizeof(*r) ? 0 : -1;
}

double perf_iceoryx_stream(const struct perf_opts *o, struct perf_result *r)
{
	char dir[] = "/tmp/shmr-perf-iox-XXXXXX", log[600];
	int sp[2] = { -1, -1 }, pp[2] = { -1, -1 }, done[2] = { -1, -1 };
	struct iox_report rs = { 0 }, rp = { 0 };
	pid_t roudi, sub = -1, pub = -1, parent = getpid();
	double mps = -1;

	memset(r, 0, sizeof(*r));
	r->sent = o->count;
	if (!mkdtemp(dir))
		return -1;
	perf_track_dir(dir);
	snprintf(log, sizeof(log), "%s/roudi.log", dir);
	roudi = roudi_start(dir, o->size, iox_pool(o));
	if (roudi < 0 || pipe(sp) < 0 || pipe(pp) < 0 || pipe(done) < 0)
		goto out;
	fflush(NULL);
	sub = fork();
	if (sub == 0) {
		perf_child_init(parent, SIGKILL); /* never outlive the run */
		close(sp[0]);
		iox_subscriber(o, sp[1]);
	}
	if (sub > 0)
		perf_track_pid(sub, SIGKILL);
	close(sp[1]);
	sp[1] = -1;
	pub = fork();
	if (pub == 0) {
		perf_child_init(parent, SIGKILL);
		close(pp[0]);
		close(done[1]);
		iox_publisher(o, pp[1], done[0]);
	}
	if (pub > 0)
		perf_track_pid(pub, SIGKILL);
	close(pp[1]);
	close(done[0]);
	pp[1] = done[0] = -1;
	if (sub < 0 || pub < 0)
		goto out;
	if (report_read(pp[0], &rp) < 0 || !rp.ok)
		fprintf(stderr, "shmr-perf iceoryx: the publisher failed "
				"(RouDi's log: %s)\n", log);
	else if (report_read(sp[0], &rs) < 0 || !rs.ok)
		fprintf(stderr, "shmr-perf iceoryx: the subscriber took %llu "
				"of %llu chunks, %llu out of sequence\n",
			(unsigned long long)rs.received,
			(unsigned long long)o->count,
			(unsigned long long)rs.bad);
	else if (rs.t > rp.t)
		mps = (double)o->count * 1e9 / (double)(rs.t - rp.t);
	r->received = rs.received;
	r->gaps = rs.bad;
	pp[0] = -1; /* closed by report_read(), or left to exit */
out:
	if (done[1] >= 0)
		close(done[1]); /* the publisher may go */
	if (sub > 0 && child_wait(sub) != 0)
		mps = -1;
	perf_untrack_pid(sub);
	if (pub > 0 && child_wait(pub) != 0)
		mps = -1;
	perf_untrack_pid(pub);
	if (roudi > 0) {
		kill(roudi, SIGTERM);
		if (child_wait(roudi) != 0)
			fprintf(stderr, "shmr-perf iceoryx: RouDi did not stop "
					"cleanly (its log: %s)\n", log);
		perf_untrack_pid(roudi);
	}
	if (mps > 0) {
		char conf[600];

		snprintf(conf, sizeof(conf), "%s/roudi.toml", dir);
		unlink(conf);
		unlink(log);
		rmdir(dir);
	}
	perf_untrack_dir(dir); /* kept on a failure, for RouDi's log */
	return mps;
}

/* --json: one pair's two runs, as they finish. */
static void iox_json_pair(const struct perf_opts *o, unsigned rep,
			  const struct perf_result *shmr,
			  const struct perf_result *iox)
{
	struct json_object *j = perf_large_json("iceoryx", "run", o, "shmr");

	perf_json_u64(j, "rep", rep);
	perf_json_counts(j, shmr);
	perf_large_json_rate(j, o, shmr->mps);
	perf_json_emit(j);
	j = perf_large_json("iceoryx", "run", o, "iceoryx");
	perf_json_u64(j, "rep", rep);
	perf_json_u64(j, "sent", iox->sent);
	perf_json_u64(j, "received", iox->received);
	perf_json_u64(j, "lost", iox->sent > iox->received
					 ? iox->sent - iox->received : 0);
	perf_json_u64(j, "out_of_sequence", iox->gaps);
	perf_json_bool(j, "ok", iox->received == iox->sent && !iox->gaps);
	perf_large_json_rate(j, o, iox->mps);
	perf_json_emit(j);
}

/* --json: the summary of the pairs. */
static void iox_json_summary(const struct perf_opts *o, unsigned n,
			     double cpy, double ms, double mi,
			     const struct perf_ratio *q)
{
	struct json_object *j = perf_large_json("iceoryx", "summary", o, NULL);

	perf_json_u64(j, "reps", n);
	perf_json_num(j, "shmr_msgs_per_s", ms);
	perf_json_num(j, "shmr_gb_per_s", ms * (double)o->size / 1e9);
	perf_json_num(j, "iceoryx_msgs_per_s", mi);
	perf_json_num(j, "iceoryx_gb_per_s", mi * (double)o->size / 1e9);
	perf_json_num(j, "shmr_vs_memcpy", ms / cpy);
	perf_json_num(j, "iceoryx_vs_memcpy", mi / cpy);
	perf_json_ratio(j, "shmr_vs_iceoryx", q);
	perf_json_emit(j);
}

int perf_iceoryx_run(const struct perf_opts *o)
{
	struct perf_opts so = *o;
	double shmr[PERF_REPS_MAX], iox[PERF_REPS_MAX], cpy, ms, mi;
	unsigned n = o->reps < PERF_REPS_MAX ? o->reps : PERF_REPS_MAX;
	struct perf_result ir;
	struct perf_large sr;
	struct perf_ratio q;
	char size[32];

	so.rtt = 0; /* the stream only */
	n = n ? n : 1;
	perf_large_size_name(o->size, size, sizeof(size));
	cpy = perf_large_memcpy(o);
	if (cpy <= 0)
		return -1;
	if (perf_json) {
		struct json_object *j = perf_large_json("iceoryx", "run", &so,
							"memcpy");

		perf_large_json_rate(j, &so, cpy);
		perf_json_emit(j);
	}
	for (unsigned i = 0; i < n; i++) {
		shmr[i] = perf_large_stream(&so, 0, &sr);
		iox[i] = perf_iceoryx_stream(o, &ir);
		if (shmr[i] <= 0 || iox[i] <= 0)
			return -1;
		ir.mps = iox[i];
		printf("iceoryx: %s pair %u: shmr %.3f, iceoryx %.3f M msg/s\n",
		       size, i + 1, shmr[i] / 1e6, iox[i] / 1e6);
		if (perf_json)
			iox_json_pair(&so, i + 1, &sr.stream, &ir);
	}
	ms = perf_median(shmr, n);
	mi = perf_median(iox, n);
	perf_ratio_pairs(shmr, iox, n, &q);
	printf("large: %s %.3f M msg/s %.2f GB/s, vs memcpy %.2f\n", size,
	       ms / 1e6, ms * (double)o->size / 1e9, ms / cpy);
	printf("iceoryx: %s %.3f M msg/s %.2f GB/s, vs memcpy %.2f\n", size,
	       mi / 1e6, mi * (double)o->size / 1e9, mi / cpy);
	printf("iceoryx: %s shmr / iceoryx %.2f (median of %u pairs, %.2f to "
	       "%.2f)\n",
	       size, q.median, q.pairs, q.min, q.max);
	if (perf_json)
		iox_json_summary(&so, n, cpy, ms, mi, &q);
	return 0;
}
