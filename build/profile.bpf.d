build/profile.bpf.o: bpf/profile.bpf.c vmlinux/x86/vmlinux.h \
  bpf/profile.h

vmlinux/x86/vmlinux.h:

bpf/profile.h:
