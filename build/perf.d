build/perf.o: src/perf.c src/perf.h
src/perf.h:
