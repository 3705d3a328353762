/*
 * memio.h --- a read-only io_manager over an image held in memory, for the
 * fuzz target: no file, no system call, so that a run costs what the
 * analysis costs.
 *
 * The "name" ext2fs_open2() is given is made by memio_name() and carries
 * the address and size of the image; the image must outlive the channel.
 * Reads past its end return what there is, zeros after it, and
 * EXT2_ET_SHORT_READ, as unix_io does at the end of a file.  Any write,
 * discard or zeroing aborts: the fuzz target runs the programs' read-only
 * paths (e2frag, e2defrag -n), and a write there is a bug to report.
 * memimg_manager (below) is the writable one, for e2defrag's real run.
 */
#ifndef FUZZ_MEMIO_H
#define FUZZ_MEMIO_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

extern io_manager memio_manager;

/* Write into BUF (LEN bytes) the name under which memio opens DATA. */
void memio_name(char *buf, size_t len, const uint8_t *data, size_t size);

/*
 * A writable image for the run target (target_run.c): a copy of the input
 * in memory that is also a file (a memfd mapped shared), so that writes
 * cost a memcpy and e2defrag --verify, which reads the device past the
 * cache through a descriptor of its own, reads the same bytes.  NAME is
 * the path ext2fs_open2() is given with memimg_manager (one image open at
 * a time: the fuzzer runs one input after another).
 */
struct memimg {
	uint8_t	*data;
	size_t	size;
	int	fd;
	char	name[40];
};

extern io_manager memimg_manager;

/* Make IMG a copy of DATA; 0 or errno. */
errcode_t memimg_open(struct memimg *img, const uint8_t *data, size_t size);
void memimg_close(struct memimg *img);

#endif /* FUZZ_MEMIO_H */
