/*
 * iolog.h --- record every write and flush a run makes to the device, for
 * the power-cut harness (tests/crash): a replay tool rebuilds the image as
 * a cut at any instant would leave it.
 *
 * In a build configured with --enable-iolog (never a default build: the
 * log holds every byte written, and the programs run as root), setting
 * E2FRAG_IOLOG=PATH makes fsopen_open() log the writes of a read-write
 * open to PATH (appending).  The log is a header followed by records, in
 * the order the writes reached the io channel:
 *   header   "E2FIOLG1" (8 bytes)
 *   record   uint32 type, uint32 0, uint64 offset, uint64 length
 *            (host byte order), then LENGTH bytes of data for a write.
 * A flush is a barrier: writes before it are durable after it; between two
 * flushes a disk may make any subset of the writes durable.
 */
#ifndef IOLOG_H
#define IOLOG_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

#define IOLOG_MAGIC	"E2FIOLG1"
#define IOLOG_ENV	"E2FRAG_IOLOG"

enum iolog_type {
	IOLOG_WRITE = 'W',	/* data follows */
	IOLOG_ZERO  = 'Z',	/* zeroed or discarded: reads back as zeroes */
	IOLOG_FLUSH = 'F',	/* offset and length 0 */
};

struct iolog_record {
	uint32_t	type;
	uint32_t	reserved;
	uint64_t	offset;
	uint64_t	length;
};

/* Log FS's writes to PATH from now on (lib/iowrap.h). */
errcode_t iolog_attach(ext2_filsys fs, const char *path);

/*
 * iolog_attach to $E2FRAG_IOLOG when it is set and the build has
 * --enable-iolog; else nothing.
 */
errcode_t iolog_attach_env(ext2_filsys fs);

#endif /* IOLOG_H */
