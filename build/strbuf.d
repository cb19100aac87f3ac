build/strbuf.o: src/strbuf.c src/strbuf.h
src/strbuf.h:
