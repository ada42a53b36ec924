# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make            build the BPF objects, skeletons, loader, tests and bench
# make deps       install the Debian 12 packages the build and tests need
# make test       unit tests (host + BPF_PROG_TEST_RUN) and namespace tests
# make bench      per-packet cost of every algo next to baseline programs
# make demo       the testbed demo (see README.md)
# make install    afcd to $(PREFIX)/sbin, the systemd unit, /etc/afcd
# make clean
#
# Quiet by default; V=1 prints every command. Objects go to $(OUT).

OUT       ?= build
CLANG     ?= clang
CC        ?= cc
BPFTOOL   ?= bpftool
PYTHON    ?= /usr/bin/python3
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

ifeq ($(V),1)
  Q :=
  msg :=
else
  Q := @
  msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS    ?= -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Wno-unused-function
INCLUDES  := -I$(OUT) -Imaps -Ibpf
LIBS      := -lbpf -lelf -lz
# Host tests of the decision headers run under ASan/UBSan. Unaligned
# packet loads are deliberate (BPF direct packet access on x86).
SANITIZE  ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-sanitize=alignment

BPF_OBJS  := $(OUT)/afcd.bpf.o $(OUT)/afcd_ctl.bpf.o $(OUT)/bench.bpf.o
SKELS     := $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(OUT)/bench.skel.h
BINS      := $(OUT)/afcd $(OUT)/test_law $(OUT)/test_datapath $(OUT)/afcd-bench \
             $(OUT)/afcd-qsample
HDRS      := maps/afcd_maps.h maps/afcd_maps.bpf.h bpf/afcd_law.h bpf/afcd_ctl.h bpf/afcd_parse.h \
             bpf/afcd_decide.h

.PHONY: all deps test test-unit test-netns test-vm bench fuzz demo install clean
.DELETE_ON_ERROR:

all: $(BPF_OBJS) $(SKELS) $(BINS)

deps:
	$(Q)tools/deps.sh

$(OUT):
	$(Q)mkdir -p $@

$(OUT)/vmlinux.h: | $(OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(HDRS) $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(INCLUDES) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUT)/afcd: loader/*.c loader/*.h $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader loader/*.c -o $@ $(LIBS) -lmicrohttpd -lmnl -ljson-c -lm

$(OUT)/test_law: tests/unit/test_law.c tests/unit/pkt.h tests/unit/check.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -Wno-unknown-pragmas $(INCLUDES) -Itests/unit $< -o $@ -lm

# the BPF_PROG_TEST_RUN tests: one runner, a file per concern (tests/bpf)
$(OUT)/test_datapath: tests/bpf/*.c tests/bpf/*.h tests/unit/pkt.h tests/unit/check.h \
		      $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-unknown-pragmas $(INCLUDES) -Itests/unit -Itests/bpf tests/bpf/*.c \
		-o $@ $(LIBS) -lpthread -lm

$(OUT)/afcd-bench: tools/afcd-bench.c tests/unit/pkt.h $(OUT)/afcd.skel.h $(OUT)/bench.skel.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Itests/unit $< -o $@ $(LIBS)

# the testbed's native queue sampler (testbed/qsample.py)
$(OUT)/afcd-qsample: tools/afcd-qsample.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lmnl

# The README's test command: installs what is missing, builds, then runs
# the unit tests (fast, no network), the namespace tests on the host
# kernel, then the VM scenarios.
test:
	$(Q)tools/deps.sh --vm
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory test-unit test-netns test-vm

test-unit: all
	$(Q)$(OUT)/test_law
	$(Q)$(PYTHON) -m pytest -q tests/unit
	$(Q)$(OUT)/test_datapath

test-netns: all
	$(Q)$(PYTHON) -m pytest -q tests/netns

test-vm: all
	$(Q)$(PYTHON) -m pytest -q -s tests/vm

bench: all
	$(Q)$(OUT)/afcd-bench
	$(Q)$(PYTHON) tools/afcd-bench-loader

# 10^7 mutated frames (2 * 10^6 per algorithm) through the datapath;
# make test runs 10^5 per algorithm.
fuzz: all
	$(Q)AFCD_FUZZ_N=2000000 $(OUT)/test_datapath test_fuzz

# The README's demo command: installs what is missing, builds, runs the
# main job (in a VM when this kernel lacks sch_fq or netem).
demo:
	$(Q)tools/deps.sh --vm
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(PYTHON) tools/afcd-testbed demo

# The loader carries its BPF objects (skeletons): one binary to install.
PREFIX  ?= /usr/local
DESTDIR ?=
install: $(OUT)/afcd
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/sbin/afcd)
	$(Q)install -D -m 0755 $(OUT)/afcd $(DESTDIR)$(PREFIX)/sbin/afcd
	$(Q)sed 's#/usr/local/sbin/afcd#$(PREFIX)/sbin/afcd#' deploy/systemd/afcd@.service | \
		install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/lib/systemd/system/afcd@.service
	$(Q)install -d -m 0755 $(DESTDIR)/etc/afcd

clean:
	$(call msg,CLEAN,$(OUT))
	$(Q)rm -rf $(OUT)
