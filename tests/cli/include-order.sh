#!/bin/sh
# Every #include of the libraries and programs points down the layers
# (lib < writer < filemap < planner < reports < the programs) and no
# program includes another program's folder, each include resolved with
# the build's own -I flags (tests/lib/include_order.py).  First the
# checker is shown a small tree that breaks both rules, so that a checker
# which finds nothing cannot pass.
. "$top_srcdir/tests/lib/common.sh"
checker="python3 $top_srcdir/tests/lib/include_order.py"

# A build directory of its own: two libraries, two programs.
mkdir -p "$T/bad/lib" "$T/bad/planner" "$T/bad/analyze" "$T/bad/defrag"
cat > "$T/bad/Makefile" <<'MK'
srcdir = .
AM_CPPFLAGS = -I./lib
DEFAULT_INCLUDES = -I.
noinst_LIBRARIES = lib/libx.a planner/liby.a
bin_PROGRAMS = analyze/prog defrag/other
lib_libx_a_SOURCES = lib/core.c lib/core.h
planner_liby_a_SOURCES = planner/plan.c
planner_liby_a_CPPFLAGS = $(AM_CPPFLAGS) -I./planner
analyze_prog_SOURCES = analyze/main.c
analyze_prog_CPPFLAGS = $(AM_CPPFLAGS) -I./planner -I./defrag
defrag_other_SOURCES = defrag/main.c
MK
printf '#include "core.h"\n' > "$T/bad/lib/core.c"
printf '#include <stdio.h>\n' > "$T/bad/lib/core.h"
printf '#include "../planner/plan.h"\n' >> "$T/bad/lib/core.h"	# up, by its path
printf '/* planner */\n' > "$T/bad/planner/plan.h"
printf '#include "core.h"\n#include "plan.h"\n' > "$T/bad/planner/plan.c"
printf '#include "plan.h"\n#include "defrag.h"\n' > "$T/bad/analyze/main.c"
printf '/* defrag */\n' > "$T/bad/defrag/defrag.h"
printf '#include "defrag.h"\n' > "$T/bad/defrag/main.c"
run_status $checker "$T/bad" > "$T/bad.out" 2>&1
cat "$T/bad.out"
[ "$status" -eq 1 ] || fail "the checker exited $status on a tree with bad includes, expected 1"
grep -q '^lib/core.h:2: includes planner/plan.h (lib may not include planner)' "$T/bad.out" ||
	fail "an include up the layers by a relative path was not found"
grep -q '^analyze/main.c:2: includes defrag/defrag.h (analyze may not include defrag)' "$T/bad.out" ||
	fail "a program including another program's folder was not found"
# What is allowed: a library below, its own folder, a header found through -I.
! grep -qE '^(planner/plan.c|defrag/main.c|lib/core.c|analyze/main.c:1|lib/core.h:1):' "$T/bad.out" ||
	fail "an include that points down was reported"

# The tree itself.
$checker "$top_builddir" || fail "an #include points the wrong way (above)"
