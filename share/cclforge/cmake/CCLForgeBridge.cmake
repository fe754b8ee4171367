# cclforge_add_nccl_bridge(): the ProcessGroupNCCL bridge as a target of a
# plugin's own CMake build. Installed with cclforge as
# <prefix>/share/cclforge/cmake/CCLForgeBridge.cmake (and mirrored into every
# cclforge build directory); include() it, then:
#
#   cclforge_add_nccl_bridge(<target>
#       PACKAGE torch_fl.comm._nccl_ext      # dotted package the extension lives in
#       NAME _flagos_nccl                    # module name (PyInit_<NAME>)
#       [SOURCE <plugin's bridge .cpp>...]    # one or several (one defines make_nccl_backend);
#                                            # default: cclforge's own bridge source
#       [VENDOR nvidia|rocm|dtk]
#       [TORCH_HEADERS <dir>] [VENDOR_LIBS <dir>] [LIBTORCH <dir>] [TOOLKIT <dir>]
#       [RPATH <$ORIGIN-entry>...]           # e.g. "$ORIGIN/../../lib_dcu"
#       [TOOLKIT_LIB <soname>...]            # provided by the host's toolkit, e.g. librccl.so.1
#       [INTO <dir>]                         # the tree holding the package (placed there too)
#       [OUT <dir>]                          # default ${CMAKE_CURRENT_BINARY_DIR}/<target>
#       [PYTHON <python>] [MAX_GLIBC <v>] [DOCKER <image>]
#       [ARGS <more cclforge bridge build options>...])
#
# It adds a target (built by default) running `cclforge bridge build`, which
# plans (the headers proven by the compiler's preprocessor), compiles, links
# and checks the extension in its installed layout, failing the build on any
# problem: the same plan `cclforge bridge plan` prints, cclforge's ABI guard
# linked in whatever the SOURCE. CCLFORGE_EXECUTABLE names the cclforge to run (default: the one
# beside this file, then PATH). The extension's path is in
# <OUT>/cclforge-build.json.
include_guard(GLOBAL)

# beside this file first: <prefix>/bin for an install, the build directory for a build tree
find_program(CCLFORGE_EXECUTABLE cclforge
  PATHS "${CMAKE_CURRENT_LIST_DIR}/../../../bin" "${CMAKE_CURRENT_LIST_DIR}/../../.."
  NO_DEFAULT_PATH
  DOC "cclforge, which builds the ProcessGroupNCCL bridge")
find_program(CCLFORGE_EXECUTABLE cclforge DOC "cclforge, which builds the ProcessGroupNCCL bridge")

function(cclforge_add_nccl_bridge target)
  set(one PACKAGE NAME VENDOR TORCH_HEADERS VENDOR_LIBS LIBTORCH TOOLKIT INTO OUT PYTHON MAX_GLIBC DOCKER)
  set(multi SOURCE RPATH TOOLKIT_LIB ARGS)
  cmake_parse_arguments(PARSE_ARGV 1 CFB "" "${one}" "${multi}")
  if(CFB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cclforge_add_nccl_bridge(${target}): unknown arguments ${CFB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT CFB_PACKAGE OR NOT CFB_NAME)
    message(FATAL_ERROR "cclforge_add_nccl_bridge(${target}): PACKAGE and NAME are required")
  endif()
  if(NOT CCLFORGE_EXECUTABLE)
    message(FATAL_ERROR "cclforge_add_nccl_bridge(${target}): cclforge not found; set CCLFORGE_EXECUTABLE")
  endif()
  if(NOT CFB_OUT)
    set(CFB_OUT "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  endif()
  set(cmd "${CCLFORGE_EXECUTABLE}" bridge build --package "${CFB_PACKAGE}" --name "${CFB_NAME}" -o "${CFB_OUT}")
  foreach(src IN LISTS CFB_SOURCE)
    list(APPEND cmd --source "${src}")
  endforeach()
  foreach(opt VENDOR TORCH_HEADERS VENDOR_LIBS LIBTORCH TOOLKIT INTO PYTHON MAX_GLIBC DOCKER)
    if(CFB_${opt})
      string(TOLOWER "${opt}" flag)
      string(REPLACE "_" "-" flag "${flag}")
      if(flag STREQUAL "toolkit")
        list(APPEND cmd --toolkit "${CFB_${opt}}")
      else()
        list(APPEND cmd "--${flag}" "${CFB_${opt}}")
      endif()
    endif()
  endforeach()
  foreach(entry IN LISTS CFB_RPATH)
    list(APPEND cmd --rpath "${entry}")
  endforeach()
  foreach(lib IN LISTS CFB_TOOLKIT_LIB)
    list(APPEND cmd --toolkit-lib "${lib}")
  endforeach()
  list(APPEND cmd ${CFB_ARGS})
  add_custom_target(${target} ALL
    COMMAND ${cmd}
    BYPRODUCTS "${CFB_OUT}/cclforge-build.json"
    DEPENDS ${CFB_SOURCE}
    COMMENT "cclforge bridge build: ${CFB_PACKAGE}.${CFB_NAME}"
    VERBATIM)
  set_target_properties(${target} PROPERTIES CCLFORGE_BRIDGE_DIR "${CFB_OUT}")
endfunction()
