build/opts.o: src/opts.c src/opts.h bpf/profile.h
src/opts.h:
bpf/profile.h:
