// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Short names of demangled C++ and Rust names (demangle__shorten()): what
 * goes, what stays, and every name that must come through as it is.
 */
#include <stdlib.h>
#include "unit.h"
#include "symbols/demangle.h"

struct case_ {
	const char *in;
	const char *want;	/* NULL: kept as it is */
};

/* in shortened as want says; a kept name returns 0 and writes nothing useful. */
static int check_short(const struct case_ *c)
{
	size_t size = strlen(c->in) + 1;
	char *buf = malloc(size);
	size_t n;
	int ok;

	if (!buf)
		return 0;
	n = demangle__shorten(c->in, buf, size);
	if (!c->want)
		ok = n == 0;
	else
		ok = n == strlen(c->want) && !strcmp(buf, c->want);
	if (!ok)
		fprintf(stderr, "  \"%s\" -> \"%s\" (%zu), expected \"%s\"\n", c->in,
			n ? buf : "(kept)", n, c->want ? c->want : "(kept)");
	free(buf);
	return ok;
}

/*
 * Every prefix of name, in a buffer of its exact size (ASan sees a read
 * past the end): whatever comes out is no longer than what went in.
 */
static int check_prefixes(const char *name)
{
	size_t len = strlen(name);

	for (size_t k = 0; k <= len; k++) {
		char *in = malloc(k + 1), *out = malloc(k + 1);
		size_t n;

		if (!in || !out) {
			free(in);
			free(out);
			return 0;
		}
		memcpy(in, name, k);
		in[k] = '\0';
		n = demangle__shorten(in, out, k + 1);
		free(in);
		free(out);
		if (n > k || (n && n == k))
			return 0;
	}
	return 1;
}

static void check_table(const struct case_ *cs, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		CHECK(check_short(&cs[i]));
		CHECK(check_prefixes(cs[i].in));
	}
}

#define TABLE(t) check_table(t, sizeof(t) / sizeof(*(t)))

TEST(cxx_params_and_templates)
{
	static const struct case_ t[] = {
		{ "engine::Matrix<double>::multiply(unsigned long) const",
		  "engine::Matrix::multiply" },
		{ "engine::hash_strings(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > const&)",
		  "engine::hash_strings" },
		{ "node::LoadEnvironment(node::Environment*, std::function<v8::MaybeLocal<v8::Value> (node::StartExecutionCallbackInfo const&)>)",
		  "node::LoadEnvironment" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector::push_back" },
		{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create(unsigned long&, unsigned long)",
		  "std::__cxx11::basic_string::_M_create" },
		{ "std::_Function_handler<int (int), use()::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)",
		  "std::_Function_handler::_M_invoke" },
		{ "use()", "use" },
		{ "A::~A()", "A::~A" },
		{ "ns::Foo<(((1)>(2)))>::bar()", "ns::Foo::bar" },
	};
	TABLE(t);
}

TEST(cxx_return_types)
{
	static const struct case_ t[] = {
		{ "int twice<int>(int)", "twice" },
		{ "unsigned long engine::sum<unsigned long>(unsigned long const*)", "engine::sum" },
		{ "char const* name_of<A>(A const&)", "name_of" },
		{ "std::vector<int, std::allocator<int> > make<int>()", "make" },
		{ "(anonymous namespace)::X make_x<int>()", "make_x" },
		/* A function pointer's return type: kept. */
		{ "void (*signal_of<int>(int))(int)", NULL },
		{ "decltype (({parm#1}+{parm#2})) add<int, int>(int, int)", NULL },
	};
	TABLE(t);
}

TEST(cxx_operators)
{
	static const struct case_ t[] = {
		{ "A::operator<(A const&) const", "A::operator<" },
		{ "A::operator<<(int)", "A::operator<<" },
		{ "A::operator<<=(int)", "A::operator<<=" },
		{ "A::operator>>(int)", "A::operator>>" },
		{ "A::operator()(int) const", "A::operator()" },
		{ "A::operator->()", "A::operator->" },
		{ "A::operator->*(int)", "A::operator->*" },
		{ "A::operator<=>(A const&) const", "A::operator<=>" },
		{ "A::operator[](unsigned long)", "A::operator[]" },
		{ "A::operator==(A const&) const", "A::operator==" },
		{ "bool operator< <int>(std::vector<int, std::allocator<int> > const&, int)",
		  "operator<" },
		{ "bool operator><int>(std::vector<int, std::allocator<int> > const&, int)",
		  "operator>" },
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
		  "std::operator<<" },
		{ "A::operator bool() const", "A::operator bool" },
		{ "A::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >() const",
		  "A::operator std::__cxx11::basic_string" },
		{ "A::operator char const*() const", "A::operator char const*" },
		{ "operator new(unsigned long)", "operator new" },
		{ "operator delete[](void*)", "operator delete[]" },
		{ "operator\"\" _km(unsigned long long)", "operator\"\" _km" },
		/* Not the keyword: an identifier that starts with it. */
		{ "ns::operator_table<int>::get()", "ns::operator_table::get" },
		{ "operator", NULL },
		{ "A::operator", NULL },
	};
	TABLE(t);
}

TEST(cxx_lambdas_and_local_names)
{
	static const struct case_ t[] = {
		{ "use()::{lambda(int)#1}::operator()(int) const",
		  "use::{lambda()#1}::operator()" },
		{ "engine::run(std::vector<int, std::allocator<int> > const&)::{lambda(auto:1)#2}::operator()<int>(int) const",
		  "engine::run::{lambda()#2}::operator()" },
		{ "engine::run(int)::counter", "engine::run::counter" },
		{ "(anonymous namespace)::anon_f(int)", "(anonymous namespace)::anon_f" },
		{ "a::(anonymous namespace)::B<int>::f()", "a::(anonymous namespace)::B::f" },
		{ "{lambda(int)#1}::operator()(int) const", "{lambda()#1}::operator()" },
		{ "f()::{unnamed type#1}::g()", "f::{unnamed type#1}::g" },
	};
	TABLE(t);
}

TEST(cxx_qualifiers_tags_clones)
{
	static const struct case_ t[] = {
		{ "B::f() &&", "B::f" },
		{ "B::g() volatile &", "B::g" },
		{ "B::h() const volatile", "B::h" },
		{ "B::k() const noexcept", "B::k" },
		{ "tagged[abi:cxx11]()", "tagged" },
		{ "std::__cxx11::to_string[abi:cxx11](int)", "std::__cxx11::to_string" },
		{ "foo(int) [clone .cold]", "foo" },
		{ "ns::foo(int) [clone .isra.0] [clone .cold]", "ns::foo" },
		{ "ns::foo(int) [clone .constprop.0]", "ns::foo" },
		{ "non-virtual thunk to Foo::bar(int)", "non-virtual thunk to Foo::bar" },
		{ "virtual thunk to Foo<int>::~Foo()", "virtual thunk to Foo::~Foo" },
		{ "TLS wrapper function for ns::tls_var", NULL },
		{ "foo() const x", NULL },
	};
	TABLE(t);
}

TEST(rust)
{
	static const struct case_ t[] = {
		{ "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
		  "<alloc::vec::Vec as core::ops::drop::Drop>::drop" },
		{ "<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop",
		  "<alloc::vec::Vec as core::ops::drop::Drop>::drop" },
		{ "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold",
		  "<core::iter::adapters::map::Map as core::iter::traits::iterator::Iterator>::fold" },
		{ "<fn() -> i32 as core::ops::function::FnOnce<()>>::call_once",
		  "<fn() -> i32 as core::ops::function::FnOnce>::call_once" },
		{ "core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place" },
		{ "core::ptr::drop_in_place::<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place" },
		{ "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>",
		  "core::ptr::drop_in_place" },
		{ "std::rt::lang_start::<()>::{closure#0}", "std::rt::lang_start::{closure#0}" },
		{ "core::array::<impl [T; N]>::map::<u8, 3>", "core::array::<impl [T; N]>::map" },
		{ "<alloc::vec::Vec<T>>::push", "<alloc::vec::Vec>::push" },
		{ "core::slice::<impl [T]>::len", NULL },
		/* Nothing to drop. */
		{ "<&T as core::fmt::Debug>::fmt", NULL },
		{ "<<T as a::A>::X as b::B>::f", NULL },
		{ "<[u8]>::len", NULL },
		{ "std::rt::lang_start::{{closure}}", NULL },
		{ "core::fmt::write", NULL },
	};
	TABLE(t);
}

/* Not demangled C++ or Rust: through as they are. */
TEST(other_names_kept)
{
	static const struct case_ t[] = {
		{ "", NULL },
		{ "main", NULL },
		{ "__libc_start_call_main", NULL },
		{ "foo.cold", NULL },
		{ "func (file.py:12)", NULL },
		{ "<module> (app.py:1)", NULL },
		{ "LazyCompile:*foo /path/x.js:3", NULL },
		{ "JS:*foo file:///x.js:3:10", NULL },
		{ "Builtin:ArgumentsAdaptorTrampoline", NULL },
		{ "Ljava/lang/Object;::<init>", NULL },
		{ "[unknown]", NULL },
		{ "[anon]", NULL },
		{ "[Missed User Stack]", NULL },
		{ "[libc.so.6]", NULL },
		{ "jit_spin_loop", NULL },
	};
	TABLE(t);
}

/* Cut short or unbalanced: kept, nothing read past the end. */
TEST(broken_kept)
{
	static const struct case_ t[] = {
		{ "std::vector<int", NULL },
		{ "std::vector<int>>::size()", NULL },
		{ "foo(int", NULL },
		{ "foo(int))", NULL },
		{ "foo)", NULL },
		{ "a::b<", NULL },
		{ "a::b::", NULL },
		{ "a:b()", NULL },
		{ "{lambda(int)#1", NULL },
		{ "f()::{lambda(int)#1", NULL },
		{ "foo(int) [clone .cold", NULL },
		{ "<alloc::vec::Vec<u8> as Drop", NULL },
		{ "a<(b]>::c()", NULL },
		{ "f<int>(", NULL },
		{ "f() &x", NULL },
		{ "int* ", NULL },
		{ "int*", NULL },
	};
	char deep[300], *p = deep;

	TABLE(t);
	/* Nested deeper than any real name: kept. */
	*p++ = 'f';
	for (int i = 0; i < 100; i++)
		*p++ = '<';
	for (int i = 0; i < 100; i++)
		*p++ = '>';
	strcpy(p, "()");
	CHECK(check_short(&(struct case_){ deep, NULL }));
}

TEST(buffer_size)
{
	const char *in = "std::vector<int, std::allocator<int> >::push_back(int const&)";
	char buf[64];

	/* "std::vector::push_back" and its NUL: 23 bytes. */
	memset(buf, 'x', sizeof(buf));
	CHECK_INT(demangle__shorten(in, buf, 22), 0);
	CHECK_INT(demangle__shorten(in, buf, 0), 0);
	CHECK_INT(demangle__shorten(in, buf, 23), 22);
	CHECK_STR(buf, "std::vector::push_back");
	CHECK(buf[23] == 'x');
}

int main(void)
{
	RUN(cxx_params_and_templates);
	RUN(cxx_return_types);
	RUN(cxx_operators);
	RUN(cxx_lambdas_and_local_names);
	RUN(cxx_qualifiers_tags_clones);
	RUN(rust);
	RUN(other_names_kept);
	RUN(broken_kept);
	RUN(buffer_size);
	return unit_summary();
}
