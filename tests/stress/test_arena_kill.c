/*
 * The payload arena under kill -9 (issue 15, steps 2 and 5): numbered
 * messages in arena buffers stream from three sender processes to five
 * routers, by key: a send through a round-robin router ("sink") to two
 * recording workers, a send through a broadcast router ("fan") to both of
 * its recording workers, whose copies share the buffer, a call through a
 * scatter-gather router ("sg"), whose copies share it too, to two
 * recording workers that answer, and a send through a balancing router
 * ("bq"), whose queue in the dataplane holds a reference, to two
 * recording workers, and a call through a tail-chopping router ("tc"),
 * whose collector holds one for its later tries, to two recording
 * workers that answer (shmr-test-worker --record).  The two answering
 * pairs reply in arena buffers of their own (--reply-buf), and the
 * dataplane runs two routing lcores, so replies polled by the lcore that
 * does not own the call cross to its collector held (forward_collect.c):
 * a kill of the dataplane with such a reply in flight must leak nothing,
 * nor a caller killed between its reply slot's release and its
 * give-back (the reply's buffer is its live worker's: arena.h).  The
 * round-robin and broadcast workers keep each buffer while they look at
 * it (--keep), so a worker killed then leaves a kept buffer under a slot
 * that is redelivered: its payload must still be there (a broadcast
 * copy is kept by a copy into a buffer of the worker's own unless it is
 * the last).
 * Meanwhile
 * the test kills, 1,000 times in all (SHMR_ARENA_KILLS to change it): a
 * sender (mostly while it writes or sends: it does nothing else), a worker
 * of any of the three (while it holds its burst's buffers) and, one kill
 * in fifty, the dataplane.  A killed sender is started again from the
 * last send or call that succeeded (it wrote that into shared memory), so
 * every key is accepted at least once; a call that failed (its collector
 * died with the dataplane) is made again.
 *
 * Afterwards every key has reached a worker at least once, and every
 * broadcast key each of the two broadcast workers (balancing keys but
 * those its queue held when a dataplane was killed: the queue is the
 * dataplane's private memory, lost with it); every arena buffer is
 * free again: occupancy back to its start (0), nothing leaked by a death
 * at any instruction, shared or not.  A worker records a key only when
 * its buffer is sound and begins with the key (shmr-test-worker), so a
 * buffer freed while a slot still referred to it (a reference count
 * given back too often), and reused, would show as a key never received.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/arena.h>
#include <shmr/domain.h>
#include <shmr/proto.h>

#include "shmr_test_app.h"

#define SENDERS 3u
#define PER_SENDER 40000u
#define N (SENDERS * PER_SENDER)

/* What key @p k goes through: 0 sink (send), 1 fan (broadcast send),
 * 2 sg (scatter-gather call), 3 bq (balancing send), 4 tc (tail-chopping
 * call). */
#define WAY(k) ((k) % 5u)
#define IS_CALL(k) (WAY(k) == 2 || WAY(k) == 4)

struct ctx {
	struct shmr_test_client cl;
	struct shmr_arena_view v;
	/* Receive counts: sink's and sg's workers, each fan worker. */
	unsigned char *rec, *fan[2];
	char recpath[300], fanpath[2][300];
	/* Per sender: the next key to send (written by the sender after
	 * each send that returned 0), and its process. */
	_Atomic(uint32_t) *next;
	pid_t sender[SENDERS];
	unsigned kills[3];
};

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* A sender process: keys [next, end) of its range, each in a buffer of
 * 100 or 5000 bytes (the 4K and 64K classes) holding the key. */
static void sender_main(struct ctx *c, unsigned i)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid to[5];
	uint32_t end = (i + 1) * PER_SENDER;

	int rc = 0;

	/* The dataplane may be restarting (killed by the test): open waits
	 * a bounded while for it, and is tried again. */
	for (int t = 0; t < 50; t++) {
		rc = shmr_attach_path(c->cl.app.sock, &d);
		if (rc == 0 && (rc = shmr_endpoint_open(d, &ep)) < 0)
			shmr_detach(d);
		if (rc == 0)
			break;
		pause_us(100000);
	}
	if (rc < 0 || shmr_lookup(d, "sink", &to[0]) < 0 ||
	    shmr_lookup(d, "fan", &to[1]) < 0 ||
	    shmr_lookup(d, "sg", &to[2]) < 0 ||
	    shmr_lookup(d, "bq", &to[3]) < 0 ||
	    shmr_lookup(d, "tc", &to[4]) < 0) {
		fprintf(stderr, "sender %u: %s\n", i, shmr_strerror(rc));
		_exit(3);
	}
	for (uint32_t k = atomic_load(&c->next[i]); k < end;) {
		size_t len = (k / 5) % 2 ? 5000 : 100;
		struct shmr_buf b;
		uint64_t key = k;
		char reply[256];

		rc = shmr_buf_alloc(ep, len, &b);

		if (rc == -SHMR_E_NO_BUFFER) {
			pause_us(200);
			continue;
		}
		if (rc < 0)
			_exit(4);
		memset(b.data, (int)(k & 0xff), len);
		/* A writer that takes its time (a frame being filled): most
		 * kills of a sender land while it holds a buffer unsent. */
		pause_us(50);
		memcpy(b.data, &key, sizeof(key));
		if (IS_CALL(k)) {
			/* The call's copies share the buffer; a call that
			 * failed after its send (the dataplane killed under
			 * it) is made again, with a new buffer. */
			while ((rc = shmr_call_buf(ep, to[WAY(k)], 1, key, &b,
						   len,
						   reply, sizeof(reply),
						   10000)) == -EAGAIN)
				pause_us(100);
			if (rc < 0 && b.data)
				(void)shmr_buf_release(ep, &b);
			if (rc == -SHMR_E_NOT_ALLOWED) {
				/* Refused, not lost: no retry will do. */
				fprintf(stderr, "sender %u: key %u: %s\n", i, k,
					shmr_strerror(rc));
				_exit(6);
			}
			if (rc < 0)
				continue;
		} else {
			while ((rc = shmr_send_buf(ep, to[WAY(k)], 1, key, &b,
						   len)) == -EAGAIN)
				pause_us(100);
			if (rc < 0)
				_exit(5);
		}
		atomic_store(&c->next[i], ++k);
	}
	{
		/* Close only once the dataplane took every send: a close
		 * waits a bounded while (SHMR_CTL_DRAIN_MS of no progress)
		 * and then dead-letters what is left, which a dataplane kill
		 * just before (a restart slower than that on a loaded
		 * machine) would make happen: the likely cause of the
		 * once-seen "key 119939 never received", near the end of a
		 * sender's range (not reproduced). */
		const struct shmr_domain_hdr *h = shmr_hdr(c->cl.base);
		uint32_t me = shmr_endpoint_pid(ep).slot;

		for (int t = 0; t < 120000; t++) {
			int64_t left = 0;

			for (uint32_t l = SHMR_LANE_OUT(h->nlcores);
			     l <= SHMR_LANE_OUT_HIGH(h->nlcores); l++)
				left += shmr_lane_unconsumed(
					shmr_lane_at(c->cl.base, me, l),
					h->lane_size);
			if (left <= 0)
				break;
			pause_us(1000);
		}
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	_exit(0);
}

static void sender_start(struct ctx *c, unsigned i)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0)
		sender_main(c, i);
	c->sender[i] = p;
}

/* Reap sender @p i if it is done (0 exit); 1 when it has finished its
 * range, else restart it if it died. */
static int sender_reap(struct ctx *c, unsigned i, int block)
{
	int status;
	pid_t p;

	if (c->sender[i] == 0)
		return 1;
	p = waitpid(c->sender[i], &status, block ? 0 : WNOHANG);
	if (p != c->sender[i])
		return 0;
	c->sender[i] = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	if (WIFEXITED(status))
		fail_msg("sender %u exited with status %d", i,
			 WEXITSTATUS(status));
	sender_start(c, i);
	return 0;
}

static long long value(struct ctx *c, const char *req, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&c->cl.app, req, ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

/* The first key that did not reach where it should (a worker of sink,
 * sg or bq; each fan worker for a broadcast key), or N.  Balancing keys
 * only with @p with_bq: its queue is the dataplane's private memory, and
 * what it holds is lost with a killed dataplane (arena or not); their
 * buffers must still come back. */
static uint32_t first_missing_of(const struct ctx *c, int with_bq)
{
	for (uint32_t k = 0; k < N; k++) {
		if (WAY(k) == 3 && !with_bq)
			continue;
		if (WAY(k) == 1 ? !c->fan[0][k] || !c->fan[1][k] : !c->rec[k])
			return k;
	}
	return N;
}

static uint32_t first_missing(const struct ctx *c)
{
	return first_missing_of(c, 0);
}

static uint32_t bq_missing(const struct ctx *c)
{
	uint32_t n = 0;

	for (uint32_t k = 3; k < N; k += 5)
		n += !c->rec[k];
	return n;
}

static int all_received(void *arg)
{
	return first_missing(arg) == N;
}

static uint32_t in_use(const struct ctx *c)
{
	return shmr_arena_in_use_all(&c->v);
}

static int arena_free(void *arg)
{
	return in_use(arg) == 0;
}

/* Kill one process (by @p n: senders and workers in turn, the dataplane
 * one time in 50; a worker when no sender is left).  1 when one died. */
static int kill_one(struct ctx *c, unsigned n)
{
	long long pid;

	if (n % 50 == 49) {
		long long starts = value(c, "STATUS", "dataplane_starts");

		/* A killed sender's last sends are drained by the dataplane
		 * within microseconds; a dataplane away for longer than
		 * SHMR_CTL_DRAIN_MS (2 s) while one drains would make the
		 * control plane give them up (close_dropped: the close
		 * bound, not the arena's).  So: none draining now (STATUS
		 * draining, not a guess: a drain behind a full inbox takes
		 * longer on a loaded machine, and one given up during a slow
		 * restart lost a run once), and the next kill only once the
		 * dataplane is back. */
		for (int t = 0; t < 3000 && value(c, "STATUS", "draining") != 0;
		     t++)
			pause_us(10000);
		pid = value(c, "STATUS", "dataplane_pid");
		if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0) {
			const _Atomic(uint64_t) *polls =
				&shmr_stats_of(c->cl.base, 0)->polls;
			uint64_t p0;

			c->kills[2]++;
			for (int t = 0; t < 3000 &&
					value(c, "STATUS", "dataplane_starts") <= starts;
			     t++)
				pause_us(10000);
			/* Started is not yet forwarding (EAL, a loaded
			 * machine): the next kill, which may make a sender's
			 * lanes drain, only once the new one polls. */
			p0 = atomic_load_explicit(polls, memory_order_relaxed);
			for (int t = 0; t < 3000 &&
					atomic_load_explicit(polls,
							     memory_order_relaxed) == p0;
			     t++)
				pause_us(10000);
			pause_us(100000);
			return 1;
		}
		return 0;
	}
	for (unsigned i = 0; n % 2 == 0 && i < SENDERS; i++) {
		unsigned s = (n / 2 + i) % SENDERS;

		if (c->sender[s] && kill(c->sender[s], SIGKILL) == 0) {
			c->kills[0]++;
			(void)sender_reap(c, s, 1);
			return 1;
		}
	}
	{
		/* The workers in turn: sink's, fan's, sg's. */
		static const char *const req[] = { "INSPECT sink", "INSPECT fan",
						   "INSPECT sg", "INSPECT bq",
						   "INSPECT tc" };
		static const char *const key[] = {
			"shmr:route:w0:os_pid", "shmr:route:w1:os_pid",
			"shmr:route:b0:os_pid", "shmr:route:b1:os_pid",
			"shmr:route:s0:os_pid", "shmr:route:s1:os_pid",
			"shmr:route:bq:0:os_pid", "shmr:route:bq:1:os_pid",
			"shmr:route:t0:os_pid", "shmr:route:t1:os_pid",
		};
		unsigned w = (n / 2) % 10;

		pid = value(c, req[w / 2], key[w]);
	}
	if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0) {
		c->kills[1]++;
		return 1;
	}
	return 0;
}

/* Which lanes' unconsumed slots refer to buffer @p i of class @p k
 * (generation @p gen, or the one before: a kept buffer's slot), said on
 * stderr with each lane's owner state: what a leak's cause is read
 * from. */
static void where_referred(struct ctx *c, uint32_t k, uint32_t i,
			   uint32_t gen)
{
	struct shmr_domain_hdr *h = shmr_hdr(c->cl.base);

	for (uint32_t e = 0; e < h->max_endpoints; e++)
		for (uint32_t l = 0; l < SHMR_LANES_PER_EP(h->nlcores); l++) {
			struct rte_ring *r = shmr_lane_at(c->cl.base, e, l);
			uint32_t ct = 0;
			int64_t n = shmr_lane_unconsumed_at(r, h->lane_size,
							    &ct);
			const unsigned char *slots =
				(const unsigned char *)(r + 1);

			for (int64_t j = 0; j < n; j++) {
				const struct shmr_msg *m =
					(const struct shmr_msg *)(slots +
						(uint64_t)((ct + (uint32_t)j) &
							   (h->lane_size - 1)) *
							h->slot_size);
				struct shmr_buf_ref ref;

				if (!(m->flags & SHMR_F_ARENA) ||
				    m->len != sizeof(ref))
					continue;
				memcpy(&ref, m->data, sizeof(ref));
				if (ref.cls == k && ref.index == i &&
				    (ref.gen == gen || ref.gen + 1 == gen))
					fprintf(stderr,
						"test_arena_kill:   referred "
						"to by a slot (kind %u, from "
						"%u, gen %u) in lane %u of "
						"endpoint %u (state %u)\n",
						m->kind, m->from.slot, ref.gen,
						l, e,
						atomic_load(&shmr_ep_at(
							c->cl.base, e)->state));
			}
		}
}

static void test_arena_kill(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	const char *env = getenv("SHMR_ARENA_KILLS");
	unsigned kills = env ? (unsigned)atoi(env) : 1000u, done;
	char conf[4096];
	uint32_t start_in_use;
	(void)state;

	assert_non_null(c);
	c->rec = shmr_test_record_new("arena", N, c->recpath,
				      sizeof(c->recpath));
	c->fan[0] = shmr_test_record_new("arenafan0", N, c->fanpath[0],
					 sizeof(c->fanpath[0]));
	c->fan[1] = shmr_test_record_new("arenafan1", N, c->fanpath[1],
					 sizeof(c->fanpath[1]));
	assert_non_null(c->rec);
	assert_non_null(c->fan[0]);
	assert_non_null(c->fan[1]);
	c->next = mmap(NULL, SENDERS * sizeof(*c->next),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(c->next != MAP_FAILED);
	for (unsigned i = 0; i < SENDERS; i++)
		atomic_store(&c->next[i], i * PER_SENDER);
	snprintf(conf, sizeof(conf),
		 "lcores = 2;\n"
		 "arena = { classes = [ \"4K:64\", \"64K:64\" ]; };\n"
		 "routers = ( { name = \"sink\"; behaviour = \"round-robin\";\n"
		 "  routes = (\n"
		 "    { name = \"w0\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--keep\", \"1\"]; },\n"
		 "    { name = \"w1\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--keep\", \"1\"]; } ); },\n"
		 "  { name = \"fan\"; behaviour = \"broadcast\";\n"
		 "  routes = (\n"
		 "    { name = \"b0\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--keep\", \"1\"]; },\n"
		 "    { name = \"b1\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--keep\", \"1\"]; } ); },\n"
		 "  { name = \"sg\"; behaviour = \"scatter-gather\";\n"
		 "    within_ms = 5000;\n"
		 "  routes = (\n"
		 "    { name = \"s0\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--reply-buf\", \"1\"]; },\n"
		 "    { name = \"s1\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--reply-buf\", \"1\"]; } ); },\n"
		 "  { name = \"bq\"; behaviour = \"balancing\";\n"
		 "    pool = { size = 2; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\"]; }; },\n"
		 "  { name = \"tc\"; behaviour = \"tail-chopping\";\n"
		 "    within_ms = 5000; interval_ms = 20;\n"
		 "  routes = (\n"
		 "    { name = \"t0\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--reply-buf\", \"1\"]; },\n"
		 "    { name = \"t1\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\", \"--reply-buf\", \"1\"]; } ); } );\n",
		 c->recpath, c->recpath, c->fanpath[0], c->fanpath[1],
		 c->recpath, c->recpath, c->recpath, c->recpath, c->recpath);
	assert_int_equal(shmr_test_client_start(&c->cl, "arenakill", conf, 0),
			 0);
	shmr_arena_view_init(&c->v, c->cl.base);
	start_in_use = in_use(c);
	assert_int_equal(start_in_use, 0);

	for (unsigned i = 0; i < SENDERS; i++)
		sender_start(c, i);
	for (unsigned n = 0, killed = 0; killed < kills; n++) {
		pause_us(1000 + rand() % 4000);
		for (unsigned i = 0; i < SENDERS; i++)
			(void)sender_reap(c, i, 0);
		killed += (unsigned)kill_one(c, n);
	}
	/* The senders finish their ranges (restarted as often as needed). */
	do {
		done = 0;
		for (unsigned i = 0; i < SENDERS; i++)
			done += (unsigned)sender_reap(c, i, 1);
	} while (done < SENDERS);
	fprintf(stderr, "test_arena_kill: killed %u senders, %u workers, %u "
		"dataplanes\n", c->kills[0], c->kills[1], c->kills[2]);
	assert_int_equal(c->kills[0] + c->kills[1] + c->kills[2], kills);

	if (!shmr_test_wait(all_received, c, 120000))
		fail_msg("key %u (of %u) never received (close_dropped %lld, "
			 "dead letters in sink %lld)",
			 first_missing(c), N, value(c, "STATUS", "close_dropped"),
			 value(c, "INSPECT sink", "shmr:dlq_size"));
	/* Balancing: what is missing fits in the queues of the dataplanes
	 * killed (one lane's capacity each, at most). */
	fprintf(stderr, "test_arena_kill: %u balancing key(s) lost with "
		"killed dataplanes\n", bq_missing(c));
	assert_true(bq_missing(c) <=
		    c->kills[2] * shmr_hdr(c->cl.base)->lane_size);
	if (c->kills[2] == 0)
		assert_int_equal(first_missing_of(c, 1), N);
	if (!shmr_test_wait(arena_free, c, 30000)) {
		/* Which ones, and in what state (state, holder, references,
		 * held): what a leak's cause is read from. */
		for (uint32_t k = 0; k < c->v.nclasses; k++)
			for (uint32_t i = 0; i < c->v.cls[k].count; i++) {
				uint64_t w = atomic_load(
					shmr_arena_word(&c->v, k, i));

				if (shmr_buf_word_state(w) != SHMR_BUF_FREE) {
					fprintf(stderr,
						"test_arena_kill: class %u "
						"buffer %u: state %u holder "
						"%u refs %u held %u\n",
						k, i, shmr_buf_word_state(w),
						shmr_buf_word_holder(w),
						shmr_buf_word_refs(w),
						shmr_buf_word_held(w));
					where_referred(c, k, i,
						       shmr_buf_word_gen(w));
				}
			}
		fail_msg("%u arena buffers still in use after the run",
			 in_use(c));
	}
	assert_int_equal(in_use(c), start_in_use);
	assert_int_equal(value(c, "STATUS", "close_dropped"), 0);
	/* What the control plane took back is counted (senders died holding
	 * buffers), and nothing is in use. */
	assert_true(value(c, "STATUS", "arena:4K:reclaimed") +
			    value(c, "STATUS", "arena:64K:reclaimed") >
		    0);
	assert_int_equal(value(c, "STATUS", "arena:4K:in_use"), 0);
	assert_int_equal(value(c, "STATUS", "arena:64K:in_use"), 0);
	assert_true(shmr_test_pid_alive(c->cl.app.control));
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	munmap(c->rec, 2 * N);
	unlink(c->recpath);
	for (int f = 0; f < 2; f++) {
		munmap(c->fan[f], 2 * N);
		unlink(c->fanpath[f]);
	}
	free(c);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_kill),
	};

	return cmocka_run_group_tests_name("arena_kill", tests, NULL, NULL);
}
