# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make            build the BPF objects, skeletons, loader, tests and bench
# make deps       install the Debian 12 packages the build and tests need
# make test       unit tests (host + BPF_PROG_TEST_RUN), namespace tests, the
#                 ns-3 engine's and the VM's
# make sim        the ns-3 engine, build/afcd-sim (tools/deps.sh --ns3 first)
# make bench      per-packet cost of every algo next to baseline programs
# make bench-qdisc the qdisc backend against pfifo, fq, fq_codel, cake, bpf_fq (VM, 6.18)
# make bench-wire  the qdisc backend at a NIC's own rate, fairness against a flood (VM)
# make bench-churn long-lived flows' fairness under churn of 10^5-10^6 flows (host, minutes)
# make demo       the testbed demo, about 15 min (see README.md)
# make demo-full  every workload of the demo, three repeats
# make install    afcd and its tools to $(PREFIX)/sbin, the systemd unit, /etc/afcd
#                 examples, man pages, bash completion
# make deb        the Debian package (debian/), checked by lintian
# make clean
#
# Quiet by default; V=1 prints every command. Objects go to $(OUT).

OUT       ?= build
VERSION   := $(shell cat VERSION)
CLANG     ?= clang
# the qdisc object's kptr fields need BTF type tags, which clang >= 15 emits
CLANG_KPTR ?= clang-16
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
# libbpf < 1.2 (Debian 12's own 1.1) cannot load an object that calls a
# weak kfunc the kernel lacks (bpf_cast_to_kern_ctx() before Linux 6.2):
# built against it, the datapath reads its device's network namespace
# with bpf_probe_read_kernel() on every kernel (bpf/afcd.bpf.c)
LIBBPF_VERSION := $(shell pkg-config --modversion libbpf 2>/dev/null)
ifneq ($(firstword $(shell printf '1.2.0\n%s\n' "$(LIBBPF_VERSION)" | sort -V)),1.2.0)
  BPF_CFLAGS += -DAFCD_NO_KFUNC
else ifeq ($(LIBBPF_VERSION),)
  BPF_CFLAGS += -DAFCD_NO_KFUNC
endif
INCLUDES  := -I$(OUT) -Imaps -Ibpf
LIBS      := -lbpf -lelf -lz
# Host tests of the decision headers run under ASan/UBSan. Unaligned
# packet loads are deliberate (BPF direct packet access on x86).
SANITIZE  ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-sanitize=alignment

BPF_OBJS  := $(OUT)/afcd.bpf.o $(OUT)/afcd_ctl.bpf.o $(OUT)/afcd_qdisc.bpf.o $(OUT)/bench.bpf.o \
	     $(OUT)/bench_stages.bpf.o
SKELS     := $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(OUT)/bench.skel.h \
	     $(OUT)/bench_stages.skel.h
BINS      := $(OUT)/afcd $(OUT)/test_law $(OUT)/test_datapath $(OUT)/afcd-bench \
             $(OUT)/afcd-qsample
HDRS      := maps/afcd_maps.h maps/afcd_maps.bpf.h $(wildcard bpf/*.h)

.PHONY: all deps test test-unit test-netns test-sim test-vm bench bench-qdisc bench-wire bench-churn fuzz demo demo-full install deb docs clean sim
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

# afcd_egress cut after each stage: includes afcd.bpf.c
$(OUT)/bench_stages.bpf.o: bpf/afcd.bpf.c

$(OUT)/afcd_qdisc.bpf.o: bpf/afcd_qdisc.bpf.c $(HDRS) $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG_KPTR) $(BPF_CFLAGS) $(INCLUDES) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# the qdisc object is embedded as it is (.incbin), not as a skeleton:
# bpftool >= 7.5 writes struct_ops skeletons for libbpf >= 1.5 only
$(OUT)/afcd: loader/*.c loader/*.h $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(OUT)/afcd_qdisc.bpf.o \
	     $(HDRS) VERSION | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -DAFCD_VERSION='"$(VERSION)"' \
		-DAFCD_QDISC_OBJ='"$(abspath $(OUT)/afcd_qdisc.bpf.o)"' $(INCLUDES) -Iloader \
		loader/*.c -o $@ $(LDFLAGS) $(LIBS) -lmicrohttpd -lmnl -ljson-c -lm

$(OUT)/test_law: tests/unit/test_law.c lib/pkt.h tests/unit/check.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -Wno-unknown-pragmas $(INCLUDES) -Ilib -Itests/unit $< -o $@ -lm

# the BPF_PROG_TEST_RUN tests: one runner, a file per concern (tests/bpf)
$(OUT)/test_datapath: tests/bpf/*.c tests/bpf/*.h loader/sys.c loader/log.c loader/qread.c lib/pkt.h \
		      tests/unit/check.h $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-unknown-pragmas $(INCLUDES) -Ilib -Iloader -Itests/unit -Itests/bpf tests/bpf/*.c \
		loader/sys.c loader/log.c loader/qread.c -o $@ $(LIBS) -lpthread -lm

$(OUT)/afcd-bench: tools/afcd-bench.c loader/sys.c loader/log.c loader/qread.c lib/pkt.h \
		   $(OUT)/afcd.skel.h $(OUT)/bench.skel.h $(OUT)/bench_stages.skel.h $(HDRS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Ilib -Iloader $< loader/sys.c loader/log.c loader/qread.c \
		-o $@ $(LIBS)

# The ns-3 engine (sim/, testbed/ns3.py): the datapath's own programs as the
# bottleneck of ns-3 3.44 from PyPI's wheel (tools/deps.sh --ns3 unpacks it
# to NS3_DIR), the loader's parameter code linked in.
NS3_DIR  ?= /usr/local/lib/afcd-ns3/ns3
NS3_LIBS := core network internet point-to-point applications traffic-control stats
CXX      ?= g++
sim: $(OUT)/afcd-sim
$(OUT)/afcd-sim: sim/*.cc sim/*.h sim/afcd_drive.c loader/params.c loader/params_doc.c loader/units.c loader/sys.c loader/log.c loader/qread.c loader/qjson.c \
		 $(OUT)/afcd.skel.h $(OUT)/afcd_ctl.skel.h $(HDRS) | $(OUT)
	$(call msg,CXX,$@)
	$(Q)test -d $(NS3_DIR)/include || { echo "no ns-3 under $(NS3_DIR): tools/deps.sh --ns3"; exit 1; }
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c sim/afcd_drive.c -o $(OUT)/sim_drive.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/params.c -o $(OUT)/sim_params.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/params_doc.c -o $(OUT)/sim_params_doc.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/units.c -o $(OUT)/sim_units.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/sys.c -o $(OUT)/sim_sys.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/log.c -o $(OUT)/sim_log.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/qread.c -o $(OUT)/sim_qread.o
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Iloader -c loader/qjson.c -o $(OUT)/sim_qjson.o
	$(Q)$(CXX) -std=c++20 -O2 -g -Wall -isystem $(NS3_DIR)/include -Isim $(INCLUDES) \
		sim/*.cc $(OUT)/sim_drive.o $(OUT)/sim_params.o $(OUT)/sim_params_doc.o $(OUT)/sim_units.o \
		$(OUT)/sim_sys.o $(OUT)/sim_log.o $(OUT)/sim_qread.o $(OUT)/sim_qjson.o -o $@ \
		-L$(NS3_DIR)/lib64 -Wl,-rpath,$(NS3_DIR)/lib64 $(addprefix -lns3.44-,$(NS3_LIBS)) \
		$(LIBS) -ljson-c -lm

# the testbed's native queue sampler (testbed/qsample.py)
$(OUT)/afcd-qsample: tools/afcd-qsample.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lmnl

# The README's test command: installs what is missing, builds, then runs
# the unit tests (fast, no network), the namespace tests on the host
# kernel, then the VM scenarios.
test:
	$(Q)tools/deps.sh --vm --ns3
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory test-unit test-netns test-sim test-vm

test-unit: all
	$(Q)$(OUT)/test_law
	$(Q)$(PYTHON) -m pytest -q tests/unit
	$(Q)$(OUT)/test_datapath

test-netns: all
	$(Q)$(PYTHON) -m pytest -q tests/netns

# the ns-3 engine, where ns-3 is installed (else the tests say why they skip)
test-sim: all
	$(Q)if [ -d $(NS3_DIR)/include ]; then $(MAKE) --no-print-directory sim; fi
	$(Q)$(PYTHON) -m pytest -q tests/sim

test-vm: all
	$(Q)$(PYTHON) -m pytest -q -s --durations=0 tests/vm

bench: all
	$(Q)$(OUT)/afcd-bench
	$(Q)$(PYTHON) -m testbed.bench_loader

# the qdisc backend's cost through a veth against pfifo, fq, fq_codel, cake,
# the kernel's BPF FQ (bpf_fq: its selftest, built for the VM's kernel from
# that release's source by tools/bpf-fq.sh) and a BPF FIFO, in a VM booted
# from a kernel with BPF qdiscs (tools/deps.sh --vm)
QDISC_KERNEL ?= 6.18
bench-qdisc: all
	$(Q)tools/bpf-fq.sh $(OUT)/bpf_qdisc_fq.bpf.o \
		$$(ls /boot/vmlinuz-$(QDISC_KERNEL).*+deb13-amd64 2>/dev/null | \
		   sed 's|^/boot/vmlinuz-||' | sort -V | tail -1) || true
	$(Q)$(PYTHON) -m testbed script testbed/qdisc_bench.py --kernel $(QDISC_KERNEL) \
		--vm-timeout 5400 --out $(OUT)/bench-qdisc

# the qdisc backend without a rate on a NIC that pushes back (the wire,
# testbed/wire.py) against pfifo, fq_codel and itself paced, in the VM
WIRE_MBIT ?= 12
bench-wire: all
	$(Q)$(PYTHON) -m testbed script testbed/wire_bench.py --kernel $(QDISC_KERNEL) \
		--wire $(WIRE_MBIT) --out $(OUT)/bench-wire

# the long-lived flows' fairness under a churn of 10^5 and 10^6 flows past
# the flow table's bound, and in crowds of 300-2,000 flows: model senders on
# the test clock (tests/bpf/test_loop.c, about 6 + 3 min), then the churn with
# ns-3's TCP (testbed/churn_sim.py, about 16 min on two cores)
bench-churn: all
	$(Q)AFCD_CHURN_SCALE=1 $(OUT)/test_datapath test_churn_at_scale
	$(Q)AFCD_CHURN_SCALE=1 $(OUT)/test_datapath test_crowd_at_scale
	$(Q)tools/deps.sh --ns3
	$(Q)$(MAKE) --no-print-directory sim
	$(Q)$(PYTHON) -m testbed.churn_sim --out $(OUT)/bench-churn-ns3.json

# 10^7 mutated frames (2 * 10^6 per algorithm) through the datapath;
# make test runs 10^5 per algorithm.
fuzz: all
	$(Q)AFCD_FUZZ_N=2000000 $(OUT)/test_datapath test_fuzz

# The README's demo command: installs what is missing, builds, runs the
# main job (in a VM when this kernel lacks sch_fq or netem).
demo:
	$(Q)tools/deps.sh --vm
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(PYTHON) -m testbed demo

# Every workload of the demo, three repeats (about 2.5 h on a TCG guest).
demo-full:
	$(Q)tools/deps.sh --vm
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(PYTHON) -m testbed demo --full

# The manual pages and the bash completion, generated by afcd itself from
# its command, option and parameter tables (loader/doc.c).
DOCS := $(OUT)/afcd.8 $(OUT)/afcd.conf.5 $(OUT)/afcd.bash
$(OUT)/afcd.8 $(OUT)/afcd.conf.5: $(OUT)/afcd
	$(call msg,GEN,$@)
	$(Q)$(OUT)/afcd manpage $(notdir $@) > $@
$(OUT)/afcd.bash: $(OUT)/afcd
	$(call msg,GEN,$@)
	$(Q)$(OUT)/afcd completion bash > $@
docs: $(DOCS)

# The loader carries its BPF objects (skeletons): one binary to install,
# with the tools, the systemd unit (not enabled), examples in /etc/afcd,
# the manual pages and the completion.
PREFIX  ?= /usr/local
DESTDIR ?=
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
install: $(OUT)/afcd $(DOCS)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/sbin/afcd)
	$(Q)install -D -m 0755 $(OUT)/afcd $(DESTDIR)$(PREFIX)/sbin/afcd
	$(Q)install -D -m 0755 tools/afcd-top $(DESTDIR)$(PREFIX)/sbin/afcd-top
	$(Q)install -D -m 0755 tools/afcd-trace $(DESTDIR)$(PREFIX)/sbin/afcd-trace
	$(Q)sed 's#/usr/local/sbin/afcd#$(PREFIX)/sbin/afcd#' deploy/systemd/afcd@.service | \
		install -D -m 0644 /dev/stdin $(DESTDIR)$(SYSTEMDUNITDIR)/afcd@.service
	$(Q)install -D -m 0644 deploy/systemd/example.conf $(DESTDIR)/etc/afcd/example.conf
	$(Q)install -D -m 0644 deploy/systemd/example.env $(DESTDIR)/etc/afcd/example.env
	$(Q)install -D -m 0644 $(OUT)/afcd.8 $(DESTDIR)$(PREFIX)/share/man/man8/afcd.8
	$(Q)install -D -m 0644 $(OUT)/afcd.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/afcd.conf.5
	$(Q)install -D -m 0644 docs/man/afcd-top.8 $(DESTDIR)$(PREFIX)/share/man/man8/afcd-top.8
	$(Q)install -D -m 0644 docs/man/afcd-trace.8 $(DESTDIR)$(PREFIX)/share/man/man8/afcd-trace.8
	$(Q)install -D -m 0644 $(OUT)/afcd.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/afcd

# The Debian package, built by dpkg-buildpackage (debian/, debhelper) from
# a copy of the tracked and new files only (no build/, no results), then
# checked by lintian (debian/afcd.lintian-overrides says why for what is
# left). The .deb lands in $(OUT)/deb/.
deb:
	$(Q)rm -rf $(OUT)/deb && mkdir -p $(OUT)/deb/afcd-$(VERSION)
	$(Q)git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C $(OUT)/deb/afcd-$(VERSION)
	$(Q)cd $(OUT)/deb/afcd-$(VERSION) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -30 ../build.log; exit 1; }
	$(Q)lintian --fail-on error,warning $(OUT)/deb/afcd_$(VERSION)_*.deb
	@ls $(OUT)/deb/*.deb

clean:
	$(call msg,CLEAN,$(OUT))
	$(Q)rm -rf $(OUT)
