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
 */
#ifndef FUZZ_MEMIO_H
#define FUZZ_MEMIO_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

extern io_manager memio_manager;

/* Write into BUF (LEN bytes) the name under which memio opens DATA. */
void memio_name(char *buf, size_t len, const uint8_t *data, size_t size);

#endif /* FUZZ_MEMIO_H */
