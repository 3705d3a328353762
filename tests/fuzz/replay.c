/*
 * replay.c --- run the fuzz target (target.c) on saved inputs, in the
 * ordinary build: make check replays every regression input this way
 * (tests/fuzz/regress.sh), and a crasher make fuzz found can be run under
 * gdb or valgrind.
 *
 *   replay FILE...    exit 0 when every input ran through; a crash or a
 *                     sanitizer report ends it as it would the fuzzer
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static int replay(const char *path)
{
	unsigned char *data = NULL;
	size_t size = 0, cap = 0, n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			unsigned char *p = realloc(data, cap = cap ? 2 * cap : 1 << 16);

			if (!p) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(data);
				fclose(f);
				return -1;
			}
			data = p;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n);
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ok = 0;

	if (argc < 2) {
		fprintf(stderr, "Usage: %s FILE...\n", argv[0]);
		return 16;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (!replay(argv[i]))
			ok++;
	printf("replayed %d inputs\n", ok);
	return ok == argc - 1 ? 0 : 8;
}
