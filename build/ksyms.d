build/ksyms.o: src/ksyms.c src/ksyms.h
src/ksyms.h:
