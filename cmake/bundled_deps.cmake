# Third-party libraries the system does not provide, built from the pinned
# upstream tarballs the sdist carries (third_party/, one per entry of
# scripts/dist/deps.lock, which holds each file's name and sha256), statically
# into <build>/bundled. A git clone has no third_party/: there every library
# comes from the system's development files (scripts/deps.sh), as before.
#
#   cclforge_dep(VAR PC-MODULE LOCK-NAME LIB)
#     pkg-config's PC-MODULE, else the lock's LOCK-NAME built by
#     cclforge_bundle_<LOCK-NAME>() into lib<LIB>.a. Sets CCLFORGE_<VAR>_BUNDLED
#     and, when bundled, the target cclforge_bundled_<LIB>.
#
# A recipe builds only what cclforge links, with the host's C compiler;
# ExternalProject checks the URL_HASH again before it unpacks.
include(ExternalProject)
# Sources keep their archive's timestamps (configure/make recipes must not
# think their generated files stale); the keyword exists from CMake 3.24.
set(CCLFORGE_BUNDLED_TIMES)
if(NOT CMAKE_VERSION VERSION_LESS 3.24)
  set(CCLFORGE_BUNDLED_TIMES DOWNLOAD_EXTRACT_TIMESTAMP TRUE)
endif()
option(CCLFORGE_BUNDLED_DEPS "Build every third-party library from the sdist's pinned tarballs, even those pkg-config finds (reproducible builds)" OFF)
set(CCLFORGE_BUNDLED_DIR "${CMAKE_SOURCE_DIR}/third_party" CACHE PATH
  "Where the tarballs pinned in scripts/dist/deps.lock lie (the sdist carries them in third_party/)")
set(CCLFORGE_DEPS_LOCK "${CMAKE_SOURCE_DIR}/scripts/dist/deps.lock")
set(CCLFORGE_BUNDLED_PREFIX "${CMAKE_BINARY_DIR}/bundled")
set(CCLFORGE_BUNDLED)
# make's -j for the configure/make recipes: CMAKE_BUILD_PARALLEL_LEVEL (which
# pip's build honours too), else the cores; 0 where /proc is absent (a chroot).
set(CCLFORGE_BUNDLED_JOBS "$ENV{CMAKE_BUILD_PARALLEL_LEVEL}")
if(NOT CCLFORGE_BUNDLED_JOBS MATCHES "^[1-9][0-9]*$")
  cmake_host_system_information(RESULT CCLFORGE_BUNDLED_JOBS QUERY NUMBER_OF_LOGICAL_CORES)
  if(NOT CCLFORGE_BUNDLED_JOBS GREATER 0)
    set(CCLFORGE_BUNDLED_JOBS 1)
  endif()
endif()
find_package(PkgConfig QUIET)

# The lock's line for NAME: its tarball and sha256 into OUT_FILE, OUT_SUM.
function(cclforge_lock_entry name out_file out_sum)
  file(STRINGS "${CCLFORGE_DEPS_LOCK}" lines REGEX "^${name}[ \t]")
  list(LENGTH lines n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "cclforge: ${CCLFORGE_DEPS_LOCK} has ${n} lines for '${name}' (wanted one: name, Debian version, tarball, sha256)")
  endif()
  string(REGEX REPLACE "[ \t]+" ";" fields "${lines}")
  list(GET fields 2 tarball)
  list(GET fields 3 sum)
  set(${out_file} "${CCLFORGE_BUNDLED_DIR}/${tarball}" PARENT_SCOPE)
  set(${out_sum} "${sum}" PARENT_SCOPE)
endfunction()

# The tools a configure/make recipe runs; found once, named when missing.
function(cclforge_bundled_tool var what)
  find_program(${var} NAMES ${ARGN})
  if(NOT ${var})
    message(FATAL_ERROR "cclforge: building the bundled ${what} needs ${ARGV2} (install it, or the library's development files)")
  endif()
endfunction()

#   cclforge_dep(... OPTIONAL): a library cclforge can do without: when
#     neither pkg-config nor the pinned source (or its recipe's tools) gives
#     it, CCLFORGE_<VAR>_BUNDLED stays OFF and <VAR>_FOUND unset, no error.
function(cclforge_dep var module lock_name lib)
  cmake_parse_arguments(PARSE_ARGV 4 arg "OPTIONAL" "" "")
  set(CCLFORGE_${var}_BUNDLED OFF PARENT_SCOPE)
  if(NOT CCLFORGE_BUNDLED_DEPS AND PKG_CONFIG_FOUND)
    pkg_check_modules(${var} QUIET IMPORTED_TARGET ${module})
    if(${var}_FOUND)
      return()
    endif()
  endif()
  cclforge_lock_entry(${lock_name} tarball sum)
  if(NOT EXISTS "${tarball}" AND arg_OPTIONAL)
    return()
  endif()
  if(NOT EXISTS "${tarball}")
    if(CCLFORGE_BUNDLED_DEPS)
      set(why "CCLFORGE_BUNDLED_DEPS is ON")
    elseif(PKG_CONFIG_FOUND)
      set(why "pkg-config does not find ${module}")
    else()
      set(why "there is no pkg-config to find ${module}")
    endif()
    message(FATAL_ERROR "cclforge: ${why}, and its pinned source ${tarball} is absent. "
      "Install its development files (Debian: bash scripts/deps.sh), or build from the sdist, "
      "which carries the pinned sources (scripts/dist.sh makes it).")
  endif()
  file(SHA256 "${tarball}" actual)
  if(NOT actual STREQUAL sum)
    message(FATAL_ERROR "cclforge: ${tarball} has sha256 ${actual}, but ${CCLFORGE_DEPS_LOCK} pins ${sum}: "
      "the bundled tarball was altered or replaced. Take it from an intact sdist (check SHA256SUMS).")
  endif()
  if(NOT COMMAND cclforge_bundle_${lock_name})
    message(FATAL_ERROR "cclforge: no recipe cclforge_bundle_${lock_name}() in cmake/bundled_deps.cmake for ${lock_name} of the lock")
  endif()
  set(prefix "${CCLFORGE_BUNDLED_PREFIX}")
  file(MAKE_DIRECTORY "${prefix}/include" "${prefix}/lib")
  # a recipe that cannot build here (a tool missing) sets CCLFORGE_BUNDLE_SKIPPED to why
  set(CCLFORGE_BUNDLE_SKIPPED "")
  cmake_language(CALL cclforge_bundle_${lock_name} bundled_${lock_name} "${tarball}" "${sum}" "${prefix}" "${prefix}/lib/lib${lib}.a")
  if(CCLFORGE_BUNDLE_SKIPPED)
    message(STATUS "cclforge: ${lock_name} not bundled: ${CCLFORGE_BUNDLE_SKIPPED}")
    return()
  endif()
  add_library(cclforge_bundled_${lib} STATIC IMPORTED GLOBAL)
  set_target_properties(cclforge_bundled_${lib} PROPERTIES
    IMPORTED_LOCATION "${prefix}/lib/lib${lib}.a" INTERFACE_INCLUDE_DIRECTORIES "${prefix}/include")
  add_dependencies(cclforge_bundled_${lib} bundled_${lock_name})
  set(CCLFORGE_${var}_BUNDLED ON PARENT_SCOPE)
  set(CCLFORGE_BUNDLED ${CCLFORGE_BUNDLED} ${lock_name} PARENT_SCOPE)
endfunction()

# --- the recipes: TARGET TARBALL SHA256 PREFIX ARCHIVE -----------------------
# Each is position-independent (the executable is PIE) and static.
set(CCLFORGE_BUNDLED_CFLAGS "CFLAGS=-O2 -fPIC")

function(cclforge_bundle_zlib target tarball sum prefix archive)
  cclforge_bundled_tool(CCLFORGE_MAKE zlib make gmake)
  ExternalProject_Add(${target} URL "${tarball}" URL_HASH SHA256=${sum} ${CCLFORGE_BUNDLED_TIMES} BUILD_IN_SOURCE 1
    CONFIGURE_COMMAND ${CMAKE_COMMAND} -E env CC=${CMAKE_C_COMPILER} ${CCLFORGE_BUNDLED_CFLAGS}
      ./configure --static --prefix=${prefix}
    BUILD_COMMAND ${CCLFORGE_MAKE} -j${CCLFORGE_BUNDLED_JOBS} libz.a
    INSTALL_COMMAND ${CCLFORGE_MAKE} install
    BUILD_BYPRODUCTS ${archive})
endfunction()

# The library without threads (as scripts/dist-deps.sh builds it; cclforge
# decompresses, its tests also compress).
function(cclforge_bundle_libzstd target tarball sum prefix archive)
  cclforge_bundled_tool(CCLFORGE_MAKE zstd make gmake)
  set(make ${CMAKE_COMMAND} -E env ${CCLFORGE_BUNDLED_CFLAGS} ${CCLFORGE_MAKE} -C lib CC=${CMAKE_C_COMPILER})
  ExternalProject_Add(${target} URL "${tarball}" URL_HASH SHA256=${sum} ${CCLFORGE_BUNDLED_TIMES} BUILD_IN_SOURCE 1
    CONFIGURE_COMMAND ""
    BUILD_COMMAND ${make} -j${CCLFORGE_BUNDLED_JOBS} ZSTD_LIB_MINIFY=0 libzstd.a-nomt
    INSTALL_COMMAND ${make} PREFIX=${prefix} LIBDIR=${prefix}/lib install-static install-includes
    BUILD_BYPRODUCTS ${archive})
endfunction()

# libcrypto only, by OpenSSL's own Configure (which guesses the target), with
# its assembly (SHA-256 with the CPU's extensions); no libssl, apps or tests.
function(cclforge_bundle_openssl target tarball sum prefix archive)
  cclforge_bundled_tool(CCLFORGE_MAKE libcrypto make gmake)
  cclforge_bundled_tool(CCLFORGE_PERL "libcrypto (OpenSSL's Configure)" perl)
  execute_process(COMMAND ${CCLFORGE_PERL} -MIPC::Cmd -e 1 RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cclforge: building the bundled libcrypto needs perl's IPC::Cmd for OpenSSL's Configure "
      "(Debian: perl; RHEL: perl-IPC-Cmd), or install libcrypto's development files (libssl-dev, openssl-devel)")
  endif()
  ExternalProject_Add(${target} URL "${tarball}" URL_HASH SHA256=${sum} ${CCLFORGE_BUNDLED_TIMES} BUILD_IN_SOURCE 1
    CONFIGURE_COMMAND ${CMAKE_COMMAND} -E env CC=${CMAKE_C_COMPILER} ${CCLFORGE_BUNDLED_CFLAGS}
      ${CCLFORGE_PERL} ./Configure no-shared no-tests no-dso no-engine no-async no-comp no-legacy no-module
      no-ui-console no-ssl no-dtls no-tls1 no-tls1_1 --prefix=${prefix} --libdir=lib --openssldir=/etc/ssl
    BUILD_COMMAND ${CCLFORGE_MAKE} -j${CCLFORGE_BUNDLED_JOBS} build_generated libcrypto.a
    INSTALL_COMMAND ${CMAKE_COMMAND} -E copy_directory include/openssl ${prefix}/include/openssl
      COMMAND ${CMAKE_COMMAND} -E copy libcrypto.a ${archive}
    BUILD_BYPRODUCTS ${archive})
endfunction()

# The CMake-built ones share these arguments (their own CMake may be old:
# CMAKE_POLICY_VERSION_MINIMUM lets CMake 4 configure them).
set(CCLFORGE_BUNDLED_CMAKE_ARGS -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  -DCMAKE_INSTALL_PREFIX=${CCLFORGE_BUNDLED_PREFIX} -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_PREFIX_PATH=${CCLFORGE_BUNDLED_PREFIX})

function(cclforge_bundle_cjson target tarball sum prefix archive)
  ExternalProject_Add(${target} URL "${tarball}" URL_HASH SHA256=${sum} ${CCLFORGE_BUNDLED_TIMES}
    CMAKE_ARGS ${CCLFORGE_BUNDLED_CMAKE_ARGS} -DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=OFF
      -DENABLE_CUSTOM_COMPILER_FLAGS=OFF
    BUILD_BYPRODUCTS ${archive})
endfunction()

# Deflate through zlib is all a wheel needs; no crypto, no tools. Linked
# (CCLFORGE_LIBZIP_LINKED) rather than loaded, as in the release.
function(cclforge_bundle_libzip target tarball sum prefix archive)
  set(after)
  if(TARGET bundled_zlib)
    set(after DEPENDS bundled_zlib)
  endif()
  ExternalProject_Add(${target} URL "${tarball}" URL_HASH SHA256=${sum} ${CCLFORGE_BUNDLED_TIMES} ${after}
    CMAKE_ARGS ${CCLFORGE_BUNDLED_CMAKE_ARGS} -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF
      -DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF
      -DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF
    BUILD_BYPRODUCTS ${archive})
endfunction()

# ISA-L's igzip (wheel verify's faster inflate) and its CRC-32: upstream's
# Makefile.unx, units igzip and crc, with the upstream fixes of
# scripts/dist/patches/libisal-*.patch. Optional (cclforge_dep ... OPTIONAL):
# its x86-64 code needs nasm, its aarch64 code the C compiler; elsewhere, or
# without nasm or patch, it is left out and zlib inflates.
function(cclforge_bundle_libisal target tarball sum prefix archive)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
    find_program(CCLFORGE_NASM nasm)
    if(NOT CCLFORGE_NASM)
      set(CCLFORGE_BUNDLE_SKIPPED "its x86-64 code needs nasm, which is not installed: zlib inflates" PARENT_SCOPE)
      return()
    endif()
    # CFLAGS_ replaces upstream's x86-64 flags, whose -fcf-protection an
    # older host compiler (GCC < 8) refuses; its nasm flags stay
    set(isal_args host_cpu=x86_64 AS=${CCLFORGE_NASM} "CFLAGS_=-fstack-protector")
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(isal_args host_cpu=aarch64 arch=aarch64)
  else()
    set(CCLFORGE_BUNDLE_SKIPPED "no code of its own for ${CMAKE_SYSTEM_PROCESSOR} here (x86_64, aarch64): zlib inflates" PARENT_SCOPE)
    return()
  endif()
  file(GLOB patches "${CMAKE_SOURCE_DIR}/scripts/dist/patches/libisal-*.patch")
  set(patch_command)
  if(patches)
    find_program(CCLFORGE_PATCH patch)
    if(NOT CCLFORGE_PATCH)
      set(CCLFORGE_BUNDLE_SKIPPED "its pinned source takes upstream fixes with patch, which is not installed: zlib inflates" PARENT_SCOPE)
      return()
    endif()
    foreach(p ${patches})
      list(APPEND patch_command COMMAND ${CCLFORGE_PATCH} -p1 --batch --forward -i ${p})
    endforeach()
    list(REMOVE_AT patch_command 0) # PATCH_COMMAND's first command has no COMMAND keyword
  endif()
  cclforge_bundled_tool(CCLFORGE_MAKE ISA-L make gmake)
  ExternalProject_Add(${target} URL "${tarball}" URL_HASH SHA256=${sum} ${CCLFORGE_BUNDLED_TIMES} BUILD_IN_SOURCE 1
    PATCH_COMMAND ${patch_command}
    CONFIGURE_COMMAND ""
    BUILD_COMMAND ${CCLFORGE_MAKE} -f Makefile.unx -j${CCLFORGE_BUNDLED_JOBS} units=igzip lib ${isal_args}
      "CC=${CMAKE_C_COMPILER} -fPIC"
    INSTALL_COMMAND ${CMAKE_COMMAND} -E make_directory ${prefix}/include/isa-l
      COMMAND ${CMAKE_COMMAND} -E copy include/igzip_lib.h include/crc.h ${prefix}/include/isa-l/
      COMMAND ${CMAKE_COMMAND} -E copy bin/isa-l.a ${archive}
    BUILD_BYPRODUCTS ${archive})
endfunction()
