/*
 * Starting a process (control/procs.c, shmr_ctl_proc_spawn()): what the
 * parent prepares must give the child what execvp(3), setenv(3) and
 * hwloc_set_cpubind() gave it before, now that the child only calls
 * execve and sched_setaffinity.  Real children (/bin/sh), no daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "procs.h"

static hwloc_topology_t topo;
static char dir[64];

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/shmr-procs-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	hwloc_topology_destroy(topo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Start @p x; its exit status (0..255), or the spawn's -errno. */
static int run(const struct shmr_ctl_exec *x, int *stage)
{
	int st, pidfd, rc, dummy;
	pid_t pid;

	rc = shmr_ctl_proc_spawn(x, topo, &pid, &pidfd, stage ? stage : &dummy);
	if (rc < 0)
		return rc;
	close(pidfd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int sh(const char *script, const char *const *env)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };

	return run(&(struct shmr_ctl_exec){ .file = "sh", .argv = argv,
					    .env = env },
		   NULL);
}

static void write_file(const char *name, const char *text, mode_t mode)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* The inherited environment, each given variable replacing the inherited
 * one of its name (exactly one left), new ones added. */
static void test_env_replaces_and_inherits(void **state)
{
	const char *env[] = { "SHMR_PROCS_X=new", "SHMR_PROCS_NEW=1", NULL };

	(void)state;
	setenv("SHMR_PROCS_X", "old", 1);
	setenv("SHMR_PROCS_KEEP", "kept", 1);
	assert_int_equal(sh("test \"$SHMR_PROCS_X\" = new &&"
			    " test \"$SHMR_PROCS_KEEP\" = kept &&"
			    " test \"$SHMR_PROCS_NEW\" = 1 &&"
			    " test $(env | grep -c '^SHMR_PROCS_X=') = 1",
			    env),
			 0);
	/* Without any: exactly ours. */
	assert_int_equal(sh("test \"$SHMR_PROCS_X\" = old", NULL), 0);
	unsetenv("SHMR_PROCS_X");
	unsetenv("SHMR_PROCS_KEEP");
}

/* PATH as execvp(3) searches it: a directory without the name is skipped,
 * a name found nowhere is ENOENT, one found only without the execute bit
 * EACCES, and a path with a '/' is not searched. */
static void test_path_search(void **state)
{
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin");
	char newpath[4096], *argv[] = { "x", NULL };
	int stage = 0;

	(void)state;
	write_file("noexec", "exit 0\n", 0644);
	snprintf(newpath, sizeof(newpath), "/nonexistent-dir:%s:%s", dir,
		 path);
	setenv("PATH", newpath, 1);
	assert_int_equal(sh("exit 7", NULL), 7);
	assert_int_equal(run(&(struct shmr_ctl_exec){
				     .file = "shmr-no-such-program",
				     .argv = argv },
			     &stage),
			 -ENOENT);
	assert_int_equal(stage, SHMR_CTL_STAGE_EXEC);
	assert_int_equal(run(&(struct shmr_ctl_exec){ .file = "noexec",
						      .argv = argv },
			     &stage),
			 -EACCES);
	assert_int_equal(stage, SHMR_CTL_STAGE_EXEC);
	/* A name with a '/' is taken as it is: not found via PATH. */
	assert_int_equal(run(&(struct shmr_ctl_exec){ .file = "./sh",
						      .argv = argv },
			     &stage),
			 -ENOENT);
	setenv("PATH", path, 1);
	free(path);
}

/* A file that is not an executable format runs under /bin/sh, with its
 * arguments, as execvp(3) runs it. */
static void test_script_without_shebang(void **state)
{
	char path[128], *argv[] = { path, "a1", "a2", NULL };

	(void)state;
	write_file("script", "test \"$1 $2\" = \"a1 a2\" && exit 5\nexit 1\n",
		   0755);
	snprintf(path, sizeof(path), "%s/script", dir);
	assert_int_equal(run(&(struct shmr_ctl_exec){ .file = path,
						      .argv = argv },
			     NULL),
			 5);
}

/* Pinned before exec: the child runs on exactly the set's cpu. */
static void test_pinned(void **state)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char script[160], *argv[] = { "sh", "-c", script, NULL };
	cpu_set_t mine;
	int cpu = -1, stage = 0;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	for (int i = CPU_SETSIZE - 1; i >= 0; i--)
		if (CPU_ISSET(i, &mine))
			cpu = i;
	assert_true(cpu >= 0);
	hwloc_bitmap_only(set, (unsigned)cpu);
	snprintf(script, sizeof(script),
		 "grep -q '^Cpus_allowed_list:[[:space:]]*%d$' "
		 "/proc/self/status",
		 cpu);
	assert_int_equal(run(&(struct shmr_ctl_exec){ .file = "sh",
						      .argv = argv,
						      .cpus = set },
			     NULL),
			 0);
	/* A cpu the machine does not have: refused, no child. */
	hwloc_bitmap_only(set, 100000);
	assert_int_equal(run(&(struct shmr_ctl_exec){ .file = "sh",
						      .argv = argv,
						      .cpus = set },
			     &stage),
			 -EINVAL);
	assert_int_equal(stage, SHMR_CTL_STAGE_PIN);
	hwloc_bitmap_free(set);
}

/* A descriptor to keep survives exec; the others (CLOEXEC) do not. */
static void test_keep_fds(void **state)
{
	char script[128], *argv[] = { "sh", "-c", script, NULL };
	char buf[8] = "";
	int p[2], q[2];

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(q, O_CLOEXEC), 0);
	snprintf(script, sizeof(script),
		 "echo hi >&%d && ! (echo no >&%d) 2>/dev/null", p[1], q[1]);
	assert_int_equal(run(&(struct shmr_ctl_exec){ .file = "sh",
						      .argv = argv,
						      .keep_fds = &p[1],
						      .nkeep = 1 },
			     NULL),
			 0);
	/* Only the child's copy lost CLOEXEC. */
	assert_int_equal(fcntl(p[1], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(p[1]);
	close(q[1]);
	assert_int_equal(read(p[0], buf, sizeof(buf) - 1), 3);
	assert_string_equal(buf, "hi\n");
	close(p[0]);
	close(q[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_replaces_and_inherits),
		cmocka_unit_test(test_path_search),
		cmocka_unit_test(test_script_without_shebang),
		cmocka_unit_test(test_pinned),
		cmocka_unit_test(test_keep_fds),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
