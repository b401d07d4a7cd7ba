/*
 * Replays a fuzz target's corpus without libFuzzer: each file of the
 * folders (or the files) named on the command line goes through
 * LLVMFuzzerTestOneInput() once.  Built into the normal suite, so every
 * seed and every crash file kept in tests/fuzz/corpus/ runs in
 * `./shmr.sh test` and under `./shmr.sh sanitize`.  A crash is the test's
 * failure; otherwise it prints how many inputs ran and exits 0.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		perror(path);
		fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	unsigned ran = 0;

	for (int i = 1; i < argc; i++) {
		struct dirent **ents;
		struct stat st;
		int n;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			ran++;
			continue;
		}
		n = scandir(argv[i], &ents, NULL, by_name);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 ents[j]->d_name);
			if (ents[j]->d_name[0] != '.' && stat(path, &st) == 0 &&
			    S_ISREG(st.st_mode)) {
				if (run_file(path) < 0)
					return 1;
				ran++;
			}
			free(ents[j]);
		}
		free(ents);
	}
	if (ran == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	printf("replay: %u inputs, no crash\n", ran);
	return 0;
}
