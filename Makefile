# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# profile: a CO-RE eBPF CPU profiler.  `make V=1` shows the commands.

OUTPUT ?= build
# PREFIX, or prefix as in the GNU conventions.
prefix ?= /usr/local
PREFIX ?= $(prefix)
DESTDIR ?=
# x86_64 only: vmlinux/ holds x86's vmlinux.h, and the sampler reads x86's
# pt_regs.  Another architecture needs both (see bpf/profile.bpf.c).
# ARCH=x86_64, as some environments set it, is x86.
ARCH ?= $(shell uname -m)
override ARCH := $(patsubst x86_64,x86,$(ARCH))
ifneq ($(ARCH),x86)
$(error profile builds for x86_64 only, not $(ARCH): vmlinux/ and bpf/profile.bpf.c have no other architecture)
endif

CC ?= cc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

VERSION := 0.1.0
WARNINGS := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
	-Wundef -Wno-unused-parameter
CFLAGS ?= -O2 -g -fno-omit-frame-pointer
SAN_FLAGS ?=
# liblzma: MiniDebugInfo; libiberty (static, no .pc): C++ and Rust demangling;
# libdw: source lines and inlined functions from DWARF.  libcurl (OTLP export
# over HTTP(S)) and libdebuginfod are dlopen()ed when used: their headers
# only, not linked.
PKGS := libbpf libelf libdw zlib liblzma
ALL_CFLAGS := $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(SAN_FLAGS) -std=gnu11 -D_GNU_SOURCE \
	-DPROFILE_VERSION='"$(VERSION)"' \
	-I$(OUTPUT) -I. -Isrc $(shell $(PKG_CONFIG) --cflags $(PKGS) libcurl 2>/dev/null)
LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || echo -lbpf -lelf -ldw -lz -llzma) -liberty -ldl -lm -pthread
LDFLAGS ?=

BPF_CFLAGS := -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) \
	-Ivmlinux/$(ARCH) -Ibpf

# src/ has a folder per layer (README.md, Layout); every .c in it is built,
# and everything but main.o goes into a library the unit tests link
# against.  Objects mirror the tree under $(OUTPUT)/src/.  The unit tests
# are grouped the same way under tests/unit/ and built flat into
# $(OUTPUT)/tests/, their names being unique.
SRCS := $(wildcard src/*.c src/*/*.c src/*/*/*.c)
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c)
UNIT_BINS := $(addprefix $(OUTPUT)/tests/,$(basename $(notdir $(UNIT_SRCS))))

# Workloads with known answers for the end-to-end tests and the benchmark
# (tests/workloads/).  Their flags are fixed here, not taken from CFLAGS:
# the answers depend on them (burn-nofp must have no frame pointers).
WL_CFLAGS := -O2 -g
WL_FP := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
# -fasynchronous-unwind-tables is GCC's default on x86-64: said here, since
# the unwinding tests read the .eh_frame it makes.
WL_NOFP := -fomit-frame-pointer -fasynchronous-unwind-tables
WL_DIR := $(OUTPUT)/workloads
# The workloads of the unwinding tests (t70, t102): no frame pointers, and no
# sibling calls, so that every frame a test checks is a real one.
WL_UNWIND := deeprec sigburn allocaburn vdsoburn offcpu-min forkspin exitbig
# The workloads of the off-CPU tests (t87, t89): blocked in known functions,
# no frame pointers, no sibling calls.
WL_OFFCPU := offcpu wallmix
WORKLOADS := $(addprefix $(WL_DIR)/,burn burn-nofp burn-lld manystacks cxxburn jitburn faulter collide \
	manystacks-nofp cxxburn-nofp $(WL_UNWIND) $(WL_OFFCPU) pltburn libpltlib.so dlburn libdlburn.so \
	tlsburn libtlsburn.so fakepy fakepy-v burn-dbg.full burn-dbg.debug burn-stripped \
	manystacks-dyn.debug manystacks-dyn-stripped threadspawn threadspawn-nofp tpcall-nofp storm)

# A Rust release build (rustc -C opt-level=3): its standard library has
# frame pointers, its own code not, in one object (t73).  rustup puts rustc
# in ~/.cargo/bin, which make's PATH may lack (sudo, CI shells); built only
# when a rustc is found (without make's jobserver, which it would look for).
RUSTC ?= $(firstword $(shell command -v rustc 2>/dev/null) \
	$(wildcard $(HOME)/.cargo/bin/rustc /root/.cargo/bin/rustc))
ifneq ($(RUSTC),)
WORKLOADS += $(WL_DIR)/rustburn
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY: $(OUTPUT)/profile.bpf.o $(OUTPUT)/knames.bpf.o $(OUTPUT)/klist.bpf.o \
	$(OUTPUT)/bulk.bpf.o
.PHONY: all clean install uninstall test unit-bins workloads vmlinux check-asan bench fuzz test-kernels

all: $(OUTPUT)/profile

$(OUTPUT) $(OUTPUT)/tests $(WL_DIR):
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# The skeleton embeds the object, which libbpf reads whole at the load and
# which stays resident after: without its DWARF (libbpf reads BTF, not
# DWARF), 0.8 of its 1.3 MB are gone.  The .bpf.o keeps it, for debugging.
$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o Makefile
	$(call msg,GEN-SKEL,$@)
	$(Q)$(LLVM_STRIP) -g $< -o $(OUTPUT)/$*.bpf.strip.o
	$(Q)$(BPFTOOL) gen skeleton $(OUTPUT)/$*.bpf.strip.o name $*_bpf > $@

$(OUTPUT)/src/%.o: src/%.c Makefile | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p "$(@D)"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The loaders include the skeletons; make those edges explicit.
$(OUTPUT)/src/loader/session.o: $(OUTPUT)/profile.skel.h $(OUTPUT)/klist.skel.h
# An interpreter's loader code sizes its own maps in the skeleton.
$(filter $(OUTPUT)/src/interp/%,$(LIB_OBJS)): $(OUTPUT)/profile.skel.h
$(OUTPUT)/src/symbols/knames.o: $(OUTPUT)/knames.skel.h
$(OUTPUT)/src/loader/bulk.o: $(OUTPUT)/bulk.skel.h

# The flame graph's stylesheet and script are files of their own, embedded
# in svg.o as byte arrays.
$(OUTPUT)/svg_assets.h: src/output/flamegraph.css src/output/flamegraph.js | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)(cd src/output && xxd -i flamegraph.css && xxd -i flamegraph.js) | \
		sed 's/^unsigned/static const unsigned/' >$@
$(OUTPUT)/src/output/svg.o: $(OUTPUT)/svg_assets.h

$(OUTPUT)/libprofile.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/profile: $(OUTPUT)/src/main.o $(OUTPUT)/libprofile.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

# A rule for each unit test: its source is in some folder of tests/unit/.
define unit_rule
$(OUTPUT)/tests/$(basename $(notdir $(1))): $(1) tests/unit/unit.h $(OUTPUT)/libprofile.a | $(OUTPUT)/tests
	$$(call msg,CC,$$@)
	$$(Q)$$(CC) $$(ALL_CFLAGS) -MMD -MP -Itests/unit -Itests $$< $$(OUTPUT)/libprofile.a $$(LIBS) -o $$@
endef
$(foreach s,$(UNIT_SRCS),$(eval $(call unit_rule,$(s))))

unit-bins: $(UNIT_BINS)

$(WL_DIR)/burn: tests/workloads/burn.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -pthread -o $@ $<

$(WL_DIR)/burn-nofp: tests/workloads/burn.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -pthread -o $@ $<

# Threads created in a loop (t74): samples in clone3 and start_thread.
$(WL_DIR)/threadspawn: tests/workloads/threadspawn.c tests/workloads/spin.h | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -pthread -o $@ $<

$(WL_DIR)/threadspawn-nofp: tests/workloads/threadspawn.c tests/workloads/spin.h | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -pthread -o $@ $<

# Linked by lld, which packs segments without a page gap in the file (Rust,
# LLVM-built software): the executable mapping's offset also lies in the
# read-only segment before it.
$(WL_DIR)/burn-lld: tests/workloads/burn.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fuse-ld=lld -pthread -o $@ $<

$(WL_DIR)/manystacks: tests/workloads/manystacks.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -pthread -o $@ $<

# It computes the sampler's spill hash, from bpf/profile.h.
$(WL_DIR)/collide: tests/workloads/collide.c bpf/profile.h | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -Ibpf -pthread -o $@ $<

$(WL_DIR)/cxxburn: tests/workloads/cxxburn.cpp | $(WL_DIR)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(WL_CFLAGS) $(WL_FP) -o $@ $<

$(WL_DIR)/manystacks-nofp: tests/workloads/manystacks.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -pthread -o $@ $<

$(WL_DIR)/cxxburn-nofp: tests/workloads/cxxburn.cpp | $(WL_DIR)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(WL_CFLAGS) $(WL_NOFP) -o $@ $<

$(addprefix $(WL_DIR)/,$(WL_UNWIND)): $(WL_DIR)/%: tests/workloads/%.c tests/workloads/spin.h | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -o $@ $< -ldl

# System calls from known functions, for tracepoint events (t86).
$(WL_DIR)/tpcall-nofp: tests/workloads/tpcall.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -o $@ $<

# Blocked in known functions, for off-CPU and wall-clock profiles (t87, t89).
$(addprefix $(WL_DIR)/,$(WL_OFFCPU)): $(WL_DIR)/%: tests/workloads/%.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -pthread -o $@ $<

$(WL_DIR)/lib%.so: tests/workloads/lib%.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -fPIC -shared -o $@ $<

# Calls into libpltlib.so through its PLT, bound lazily; found beside it.
$(WL_DIR)/pltburn: tests/workloads/pltburn.c tests/workloads/spin.h $(WL_DIR)/libpltlib.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -o $@ $< \
		-L$(WL_DIR) -lpltlib -Wl,-z,lazy -Wl,-rpath,'$$ORIGIN'

# dlopen()s libdlburn.so from its own directory once it has started.
$(WL_DIR)/dlburn: tests/workloads/dlburn.c tests/workloads/spin.h $(WL_DIR)/libdlburn.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -o $@ $< -ldl

# Reads a thread-local variable of libtlsburn.so through ld.so's
# __tls_get_addr; found beside it.
$(WL_DIR)/tlsburn: tests/workloads/tlsburn.c tests/workloads/spin.h $(WL_DIR)/libtlsburn.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP) -fno-optimize-sibling-calls -o $@ $< \
		-L$(WL_DIR) -ltlsburn -Wl,-rpath,'$$ORIGIN'

# Programs that look like CPython and are not (t80): _PyRuntime exported,
# in .dynsym as well as .symtab (-rdynamic); fakepy-v also says 3.11.2.
$(WL_DIR)/fakepy: tests/workloads/fakepy.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -rdynamic -pthread -o $@ $<

$(WL_DIR)/fakepy-v: tests/workloads/fakepy.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -rdynamic -pthread -DFAKEPY_VERSION=0x030b02f0 -o $@ $<

# burn with a build-id and its names only in a separate debug file, for
# the debuginfod tests (t90): burn-dbg.full as linked, burn-dbg.debug its
# debug file, burn-stripped without .symtab and without a .gnu_debuglink,
# so that nothing on this machine names func_a and func_b, and only a
# debuginfod server can.
$(WL_DIR)/burn-dbg.full: tests/workloads/burn.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -pthread -Wl,--build-id -o $@ $<

# manystacks the same way, linked -rdynamic: stripped, its .dynsym still
# names f0..f7, so that frames have names before the debug file comes.
$(WL_DIR)/manystacks-dyn.full: tests/workloads/manystacks.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -pthread -rdynamic -Wl,--build-id -o $@ $<

$(WL_DIR)/%.debug: $(WL_DIR)/%.full
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --only-keep-debug $< $@

$(WL_DIR)/burn-stripped: $(WL_DIR)/burn-dbg.full
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --strip-all $< $@

$(WL_DIR)/manystacks-dyn-stripped: $(WL_DIR)/manystacks-dyn.full
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --strip-all $< $@

$(WL_DIR)/%: tests/workloads/%.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

$(WL_DIR)/rustburn: tests/workloads/rustburn.rs | $(WL_DIR)
	$(call msg,RUSTC,$@)
	$(Q)MAKEFLAGS= $(RUSTC) -C opt-level=3 -o $@ $<

workloads: $(WORKLOADS)

# The whole suite: unit tests, then the end-to-end tests (root and BPF).
test: all $(UNIT_BINS) $(WORKLOADS)
	$(Q)PROFILE_BUILD="$(OUTPUT)" tests/run

# The same suite on an AddressSanitizer + UBSan build, beside the other one.
ASAN_OUTPUT := $(OUTPUT)-asan

check-asan:
	$(MAKE) OUTPUT="$(ASAN_OUTPUT)" SAN_FLAGS='-fsanitize=address,undefined -fno-omit-frame-pointer' all unit-bins workloads
	PROFILE_BUILD="$(ASAN_OUTPUT)" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 tests/run

bench: all $(WORKLOADS)
	bench/run

# Boot Debian's 6.1 kernel under qemu and run the known-answer checks in it
# (downloads only Debian packages; see tests/kernels/README.md).
test-kernels: all $(WL_DIR)/burn $(WL_DIR)/burn-nofp $(WL_DIR)/tpcall-nofp $(WL_DIR)/offcpu-min
	PROFILE_BUILD="$(OUTPUT)" tests/kernels/run

# libFuzzer targets for the parsers of untrusted input, 60 s each.  OUT
# relative to fuzz/ unless OUTPUT is absolute: fuzz/Makefile names targets
# by it, and make cannot name a path with a space (a source tree may have
# one; OUTPUT may not).
fuzz:
	$(MAKE) -C fuzz run OUT=$(if $(filter /%,$(OUTPUT)),$(OUTPUT),../$(OUTPUT))/fuzz

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

# make install [DESTDIR=...] [PREFIX=/usr/local]; make uninstall removes
# exactly what install put there.
SBINDIR := $(DESTDIR)$(PREFIX)/sbin
MAN8DIR := $(DESTDIR)$(PREFIX)/share/man/man8

install: all
	install -d "$(SBINDIR)" "$(MAN8DIR)"
	install -m 0755 $(OUTPUT)/profile "$(SBINDIR)/profile"
	install -m 0644 man/profile.8 "$(MAN8DIR)/profile.8"

uninstall:
	rm -f "$(SBINDIR)/profile" "$(MAN8DIR)/profile.8"

clean:
	rm -rf "$(OUTPUT)" "$(ASAN_OUTPUT)"

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/src/*.d $(OUTPUT)/src/*/*.d $(OUTPUT)/src/*/*/*.d $(OUTPUT)/tests/*.d)
