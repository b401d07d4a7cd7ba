/*
 * shmr-test-worker: a route worker that checks what reaches it.
 *
 *   --expect-type T   count messages of any other type as misrouted
 *   --record FILE     FILE holds 2*N bytes: per key k < N, a receive count
 *                     (saturating; sends, and calls in arena buffers) and a
 *                     "seen redelivered" mark (sends); the file
 *                     survives the worker, so a test can kill -9 it
 *   --spin-ns NS      busy work per message (widens the window a kill hits)
 *   --register NAME   register NAME for the route's endpoint once attached
 *   --hold-once FILE  when FILE does not exist: handle the first burst that
 *                     arrives, then keep it unreleased (never ask for the
 *                     next one) and write its size to FILE (atomically, by
 *                     rename); wait there for SIGTERM or a kill.  A test
 *                     kills it mid-burst at a known moment; its replacement
 *                     (started with the same arguments) finds FILE and
 *                     works normally
 *   --ignore-term-ms N  after SIGTERM keep serving N ms more before exiting
 *                     (a worker slow to stop: its route stays pending)
 *   --gate FIFO       a worker held busy until a test releases it: after
 *                     each burst arrives, and before handling it, open FIFO
 *                     (a named pipe the test made) for reading; open(2)
 *                     blocks until the test opens it for writing, and each
 *                     such opening releases one burst.  Meanwhile the burst
 *                     is unreleased in the ring and libshmr's busy flag is
 *                     set.  SIGTERM interrupts the wait (the worker stops)
 *   --gate-count N    gate only the first N bursts (default: every burst)
 *   --pre-attach-gate FIFO  before attaching, open FIFO for reading: block
 *                     until the test opens it for writing (a worker whose
 *                     main is slow to attach, for as long as the test wants)
 *   --pre-attach-ms N  before attaching, sleep N ms (after the gate)
 *   --pre-attach-touch FILE  create FILE right before attaching: the last
 *                     thing main does before it attaches
 *   --pre-attach-exit N  exit with status N instead of attaching (a bad
 *                     program, a crash in main)
 *
 *   --reply-buf 1     answer calls in an arena buffer (the stats copied
 *                     into it; inline when the arena has none free)
 *   --keep 1          keep a send's arena buffer (shmr_buf_keep()) before
 *                     looking at it, and release it after (with
 *                     --spin-ns, the busy work is done while it is kept):
 *                     a kill meanwhile leaves a kept buffer whose slot is
 *                     redelivered
 *
 *   --call-out PATH   on each call, before answering it, call PATH
 *                     (shmr_lookup(): a name or "ROUTER/ROUTE") and wait
 *                     for its answer: a call made while the rest of the
 *                     burst is still to be handled
 *   --die-at KEY      on a send of key KEY not flagged redelivered,
 *                     _exit(3) before recording it (the rest of the burst
 *                     unhandled); its redelivery is handled as any send
 *
 *   --version         print "shmr-test-worker VERSION" and exit
 *
 * Any call is answered with struct shmr_test_stats (see test_worker.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <shmr/shmr.h>

#include "test_worker.h"

static void spin(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) <
	       ns);
}

/* Write @p n to @p path as a whole: readers see no file or all of it. */
static int write_hold_file(const char *path, int n)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", n);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

/* Keep the current burst unreleased until SIGTERM (shmr_stopping()). */
static void hold(void)
{
	sigset_t term, old;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	/* Blocked between the check and the wait, so a SIGTERM that comes
	 * in between is taken by sigsuspend rather than missed. */
	sigprocmask(SIG_BLOCK, &term, &old);
	while (!shmr_stopping())
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * Wait at the gate: until a writer opens @p fifo (returns 0), or SIGTERM
 * (returns -1).  The writer's end is drained to EOF, so one opening
 * releases exactly one wait.
 */
static int gate_wait(const char *fifo)
{
	char buf[64];
	int fd;

	while ((fd = open(fifo, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != EINTR || shmr_stopping())
			return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r > 0 || (r < 0 && errno == EINTR && !shmr_stopping()))
			continue;
		break;
	}
	close(fd);
	return 0;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A message whose payload is inline, or an arena buffer that is sound
 * and begins with the message's key. */
static int arena_sound(struct shmr_endpoint *ep, const struct shmr_msg *m)
{
	size_t len;
	const void *p;

	if (!(m->flags & SHMR_F_ARENA))
		return 1;
	p = shmr_msg_payload(ep, m, &len);
	return p && len >= sizeof(m->key) && memcmp(p, &m->key, sizeof(m->key)) == 0;
}

/* Answer @p m with @p st: in an arena buffer when @p in_buf and one is
 * free (test_arena_kill.c: replies that cross routing lcores), else
 * inline. */
static int reply(struct shmr_endpoint *ep, const struct shmr_msg *m,
		 const struct shmr_test_stats *st, int in_buf)
{
	struct shmr_buf b;
	int rc;

	if (!in_buf || shmr_buf_alloc(ep, sizeof(*st), &b) < 0)
		return shmr_reply(ep, m, 0, st, sizeof(*st));
	memcpy(b.data, st, sizeof(*st));
	rc = shmr_reply_buf(ep, m, 0, &b, sizeof(*st));
	if (rc < 0)
		(void)shmr_buf_release(ep, &b);
	return rc;
}

int main(int argc, char **argv)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_test_stats st;
	unsigned char *rec = NULL;
	uint64_t nrec = 0;
	long expect = -1, spin_ns = 0, ignore_term_ms = 0;
	uint64_t term_at = 0;
	const char *reg = NULL, *hold_file = NULL, *gate = NULL;
	const char *call_out = NULL;
	struct shmr_pid out_pid = { 0, 0 };
	long long die_at = -1;
	int reply_buf = 0, keep = 0;
	long gate_count = LONG_MAX;
	const char *pre_gate = NULL, *pre_touch = NULL;
	long pre_ms = 0, pre_exit = -1;
	int have_from = 0, rc;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("shmr-test-worker %s\n", SHMR_VERSION_TEXT);
		return 0;
	}
	memset(&st, 0, sizeof(st));
	snprintf(st.tag, sizeof(st.tag), "%s",
		 getenv("SHMR_ROUTE") ? getenv("SHMR_ROUTE") : "?");
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--expect-type") == 0)
			expect = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--spin-ns") == 0)
			spin_ns = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--ignore-term-ms") == 0)
			ignore_term_ms = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--register") == 0)
			reg = argv[i + 1];
		else if (strcmp(argv[i], "--hold-once") == 0)
			hold_file = argv[i + 1];
		else if (strcmp(argv[i], "--gate") == 0)
			gate = argv[i + 1];
		else if (strcmp(argv[i], "--reply-buf") == 0)
			reply_buf = atoi(argv[i + 1]) != 0;
		else if (strcmp(argv[i], "--keep") == 0)
			keep = atoi(argv[i + 1]) != 0;
		else if (strcmp(argv[i], "--gate-count") == 0)
			gate_count = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--pre-attach-gate") == 0)
			pre_gate = argv[i + 1];
		else if (strcmp(argv[i], "--pre-attach-ms") == 0)
			pre_ms = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--pre-attach-touch") == 0)
			pre_touch = argv[i + 1];
		else if (strcmp(argv[i], "--pre-attach-exit") == 0)
			pre_exit = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--call-out") == 0)
			call_out = argv[i + 1];
		else if (strcmp(argv[i], "--die-at") == 0)
			die_at = atoll(argv[i + 1]);
		else if (strcmp(argv[i], "--record") == 0) {
			struct stat sb;
			int fd = open(argv[i + 1], O_RDWR);
			if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size < 2) {
				perror(argv[i + 1]);
				return 1;
			}
			nrec = (uint64_t)sb.st_size / 2;
			rec = mmap(NULL, (size_t)sb.st_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			close(fd);
			if (rec == MAP_FAILED)
				return 1;
		} else {
			fprintf(stderr, "shmr-test-worker: bad argument %s\n",
				argv[i]);
			return 2;
		}
	}
	if (pre_gate) {
		int fd = open(pre_gate, O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
	if (pre_ms > 0) {
		struct timespec ts = { pre_ms / 1000, pre_ms % 1000 * 1000000 };

		nanosleep(&ts, NULL);
	}
	if (pre_exit >= 0)
		return (int)pre_exit;
	if (pre_touch) {
		int fd = open(pre_touch, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0) {
			perror(pre_touch);
			return 1;
		}
		close(fd);
	}
	rc = shmr_attach_env(&d, &ep);
	if (rc < 0) {
		fprintf(stderr, "shmr-test-worker: %s\n", shmr_strerror(rc));
		return 1;
	}
	st.self = shmr_endpoint_pid(ep);
	if (reg && (rc = shmr_register(ep, reg)) < 0) {
		fprintf(stderr, "shmr-test-worker: register %s: %s\n", reg,
			shmr_strerror(rc));
		return 1;
	}
	if (call_out && (rc = shmr_lookup(d, call_out, &out_pid)) < 0) {
		fprintf(stderr, "shmr-test-worker: lookup %s: %s\n", call_out,
			shmr_strerror(rc));
		return 1;
	}
	if (hold_file && access(hold_file, F_OK) == 0)
		hold_file = NULL; /* a replacement: work normally */
	for (;;) {
		const struct shmr_msg *msgs[32];
		int n;

		if (shmr_stopping()) {
			if (ignore_term_ms <= 0)
				break;
			if (!term_at)
				term_at = mono_ms();
			else if (mono_ms() - term_at >= (uint64_t)ignore_term_ms)
				break;
		}
		n = shmr_recv_burst(ep, msgs, 32, term_at ? 20 : 1000);
		if (n == -EINTR)
			continue; /* SIGTERM: decided at the top */
		if (n < 0)
			break;
		if (gate && n > 0 && gate_count > 0) {
			gate_count--;
			if (gate_wait(gate) < 0)
				break; /* SIGTERM at the gate */
		}
		for (int i = 0; i < n; i++) {
			const struct shmr_msg *m = msgs[i];
			struct shmr_buf kb;
			int kept;

			if (m->kind == SHMR_KIND_CALL) {
				/* A call in a buffer (scatter-gather under
				 * kills) is recorded as a send is. */
				if (rec && (m->flags & SHMR_F_ARENA) &&
				    m->key < nrec && arena_sound(ep, m) &&
				    rec[m->key] < 255)
					rec[m->key]++;
				if (call_out) {
					struct shmr_test_stats os;

					rc = shmr_call(ep, out_pid, 0, 0, "s", 1,
						       &os, sizeof(os), 30000);
					if (rc < 0)
						fprintf(stderr,
							"shmr-test-worker: call %s: %s\n",
							call_out,
							shmr_strerror(rc));
				}
				st.calls++;
				st.last_ref = m->ref;
				st.last_call_from = m->from;
				while ((rc = reply(ep, m, &st, reply_buf)) ==
				       -EAGAIN)
					;
				if (rc < 0)
					fprintf(stderr, "shmr-test-worker: reply: %s\n",
						shmr_strerror(rc));
				continue;
			}
			if (die_at >= 0 && m->key == (uint64_t)die_at &&
			    !(m->flags & SHMR_F_REDELIVERED))
				_exit(3);
			st.count++;
			if (m->flags & SHMR_F_REDELIVERED)
				st.redelivered++;
			if (expect >= 0 && m->type != (uint32_t)expect)
				st.misrouted++;
			if (!have_from) {
				st.first_from = m->from;
				have_from = 1;
			} else if (m->from.slot != st.first_from.slot ||
				   m->from.gen != st.first_from.gen) {
				st.from_mismatch++;
			}
			/* Kept first (--keep): the busy work below is done
			 * holding it, and it is looked at as kept. */
			kept = keep && (m->flags & SHMR_F_ARENA) &&
			       shmr_buf_keep(ep, m, &kb) == 0;
			if (spin_ns)
				spin(spin_ns);
			/* An arena payload counts only when it is sound and
			 * carries its key (test_arena_kill.c): a buffer freed
			 * under its slot would leave the key unrecorded. */
			if (rec && m->key < nrec && arena_sound(ep, m)) {
				if (rec[m->key] < 255)
					rec[m->key]++;
				if (m->flags & SHMR_F_REDELIVERED)
					rec[nrec + m->key] = 1;
			}
			if (kept)
				(void)shmr_buf_release(ep, &kb);
		}
		if (hold_file && n > 0) {
			if (write_hold_file(hold_file, n) < 0) {
				perror(hold_file);
				return 1;
			}
			hold();
			break;
		}
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}
