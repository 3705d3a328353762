#!/bin/sh
# -n plans and writes nothing (the image stays byte-identical), the plan
# it prints is the one a real run carries out (--json), and the run that
# follows leaves what -n promised.
. "$top_srcdir/tests/cli/defrag-lib.sh"

small_image "$T/fs.img" ext4
cp "$T/fs.img" "$T/orig.img"
expect_rc 0 e2defrag -n "$T/fs.img"
grep -q "pieces" "$T/out" || fail "-n printed no plan"
grep -q "/rec/a" "$T/out" || fail "-n does not name /rec/a"
cmp -s "$T/fs.img" "$T/orig.img" || fail "-n changed the image"

e2defrag -n --json "$T/fs.img" > "$T/plan.json" || fail "-n --json exited $?"
cmp -s "$T/fs.img" "$T/orig.img" || fail "-n --json changed the image"
[ "$(json_get "$T/plan.json" 'j["dry_run"]')" = True ] || fail "dry_run not true"
[ "$(json_get "$T/plan.json" 'j["result"]')" = None ] || fail "a dry run has no result"
sel=$(json_get "$T/plan.json" 'j["plan"]["files_selected"]')
[ "$sel" -ge 3 ] || fail "plan selects $sel files, expected /rec/a, /rec/b, /frag"
after=$(json_get "$T/plan.json" 'j["plan"]["pieces_after"]')
[ "$after" -eq "$sel" ] || fail "plan leaves $after pieces for $sel files"

# The real run carries it out.
e2defrag --json "$T/fs.img" > "$T/run.json" || fail "run exited $?"
[ "$(json_get "$T/run.json" 'j["result"]["moves_failed"]')" -eq 0 ] || fail "moves failed"
[ "$(json_get "$T/run.json" 'j["result"]["pieces_after"]')" -eq "$after" ] ||
	fail "the run did not leave what -n planned"
check_clean "$T/fs.img"
exit 0
