# fuzz.mk --- build the libFuzzer target with clang, apart from the
# ordinary build: its objects go under $(O), instrumented for coverage,
# ASan and UBSan.  Run by `make fuzz` (tests/fuzz/Makemodule.am), which
# passes the sources (those of the libraries the programs link, without
# the programs' main.c), the flags configure found and O.  GNU make.

FUZZ_CC ?= clang
FUZZ_CFLAGS ?= -g -O2 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_LDFLAGS ?= -fsanitize=fuzzer,address,undefined

vpath %.c $(srcdir) .
OBJS := $(patsubst %.c,$(O)/%.o,$(filter %.c,$(SOURCES)))

$(O)/e2frag-fuzz: $(OBJS)
	@echo "  CCLD     $@"
	@$(FUZZ_CC) $(FUZZ_LDFLAGS) $(OBJS) $(LIBS) -o $@

$(O)/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC       $@"
	@$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

-include $(OBJS:.o=.d)
