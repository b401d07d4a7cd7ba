/*
 * An LD_PRELOAD shim for test_spawn_safe.c: it tells whether a process
 * calls what a child of a threaded parent must not call between fork and
 * exec (man 7 signal-safety).
 *
 * A fork()ed child of a multi-threaded process has one thread, and every
 * lock another thread held at the fork stays held for good: malloc's,
 * the environment's (setenv), hwloc's (its binders read /proc/self/task
 * with opendir and malloc).  Such a child may only make async-signal-safe
 * calls until it execs.  The shim registers pthread_atfork(child) to mark
 * "forked, not yet exec'd" (exec starts a new image: the mark goes with the
 * old one), and interposes the environment setters, the allocator and
 * hwloc's binders: a call to one of them while the mark is set appends its
 * name, once per function and child, to the file named by
 * $SHMR_SPAWN_SHIM_LOG (read at load, in the parent), with open/write/close
 * only.  Then the call goes on as usual: the test reports every offender,
 * and the appliance behaves as without the shim.
 *
 * Built without the allocator hooks (SPAWN_SHIM_NO_MALLOC) under ASan,
 * whose own allocator must not be bypassed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char log_path[512];
static int in_child;

static void child_mark(void)
{
	in_child = 1;
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *p = getenv("SHMR_SPAWN_SHIM_LOG");

	if (p && strlen(p) < sizeof(log_path)) {
		memcpy(log_path, p, strlen(p) + 1);
		pthread_atfork(NULL, NULL, child_mark);
	}
}

enum { F_SETENV, F_UNSETENV, F_PUTENV, F_CLEARENV, F_MALLOC, F_CALLOC,
       F_REALLOC, F_FREE, F_MEMALIGN, F_HWLOC_SET_CPUBIND,
       F_HWLOC_SET_PROC_CPUBIND, F_HWLOC_SET_THREAD_CPUBIND, F_COUNT };

static const char *const names[F_COUNT] = {
	"setenv", "unsetenv", "putenv", "clearenv", "malloc", "calloc",
	"realloc", "free", "posix_memalign", "hwloc_set_cpubind",
	"hwloc_set_proc_cpubind", "hwloc_set_thread_cpubind",
};

/* In the child only: async-signal-safe calls. */
static void note(int f)
{
	static int seen[F_COUNT];
	int fd;

	if (!in_child || seen[f])
		return;
	seen[f] = 1;
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* "child PID: NAME\n", made without stdio.  A short write leaves
	 * the file incomplete, never empty. */
	{
		char line[96], num[16];
		size_t n = 0, k = 0;
		unsigned v = (unsigned)getpid();

		do
			num[k++] = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		memcpy(line, "child ", 6);
		n = 6;
		while (k)
			line[n++] = num[--k];
		line[n++] = ':';
		line[n++] = ' ';
		memcpy(line + n, names[f], strlen(names[f]));
		n += strlen(names[f]);
		line[n++] = '\n';
		(void)!write(fd, line, n);
	}
	close(fd);
}

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort(); /* the shim cannot forward: a broken test rig */
	return f;
}

int setenv(const char *name, const char *value, int overwrite)
{
	static int (*real)(const char *, const char *, int);

	note(F_SETENV);
	if (!real)
		real = next("setenv");
	return real(name, value, overwrite);
}

int unsetenv(const char *name)
{
	static int (*real)(const char *);

	note(F_UNSETENV);
	if (!real)
		real = next("unsetenv");
	return real(name);
}

int putenv(char *string)
{
	static int (*real)(char *);

	note(F_PUTENV);
	if (!real)
		real = next("putenv");
	return real(string);
}

int clearenv(void)
{
	static int (*real)(void);

	note(F_CLEARENV);
	if (!real)
		real = next("clearenv");
	return real();
}

/* hwloc's types are pointers and an int: declared here as such, so that
 * the shim needs no hwloc headers. */
int hwloc_set_cpubind(void *topo, const void *set, int flags)
{
	static int (*real)(void *, const void *, int);

	note(F_HWLOC_SET_CPUBIND);
	if (!real)
		real = next("hwloc_set_cpubind");
	return real(topo, set, flags);
}

int hwloc_set_proc_cpubind(void *topo, pid_t pid, const void *set, int flags)
{
	static int (*real)(void *, pid_t, const void *, int);

	note(F_HWLOC_SET_PROC_CPUBIND);
	if (!real)
		real = next("hwloc_set_proc_cpubind");
	return real(topo, pid, set, flags);
}

int hwloc_set_thread_cpubind(void *topo, pthread_t thread, const void *set,
			     int flags)
{
	static int (*real)(void *, pthread_t, const void *, int);

	note(F_HWLOC_SET_THREAD_CPUBIND);
	if (!real)
		real = next("hwloc_set_thread_cpubind");
	return real(topo, thread, set, flags);
}

#ifndef SPAWN_SHIM_NO_MALLOC
/* glibc's own entry points: no dlsym (which itself allocates) needed. */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *__libc_memalign(size_t align, size_t n);

void *malloc(size_t n)
{
	note(F_MALLOC);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	note(F_CALLOC);
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	note(F_REALLOC);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	note(F_FREE);
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	note(F_MEMALIGN);
	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
#endif
