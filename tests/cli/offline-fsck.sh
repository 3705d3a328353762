#!/bin/sh
# e2defrag-offline on a filesystem that e2fsck -f -p cannot repair (two
# files claiming the same block): e2defrag -n refuses it mounted, so the
# window goes ahead; it does not defragment (a stand-in e2defrag would
# leave a mark), mounts the filesystem again from the same device with the
# same options, and exits 8; and 16 where e2fsck refused its options.
. "$top_srcdir/tests/cli/offline-lib.sh"

mkfs_img "$T/fs.img" ext2 1024 4M
head -c 20000 /dev/urandom > "$T/data"
printf 'write %s a\nwrite %s b\n' "$T/data" "$T/data" > "$T/cmds"
dfs "$T/fs.img" "$T/cmds"
blk=$(debugfs -R "blocks /a" "$T/fs.img" 2>/dev/null | awk '{print $1}')
[ -n "$blk" ] || fail "no block for /a"
debugfs -w -R "sif /b block[0] $blk" "$T/fs.img" >/dev/null 2>&1 || fail "sif"
run_status e2fsck -fn "$T/fs.img"
[ "$status" -eq 4 ] || fail "e2fsck -fn exited $status on the broken image, expected 4"

attach "$T/fs.img" noatime,nodiratime
before=$(mounted_as)
# The stand-in answers -V, and -n with the real e2defrag's dry run (which
# refuses the damaged filesystem: the window goes ahead).
cat > "$T/e2defrag" <<EOS
#!/bin/sh
case \$1 in -V|-n) exec '$top_builddir/defrag/e2defrag' "\$@" ;; esac
touch '$T/defrag-ran'
EOS
chmod +x "$T/e2defrag"
echo "e2defrag=$T/e2defrag" >> "$CONF"

# fails_with STATUS MESSAGE: the window exits STATUS saying MESSAGE, runs
# no e2defrag and leaves the filesystem mounted as it was.
fails_with() {
	run_status "$OFFLINE" "$MNT" > "$T/out" 2>&1
	cat "$T/out"
	[ "$status" -eq "$1" ] || fail "exit $status, expected $1"
	[ ! -e "$T/defrag-ran" ] || fail "e2defrag ran after e2fsck (exit $1)"
	grep -qF -- "$2" "$T/out" || fail "not reported: '$2'"
	[ "$(mounted_as)" = "$before" ] || fail "mounted as '$(mounted_as)', was '$before'"
}
fails_with 8 "e2fsck -f -p $LOOP exited 4"

# An e2fsck that refuses its options after the unmount (exit 16: one of a
# later e2fsprogs, say, that the check before cannot know): passed on as
# 16, not called errors it could not fix; mounted again, no e2defrag.
cat > "$T/e2fsck" <<EOS
#!/bin/sh
case \$1 in -V) exec e2fsck -V ;; esac
echo "e2fsck: stand-in refusing \$*" >&2
exit 16
EOS
chmod +x "$T/e2fsck"
echo "e2fsck=$T/e2fsck" >> "$CONF"
fails_with 16 "exited 16: it refuses its options; not defragmenting"
exit 0
