build/checks.o: src/checks.c src/opts.h
src/opts.h:
