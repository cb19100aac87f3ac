build/session.o: src/session.c src/session.h src/opts.h bpf/profile.h \
 src/perf.h build/profile.skel.h
src/session.h:
src/opts.h:
bpf/profile.h:
src/perf.h:
build/profile.skel.h:
