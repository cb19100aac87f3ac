#!/bin/bash
# Installing: make install and make uninstall into a DESTDIR, and the Debian
# package that scripts/build-deb makes from the last commit, in a clone
# under $TRASH (the source tree stays as it is).  No root needed for the
# first; the package needs dpkg-buildpackage and lintian
# (scripts/install-deps).
. "$(dirname "$0")/lib.sh"

# make in the source tree, on the build directory the suite runs.
tree_make() {
	local out=${PROFILE_BUILD#"$PROFILE_TOP"/}
	make -s -C "$PROFILE_TOP" OUTPUT="$out" "$@"
}

test_expect_success 'make install DESTDIR PREFIX: the binary and the page, right modes; uninstall removes those two and nothing else' '
	dest=$TRASH/dest &&
	tree_make install DESTDIR="$dest" PREFIX=/opt/p >install.log &&
	(cd "$dest" && find . -type f -printf "%m %p\n" | sort) >files &&
	printf "644 ./opt/p/share/man/man8/profile.8\n755 ./opt/p/sbin/profile\n" >expect &&
	diff expect files &&
	cmp "$PROFILE_TOP/man/profile.8" "$dest/opt/p/share/man/man8/profile.8" &&
	"$dest/opt/p/sbin/profile" --version >version &&
	grep -E -x "profile [0-9]+\.[0-9]+\.[0-9]+" version &&
	echo mine >"$dest/opt/p/sbin/other" &&
	tree_make uninstall DESTDIR="$dest" PREFIX=/opt/p &&
	(cd "$dest" && find . ! -type d) >left &&
	echo ./opt/p/sbin/other >expect &&
	diff expect left
'

test_expect_success 'make install prefix=: the GNU spelling of PREFIX' '
	dest=$TRASH/dest2 &&
	tree_make install DESTDIR="$dest" prefix=/usr >install.log &&
	test -x "$dest/usr/sbin/profile" &&
	test -f "$dest/usr/share/man/man8/profile.8" &&
	tree_make uninstall DESTDIR="$dest" prefix=/usr &&
	[ -z "$(find "$dest" ! -type d)" ] || fail "left: $(find "$dest" ! -type d)"
'

test_expect_success DPKG_BUILDPACKAGE,LINTIAN 'Debian package: /usr/sbin/profile and its page, lintian clean, same version, source tree untouched' '
	git -C "$PROFILE_TOP" status --porcelain --ignored >before &&
	TMPDIR=$TRASH "$PROFILE_TOP/scripts/build-deb" "$TRASH/deb" >build.out 2>&1 || { cat build.out; false; } &&
	deb=$(ls "$TRASH"/deb/profile_*_amd64.deb) &&
	dpkg-deb -c "$deb" | awk "{ print \$1, \$NF }" >contents &&
	grep -x -- "-rwxr-xr-x ./usr/sbin/profile" contents &&
	grep -x -- "-rw-r--r-- ./usr/share/man/man8/profile.8.gz" contents &&
	{ ! grep -E "^E: " "$TRASH/deb/lintian.txt" || fail "lintian errors"; } &&
	v=$(dpkg-deb -f "$deb" Version) &&
	"$PROFILE" --version | grep -x "profile $v" &&
	dpkg-deb -f "$deb" Depends | grep -q libbpf1 &&
	mkdir x && dpkg-deb -x "$deb" x && x/usr/sbin/profile --version | grep -x "profile $v" &&
	git -C "$PROFILE_TOP" status --porcelain --ignored >after &&
	diff before after
'

test_done
