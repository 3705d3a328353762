/*
 * supersector.h --- superblock writes that a torn write cannot corrupt.
 *
 * A disk writes only its sector (512 bytes) whole.  The superblock is two
 * sectors: every field a run changes (free counts, state, needs_recovery,
 * write time) is in the first, and with metadata_csum its checksum is in
 * the second, at the end.  A write cut between the two leaves a superblock
 * whose checksum does not match: the kernel refuses to mount it and
 * e2fsck, on a filesystem without backup superblocks, cannot open it.
 *
 * So the new superblock is made to keep the checksum it had on disk: four
 * bytes of the first sector that mean nothing while no error is recorded
 * (the tail of s_last_error_func, which e2fsck clears after each check and
 * the kernel overwrites with the error it records) are chosen to give
 * crc32c the old value.  The second sector is then unchanged, the write
 * changes one sector, and a cut leaves the old superblock or the new one.
 */
#ifndef SUPERSECTOR_H
#define SUPERSECTOR_H

/*
 * OLD: the superblock on disk (1024 bytes), NEW: the one about to replace
 * it, modified in place.  When both use metadata_csum, OLD's checksum is
 * right, no last error is recorded in NEW and NEW's second sector equals
 * OLD's but for the checksum, set NEW's free bytes and checksum so that
 * its second sector equals OLD's, and return 1.  Else leave NEW alone and
 * return 0 (without metadata_csum a change to the first sector is already
 * a one-sector write).
 */
int supersector_keep_checksum(const unsigned char *old, unsigned char *new);

#endif /* SUPERSECTOR_H */
