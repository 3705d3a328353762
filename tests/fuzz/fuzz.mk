# fuzz.mk --- build the libFuzzer targets with clang, apart from the
# ordinary build: its objects go under $(O), instrumented for coverage,
# ASan and UBSan.  Run by `make fuzz` (tests/fuzz/Makemodule.am), which
# passes the sources (LIB_SOURCES: those of the libraries the programs
# link, without the programs' main.c; READ_SOURCES and RUN_SOURCES: each
# target's own), the flags configure found and O.  GNU make.
#
#   $(O)/e2frag-fuzz          target.c: the read-only paths
#   $(O)/e2defrag-run-fuzz    target_run.c: a whole e2defrag run

FUZZ_CC ?= clang
FUZZ_CFLAGS ?= -g -O2 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_LDFLAGS ?= -fsanitize=fuzzer,address,undefined

vpath %.c $(srcdir) .
objs = $(patsubst %.c,$(O)/%.o,$(filter %.c,$(1)))
LIB_OBJS := $(call objs,$(LIB_SOURCES))
READ_OBJS := $(call objs,$(READ_SOURCES))
RUN_OBJS := $(call objs,$(RUN_SOURCES))

all: $(O)/e2frag-fuzz $(O)/e2defrag-run-fuzz

$(O)/e2frag-fuzz: $(LIB_OBJS) $(READ_OBJS)
	@echo "  CCLD     $@"
	@$(FUZZ_CC) $(FUZZ_LDFLAGS) $(READ_OBJS) $(LIB_OBJS) $(LIBS) -o $@

$(O)/e2defrag-run-fuzz: $(LIB_OBJS) $(RUN_OBJS)
	@echo "  CCLD     $@"
	@$(FUZZ_CC) $(FUZZ_LDFLAGS) $(RUN_OBJS) $(LIB_OBJS) $(LIBS) -o $@

$(O)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC       $@"
	@$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

-include $(LIB_OBJS:.o=.d) $(READ_OBJS:.o=.d) $(RUN_OBJS:.o=.d)
