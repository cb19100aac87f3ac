build/output.o: src/output.c src/output.h src/strbuf.h src/symbolize.h \
 bpf/profile.h
src/output.h:
src/strbuf.h:
src/symbolize.h:
bpf/profile.h:
