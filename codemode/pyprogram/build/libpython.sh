#!/usr/bin/env bash
# Stage 1 of build.sh (which sets the variables below and sources this):
# CPython's libpython and builtin modules for wasm32-wasi, into
# $cache/lib-$libkey. Its own file, since its hash is stage 1's key: an
# edit of build.sh or the runner relinks in seconds, an edit here rebuilds
# CPython (about 10 minutes on 2 cores).
lib=$cache/lib-$libkey

# progress PID LOG PATTERN TOTAL WHAT waits for PID, saying every 30 s how
# many lines of LOG match PATTERN (of about TOTAL), and returns its status.
progress() {
	local pid=$1 log=$2 pattern=$3 total=$4 what=$5 n=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		n=$((n + 1))
		if ((n % 30 == 0)); then
			say "  ... $(grep -c -- "$pattern" "$log" 2>/dev/null || true) of about $total $what ($((n / 60)) min $((n % 60)) s)"
		fi
	done
	wait "$pid"
}
if [ ! -f "$lib/done" ]; then
	say "building CPython $PY_DEB_VERSION for wasm32-wasi: about 10 minutes on 2 cores, once (cached in $lib)"
	rm -rf "$cache"/lib-*
	mkdir -p "$lib"

	# --- 1a. the source, through a private apt source list ----------------
	say "[1/4] fetching the source package python3.11=$PY_DEB_VERSION"
	apt_dir=$cache/apt
	rm -rf "$apt_dir"
	mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	# The machine's archives, as deb-src: one-line sources.list entries
	# and deb822 .sources files alike.
	if [ -f /etc/apt/sources.list ]; then
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >"$apt_dir/sources.list.d/machine.list"
	fi
	for f in /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$apt_dir/sources.list.d/machine.list"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*$/Types: deb-src/' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
	done
	apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list.d/machine.list"
		-o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
		-o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::Cache=$apt_dir/cache")
	[ "$(id -u)" = 0 ] && apt_opts+=(-o APT::Sandbox::User=root)
	apt-get "${apt_opts[@]}" update -qq
	dl=$cache/dl
	mkdir -p "$dl"
	(cd "$dl" && apt-get "${apt_opts[@]}" source --download-only -qq "python3.11=$PY_DEB_VERSION")
	src=$lib/src
	# apt checked the files against the archive's signed index; dpkg-source
	# has no keyring to check the .dsc's own signature, and says so: its
	# words go to the log.
	dpkg-source -x "$dl/python3.11_$PY_DEB_VERSION.dsc" "$src" >"$lib/source.log" 2>&1 ||
		{ cat "$lib/source.log" >&2; say "unpacking the source failed"; exit 1; }
	rm -rf "$apt_dir"

	# --- 1b. configure ----------------------------------------------------
	say "[2/4] configuring for wasm32-wasi"
	cc="clang --target=wasm32-wasi --sysroot=/usr -nostdlibinc -idirafter /usr/include/wasm32-wasi"
	b=$src/builddir/wasi
	mkdir -p "$b"
	# Not built: the test modules, and builtin modules a program has no
	# use for here (CJK codecs, XML, sockets and select, asyncio, which
	# fails without a socketpair, audio, crypt, the profiler).
	na=(_codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _multibytecodec
		pyexpat _elementtree _socket select _asyncio audioop _crypt _lsprof xxsubtype _curses _curses_panel)
	na_env=()
	for m in "${na[@]}"; do na_env+=("py_cv_module_$m=n/a"); done
	# -nostdlibinc: Debian's clang puts glibc's /usr/include on the wasm32
	# path otherwise, and configure reads glibc headers.
	(cd "$b" && env "${na_env[@]}" \
		CONFIG_SITE=../../Tools/wasm/config.site-wasm32-wasi \
		CC="$cc" CPP="$cc -E" \
		AR=llvm-ar RANLIB=llvm-ranlib \
		OPT="-DNDEBUG -fwrapv -O3 -Wall" \
		PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/nonexistent \
		../../configure -C --host=wasm32-unknown-wasi --build="$(../../config.guess)" \
		--with-build-python=/usr/bin/python3.11 --disable-test-modules >"$lib/configure.log" 2>&1) &
	progress "$!" "$lib/configure.log" '^checking' 890 "checks done" ||
		{ tail -30 "$lib/configure.log" >&2; say "configure failed (log: $lib/configure.log)"; exit 1; }

	# --- 1c. make: libpython and the builtin modules' libraries -----------
	say "[3/4] compiling libpython (the long part; make -j$(nproc), log in $lib/make.log)"
	targets=(libpython3.11.a Modules/_decimal/libmpdec/libmpdec.a)
	(cd "$b" && make -j"$(nproc)" "${targets[@]}" >"$lib/make.log" 2>&1) &
	progress "$!" "$lib/make.log" ' -c ' 190 "files compiled" ||
		{ tail -30 "$lib/make.log" >&2; say "make failed (log: $lib/make.log)"; exit 1; }
	# unicodectype.c's generated switch (_PyUnicode_ToNumeric) has 14 983
	# branches at -O3, past the host's limit of 12 000 per function; at -Os
	# it has 2 860. Recompile it so, and archive again.
	(cd "$b" && rm -f Objects/unicodectype.o &&
		make OPT="-DNDEBUG -fwrapv -Os -Wall" Objects/unicodectype.o >>"$lib/make.log" 2>&1 &&
		make libpython3.11.a >>"$lib/make.log" 2>&1) ||
		{ tail -30 "$lib/make.log" >&2; say "make failed (log: $lib/make.log)"; exit 1; }
	touch "$lib/done"
	say "libpython built in $(($(date +%s) - start)) s"
fi

