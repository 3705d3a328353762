# offline-lib.sh --- setup for the e2defrag-offline tests (sourced, not
# run): root and loop devices or skip (77); an image attached with losetup
# (as a disk is: it stays when unmounted) and mounted on $MNT; a cleanup
# that always unmounts and detaches; a config file ($CONF) naming the
# e2defrag of the build tree; helpers to tell whether the filesystem was
# ever unmounted and to take programs off e2defrag-offline's PATH.
. "$top_srcdir/tests/lib/common.sh"

[ "$(id -u)" -eq 0 ] || skip "not root"
for c in losetup mount umount findmnt; do
	command -v $c >/dev/null 2>&1 || skip "no $c"
done
OFFLINE=$top_builddir/misc/e2defrag-offline
[ -x "$OFFLINE" ] || fail "$OFFLINE not built"
MNT=$T/mnt
mkdir "$MNT" || fail "mkdir $MNT"
LOOP= holder=
offline_cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	mountpoint -q "$MNT" && umount "$MNT"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$T"
}
trap offline_cleanup EXIT

# attach IMAGE OPTIONS: attach IMAGE to a loop device ($LOOP), mount it on
# $MNT with OPTIONS.
attach() {
	LOOP=$(losetup -f --show "$1" 2>/dev/null) || skip "no loop device"
	mount -o "$2" "$LOOP" "$MNT" 2>/dev/null || skip "cannot mount $LOOP"
}

# mounted_as: what is mounted on $MNT, "SOURCE FSTYPE OPTIONS" (empty: none).
mounted_as() { findmnt -n -o SOURCE,FSTYPE,OPTIONS --mountpoint "$MNT"; }
# mounted_at: when the filesystem on $LOOP was last mounted, per its
# superblock (dumpe2fs, to the second).  An unmount and a mount again
# change it if a second has passed: "never unmounted" is the same time
# before and after, a second or more after the last mount (settle).
mounted_at() { dumpe2fs -h "$LOOP" 2>/dev/null | sed -n 's/^Last mount time: *//p'; }
settle() { sleep 1.1; }

# path_without DIR PROG...: DIR holds links to every program
# e2defrag-offline may run but the PROGs, to be its PATH (set in $CONF).
path_without() {
	dir=$1; shift
	mkdir -p "$dir" || fail "mkdir $dir"
	for p in cat grep readlink sed tail tr stat sync logger fuser findmnt \
		 mount umount e2fsck systemctl sh; do
		case " $* " in *" $p "*) continue ;; esac
		w=$(command -v "$p") || continue
		ln -sf "$w" "$dir/$p"
	done
}

CONF=$T/offline.conf
printf 'e2defrag=%s\n' "$top_builddir/defrag/e2defrag" > "$CONF"
export E2DEFRAG_OFFLINE_CONF="$CONF"
