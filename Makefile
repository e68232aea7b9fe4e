# Build and install libhurray_coo for C, C++ and Fortran users.
#   make                       # cargo build --release (as your user): library and tool
#   sudo make install PREFIX=/opt/hurray [DESTDIR=/tmp/stage]
#   make uninstall PREFIX=/opt/hurray
# `install` only copies what `make` built: it runs cargo only when nothing
# is built yet or a source is newer than the build (and then says so
# clearly if cargo is not on PATH, as under sudo).
# Installs: lib/libhurray_coo.so.VERSION with soname libhurray_coo.so.ABI and
# the usual symlinks, lib/libhurray_coo.a, include/hurray_coo.h, .hpp, .f90
# (Fortran module source: compile it with your own compiler),
# lib/pkgconfig/hurray_coo.pc and lib/cmake/hurray_coo/ (find_package), the
# command-line tool bin/hurray-coo, and the bindings share/hurray_coo/python/
# hurray_coo.py and share/hurray_coo/julia/HurrayCOO.jl.
# With an MPI installed (mpicc on PATH, or MPICC=...): `make mpi` builds
# libhurray_coo_mpi (mpi/), and `make install` installs it too when built:
# lib/libhurray_coo_mpi.so.VERSION (soname libhurray_coo_mpi.so.ABI),
# include/hurray_coo_mpi.h, lib/pkgconfig/hurray_coo_mpi.pc and
# lib/cmake/hurray_coo_mpi/.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
DESTDIR ?=
CARGO ?= cargo
MPICC ?= mpicc
PROFILE ?= release
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
BUILD := $(TARGET_DIR)/$(if $(filter dev,$(PROFILE)),debug,$(PROFILE))

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
ABI := $(shell sed -n 's/^pub const HURRAY_COO_ABI_VERSION: u32 = \([0-9]*\);/\1/p' src/ffi/consts.rs)
# What a static link of libhurray_coo.a needs besides libc (rustc
# --print native-static-libs, with the unwinder taken from libgcc_eh, the
# static one, so that `cc -static` links too: Rust catches panics at the
# C boundary, so it needs an unwinder, and libgcc_s has no static form).
NATIVE_LIBS := -lgcc_eh -lgcc -lutil -lrt -lpthread -lm -ldl -lc
REAL := libhurray_coo.so.$(VERSION)
SONAME := libhurray_coo.so.$(ABI)
# Relocatable packages: when LIBDIR and INCLUDEDIR are under PREFIX, the
# pkg-config and CMake files find the prefix from where they are installed
# (${pcfiledir}, CMAKE_CURRENT_LIST_DIR), so a moved prefix still works.
under = $(filter $(PREFIX)/%,$(1))
LIB_UP := $(subst $() ,/,$(foreach d,$(subst /, ,$(patsubst $(PREFIX)/%,%,$(LIBDIR))),..))
PC_PREFIX := $(if $(call under,$(LIBDIR)),$${pcfiledir}/../$(LIB_UP),$(PREFIX))
rel_to = $(if $(and $(call under,$(LIBDIR)),$(call under,$(2))),$(1)/$(patsubst $(PREFIX)/%,%,$(2)),$(2))
CMAKE_PREFIX := $(if $(call under,$(LIBDIR)),$${CMAKE_CURRENT_LIST_DIR}/../../$(LIB_UP),$(PREFIX))
SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
  -e 's|@PC_PREFIX@|$(PC_PREFIX)|g' -e 's|@PC_LIBDIR@|$(call rel_to,$${prefix},$(LIBDIR))|g' \
  -e 's|@PC_INCLUDEDIR@|$(call rel_to,$${prefix},$(INCLUDEDIR))|g' \
  -e 's|@CMAKE_PREFIX@|$(CMAKE_PREFIX)|g' \
  -e 's|@CMAKE_LIBDIR@|$(call rel_to,$${_hurray_prefix},$(LIBDIR))|g' \
  -e 's|@CMAKE_INCLUDEDIR@|$(call rel_to,$${_hurray_prefix},$(INCLUDEDIR))|g' \
  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
  -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|g' -e 's|@VERSION_MINOR@|$(VERSION_MINOR)|g' \
  -e 's|@ABI@|$(ABI)|g' -e 's|@NATIVE_LIBS@|$(NATIVE_LIBS)|g' \
  -e 's|@NATIVE_LIBS_CMAKE@|$(subst -l,,$(subst $() ,;,$(NATIVE_LIBS)))|g'

SOURCES := $(shell find src cli/src -name '*.rs') Cargo.toml cli/Cargo.toml Cargo.lock build.rs cbindgen.toml
LIBS := $(BUILD)/libhurray_coo.so $(BUILD)/libhurray_coo.a $(BUILD)/hurray-coo

MPI_REAL := libhurray_coo_mpi.so.$(VERSION)
MPI_SONAME := libhurray_coo_mpi.so.$(ABI)

.PHONY: all build install uninstall mpi
all: build

# `make` always asks cargo (which rebuilds only what changed).
build:
	@$(MAKE) --no-print-directory -B $(BUILD)/libhurray_coo.so

# Also links the soname next to the build output, so that programs linked
# in-tree (-L target/release) find libhurray_coo.so.ABI at run time.
$(LIBS) &: $(SOURCES)
	@command -v $(CARGO) >/dev/null 2>&1 || { \
	  echo "libhurray_coo is not built in $(BUILD) (or a source is newer than the build)," >&2; \
	  echo "and '$(CARGO)' is not on PATH. Build first as the user who has cargo:" >&2; \
	  echo "  make && sudo make install PREFIX=$(PREFIX)" >&2; exit 1; }
	$(CARGO) build --profile $(PROFILE) -p hurray-coo -p hurray-coo-cli
	ln -sf libhurray_coo.so $(BUILD)/$(SONAME)
	@touch $(LIBS)

# The MPI layer: C on the public API, compiled with the system's MPI.
MPI_SRC := $(wildcard mpi/src/*.c)
mpi: build
	$(MPICC) -std=c11 -O2 -Wall -Wextra -Werror -pedantic -fPIC -Iinclude -Impi/include \
	  -shared $(MPI_SRC) -L$(BUILD) -lhurray_coo -lm \
	  -Wl,-soname,$(MPI_SONAME) -o $(BUILD)/libhurray_coo_mpi.so
	mkdir -p $(BUILD)/mpi-objects
	for f in $(MPI_SRC); do \
	  $(MPICC) -std=c11 -O2 -Wall -Wextra -Werror -pedantic -Iinclude -Impi/include \
	    -c $$f -o $(BUILD)/mpi-objects/$$(basename $$f .c).o || exit 1; \
	done
	ar rcs $(BUILD)/libhurray_coo_mpi.a $(BUILD)/mpi-objects/*.o
	ln -sf libhurray_coo_mpi.so $(BUILD)/$(MPI_SONAME)

# What is installed carries no debug information (the build keeps it, for
# profiling in the tree): the shared library and the tool are stripped to
# what linking and running need, the archive of its debug information.
STRIP ?= strip
install: $(LIBS)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/cmake/hurray_coo $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR)
	install -m 755 $(BUILD)/hurray-coo $(DESTDIR)$(BINDIR)/hurray-coo
	$(STRIP) --strip-all $(DESTDIR)$(BINDIR)/hurray-coo
	install -m 755 $(BUILD)/libhurray_coo.so $(DESTDIR)$(LIBDIR)/$(REAL)
	$(STRIP) --strip-unneeded $(DESTDIR)$(LIBDIR)/$(REAL)
	ln -sf $(REAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libhurray_coo.so
	install -m 644 $(BUILD)/libhurray_coo.a $(DESTDIR)$(LIBDIR)/libhurray_coo.a
	$(STRIP) --strip-debug $(DESTDIR)$(LIBDIR)/libhurray_coo.a
	install -m 644 include/hurray_coo.h include/hurray_coo_probe.h include/hurray_coo.hpp include/hurray_coo.f90 $(DESTDIR)$(INCLUDEDIR)/
	install -d $(DESTDIR)$(DATADIR)/hurray_coo/python $(DESTDIR)$(DATADIR)/hurray_coo/julia
	install -m 644 bindings/python/hurray_coo.py $(DESTDIR)$(DATADIR)/hurray_coo/python/
	install -m 644 bindings/julia/HurrayCOO.jl $(DESTDIR)$(DATADIR)/hurray_coo/julia/
	$(SUBST) install/hurray_coo.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/hurray_coo.pc
	$(SUBST) install/hurray_cooConfig.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/hurray_coo/hurray_cooConfig.cmake
	$(SUBST) install/hurray_cooConfigVersion.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/hurray_coo/hurray_cooConfigVersion.cmake
	@if [ -e $(BUILD)/libhurray_coo_mpi.so ]; then \
	  set -x; \
	  install -d $(DESTDIR)$(LIBDIR)/cmake/hurray_coo_mpi && \
	  install -m 755 $(BUILD)/libhurray_coo_mpi.so $(DESTDIR)$(LIBDIR)/$(MPI_REAL) && \
	  ln -sf $(MPI_REAL) $(DESTDIR)$(LIBDIR)/$(MPI_SONAME) && \
	  ln -sf $(MPI_SONAME) $(DESTDIR)$(LIBDIR)/libhurray_coo_mpi.so && \
	  install -m 644 $(BUILD)/libhurray_coo_mpi.a $(DESTDIR)$(LIBDIR)/libhurray_coo_mpi.a && \
	  install -m 644 mpi/include/hurray_coo_mpi.h $(DESTDIR)$(INCLUDEDIR)/ && \
	  $(SUBST) install/hurray_coo_mpi.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/hurray_coo_mpi.pc && \
	  $(SUBST) install/hurray_coo_mpiConfig.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/hurray_coo_mpi/hurray_coo_mpiConfig.cmake && \
	  $(SUBST) install/hurray_cooConfigVersion.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/hurray_coo_mpi/hurray_coo_mpiConfigVersion.cmake; \
	fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(REAL) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libhurray_coo.so
	rm -f $(DESTDIR)$(LIBDIR)/libhurray_coo.a $(DESTDIR)$(LIBDIR)/pkgconfig/hurray_coo.pc
	rm -rf $(DESTDIR)$(LIBDIR)/cmake/hurray_coo
	rm -f $(DESTDIR)$(INCLUDEDIR)/hurray_coo.h $(DESTDIR)$(INCLUDEDIR)/hurray_coo_probe.h $(DESTDIR)$(INCLUDEDIR)/hurray_coo.hpp $(DESTDIR)$(INCLUDEDIR)/hurray_coo.f90
	rm -f $(DESTDIR)$(BINDIR)/hurray-coo
	rm -rf $(DESTDIR)$(DATADIR)/hurray_coo
	rm -f $(DESTDIR)$(LIBDIR)/$(MPI_REAL) $(DESTDIR)$(LIBDIR)/$(MPI_SONAME) $(DESTDIR)$(LIBDIR)/libhurray_coo_mpi.so
	rm -f $(DESTDIR)$(LIBDIR)/libhurray_coo_mpi.a $(DESTDIR)$(LIBDIR)/pkgconfig/hurray_coo_mpi.pc
	rm -rf $(DESTDIR)$(LIBDIR)/cmake/hurray_coo_mpi
	rm -f $(DESTDIR)$(INCLUDEDIR)/hurray_coo_mpi.h
