/*
 * `shmrctl top` in an 80x24 tmux pane, as over ssh, for integration tests
 * (test_top, test_arena_viz): start it, read the screen (capture-pane),
 * quit it and read its exit status.  Include after <cmocka.h>.
 */
#ifndef SHMR_TMUX_PANE_H
#define SHMR_TMUX_PANE_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shmr_test_app.h"

struct tmux_pane {
	char sock[300], conf[300], rc_file[300];
	char out[65536]; /* what the last tmux call or top's status said */
};

/* tmux -S SOCK -f CONF ARGS... (NULL-terminated, up to 12); its exit
 * status, output in p->out. */
static inline int tmux_pane_run(struct tmux_pane *p, ...)
{
	char *argv[20] = { "tmux", "-S", p->sock, "-f", p->conf };
	unsigned n = 5;
	va_list ap;

	va_start(ap, p);
	while (n < 18 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return shmr_test_run(argv, p->out, sizeof(p->out));
}

/* The pane's screen into p->out; 0 when tmux answered. */
static inline int tmux_pane_capture(struct tmux_pane *p)
{
	return tmux_pane_run(p, "capture-pane", "-p", "-t", "top", NULL);
}

/* `shmrctl -s SOCK top` of the appliance @p app in a new 80x24 pane
 * (session "top"), whose shell writes top's exit status to p->rc_file
 * (tmux 3.3a does not always record a dead pane's status).  The pane
 * stays after top exits.  tmux's output goes to /dev/null, since the
 * tmux server it starts keeps what it inherited open (a pipe would never
 * end).  Its exit status. */
static inline int tmux_pane_start_top(struct tmux_pane *p,
				      const struct shmr_test_app *app)
{
	char cmd[2048];
	int status;
	FILE *f;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	snprintf(p->sock, sizeof(p->sock), "%s/tmux.sock", app->dir);
	snprintf(p->conf, sizeof(p->conf), "%s/tmux.conf", app->dir);
	snprintf(p->rc_file, sizeof(p->rc_file), "%s/top.rc", app->dir);
	f = fopen(p->conf, "w");
	assert_non_null(f);
	fputs("set -g remain-on-exit on\n", f);
	fclose(f);
	setenv("TERM", "xterm", 0);
	snprintf(cmd, sizeof(cmd),
		 "%s -s %s top; echo $? > %s.tmp && mv %s.tmp %s",
		 getenv("SHMRCTL"), app->sock, p->rc_file, p->rc_file,
		 p->rc_file);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("tmux", "tmux", "-S", p->sock, "-f", p->conf,
		       "new-session", "-d", "-s", "top", "-x", "80", "-y",
		       "24", cmd, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* top has exited: its status (as the pane's shell wrote it) is in
 * p->out. */
static inline int tmux_pane_exited(void *arg)
{
	struct tmux_pane *p = arg;
	FILE *f = fopen(p->rc_file, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(p->out, 1, sizeof(p->out) - 1, f);
	fclose(f);
	p->out[n] = '\0';
	return strchr(p->out, '\n') != NULL;
}

/* Until @p pred, for at most @p seconds of wall time (each try runs
 * tmux: shmr_test_wait's count of 1 ms tries would be far longer). */
static inline int tmux_pane_wait(int (*pred)(void *), void *arg, int seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (pred(arg))
			return 1;
		usleep(50 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < seconds);
	return pred(arg);
}

/* Every line of p->out at most 80 columns, and q ends top with exit
 * status 0; the tmux server is gone after. */
static inline void tmux_pane_fits_and_quits(struct tmux_pane *p)
{
	for (const char *l = p->out; *l;) {
		size_t w = strcspn(l, "\n");

		assert_true(w <= 80);
		l += w + (l[w] == '\n');
	}
	assert_int_equal(tmux_pane_run(p, "send-keys", "-t", "top", "q", NULL),
			 0);
	assert_true(tmux_pane_wait(tmux_pane_exited, p, 30));
	assert_string_equal(p->out, "0\n");
	tmux_pane_run(p, "kill-server", NULL);
}

#endif
