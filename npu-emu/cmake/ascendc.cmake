# npu-emu: the Ascend C kernel build module, in place of CANN's
# ${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake.
#
# Vendor KernelLaunch projects do
#     include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)
#     ascendc_library(ascendc_kernels_${RUN_MODE} SHARED add_custom.cpp)
#     ascendc_compile_definitions(ascendc_kernels_${RUN_MODE} PRIVATE -DFOO)
#     target_link_libraries(main PRIVATE host_intf_pub ascendc_kernels_${RUN_MODE} ...)
# and include "aclrtlaunch_<kernel>.h" in host code. Here the kernels are compiled for the
# CPU with g++ against npu-emu's Ascend C headers (compiler/tikcpp/tikcfw) and launched on
# emulated AI cores by libascendcl.so:
#   - `npu-emu ascendc-stub` (bin/npu-emu of this install) reads each kernel source and
#     writes ${CMAKE_BINARY_DIR}/include/<target>/aclrtlaunch_<kernel>.h (where CANN puts
#     them) and ${CMAKE_BINARY_DIR}/auto_gen/<target>/<n>/<source>.npuemu.cpp;
#   - the library <target> is built from the .npuemu.cpp files (which include the sources);
#     its PUBLIC include directories carry the generated headers, and it links ascendcl.
#
# Functions: ascendc_library, ascendc_fatbin_library (a kernel binary for aclrtBinaryLoadFromFile),
# ascendc_compile_definitions, ascendc_compile_options, ascendc_include_directories.
# Targets: host_intf_pub (host compile/link settings, as CANN's). The CANN libraries the
# vendor link lines name but npu-emu does not ship (tiling_api, register, platform,
# ascendalog, ...) are empty archives in the build tree (see below).

if(DEFINED _NPUEMU_ASCENDC_CMAKE_INCLUDED)
    return()
endif()
set(_NPUEMU_ASCENDC_CMAKE_INCLUDED TRUE)

get_filename_component(ASCENDC_KERNEL_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
# <prefix>/compiler/tikcpp/ascendc_kernel_cmake -> <prefix>
get_filename_component(NPUEMU_PREFIX "${ASCENDC_KERNEL_CMAKE_DIR}/../../.." ABSOLUTE)
if(NOT ASCEND_CANN_PACKAGE_PATH)
    set(ASCEND_CANN_PACKAGE_PATH "${NPUEMU_PREFIX}")
endif()
set(NPUEMU_TIKCFW_DIR "${NPUEMU_PREFIX}/compiler/tikcpp/tikcfw")
set(NPUEMU_INCLUDE_DIR "${NPUEMU_PREFIX}/include")
set(NPUEMU_LIB_DIR "${NPUEMU_PREFIX}/lib64")
foreach(_d IN ITEMS "${NPUEMU_TIKCFW_DIR}" "${NPUEMU_INCLUDE_DIR}" "${NPUEMU_LIB_DIR}")
    if(NOT EXISTS "${_d}")
        message(FATAL_ERROR "npu-emu ascendc.cmake: ${_d} does not exist; this module must be used from an npu-emu install tree (npu-emu install --prefix DIR)")
    endif()
endforeach()
find_program(NPUEMU_TOOL npu-emu HINTS "${NPUEMU_PREFIX}/bin" NO_DEFAULT_PATH)
if(NOT NPUEMU_TOOL)
    find_program(NPUEMU_TOOL npu-emu)
endif()
if(NOT NPUEMU_TOOL)
    message(FATAL_ERROR "npu-emu ascendc.cmake: cannot find the npu-emu tool in ${NPUEMU_PREFIX}/bin or on PATH; it generates the aclrtlaunch_<kernel>.h headers")
endif()
if(NOT SOC_VERSION)
    set(SOC_VERSION "Ascend910B1")
endif()
# The device-code macros of SOC_VERSION's series, as CANN's kernel compiler predefines them
# (kernels choose code paths with `#if __NPU_ARCH__ == 2002` / `__CCE_AICORE__ == 220`); any
# other SoC name gets the Ascend910B (C220) ones, the series npu-emu emulates by default.
set(NPUEMU_KERNEL_DEFS __CCE_AICORE__=220 __DAV_C220__ __NPU_ARCH__=2201)
if(SOC_VERSION MATCHES "^[aA]scend910(A|B|PremiumA|ProA|ProB)?$")
    set(NPUEMU_KERNEL_DEFS __CCE_AICORE__=100 __DAV_C100__ __NPU_ARCH__=1001)
elseif(SOC_VERSION MATCHES "^[aA]scend(310[pP][0-9]*|610)$")
    set(NPUEMU_KERNEL_DEFS __CCE_AICORE__=200 __DAV_M200__ __NPU_ARCH__=2002)
elseif(SOC_VERSION MATCHES "^[aA]scend310B[0-9]$")
    set(NPUEMU_KERNEL_DEFS __CCE_AICORE__=300 __DAV_M300__ __NPU_ARCH__=3002)
elseif(SOC_VERSION MATCHES "^[aA]scend610Lite$")
    set(NPUEMU_KERNEL_DEFS __CCE_AICORE__=310 __DAV_M310__)
endif()
find_package(Threads REQUIRED)

# Scalar accesses through __gm__ pointers in kernel code are checked against the kernel's buffers
# (headers: npuemu/raw_access.h): g++ instruments every load and store of a kernel translation
# unit with a call npu-emu's headers define (no sanitizer runtime is linked). Other compilers
# build unchecked kernels, whose raw dereferences of device memory stop the process (SIGSEGV).
set(NPUEMU_GM_CHECK_OPTIONS
    "$<$<CXX_COMPILER_ID:GNU>:-fsanitize=kernel-address;--param=asan-instrumentation-with-call-threshold=0;--param=asan-stack=0;--param=asan-globals=0;-D__NPUEMU_GM_CHECK__=1>")

# CANN libraries that kernel-launch link lines name (ascendc_library's own interface and the
# vendor samples' executables: -ltiling_api -lregister -lplatform ...) but that npu-emu does
# not ship. Nothing of them is emulated, so they are empty archives in the build tree (not
# targets, so a project's own target of the same name still wins, as with CANN): a program
# that calls one of their functions fails to link with an undefined symbol naming it.
set(NPUEMU_EMPTY_LIB_DIR "${CMAKE_BINARY_DIR}/npuemu_empty_libs")
foreach(_l IN ITEMS tiling_api register platform ascendalog error_manager profapi
                    ge_common_base mmpa runtime ascend_dump c_sec runtime_camodel npu_drv)
    if(NOT EXISTS "${NPUEMU_EMPTY_LIB_DIR}/lib${_l}.a")
        file(WRITE "${NPUEMU_EMPTY_LIB_DIR}/lib${_l}.a" "!<arch>\n")
    endif()
endforeach()

# Host compile and link settings of CANN's host_intf_pub (the include and library
# directories of the install, position-independent code, the old libstdc++ string ABI).
if(NOT TARGET host_intf_pub)
    add_library(host_intf_pub INTERFACE)
    target_compile_options(host_intf_pub INTERFACE -fPIC)
    target_compile_definitions(host_intf_pub INTERFACE _GLIBCXX_USE_CXX11_ABI=0)
    target_include_directories(host_intf_pub INTERFACE "${ASCEND_CANN_PACKAGE_PATH}/include")
    target_link_directories(host_intf_pub INTERFACE "${ASCEND_CANN_PACKAGE_PATH}/lib64" "${NPUEMU_EMPTY_LIB_DIR}")
    target_link_options(host_intf_pub INTERFACE
        $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-pie>
        -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack)
endif()

# Keep the options g++ understands; CANN's kernel options for the bisheng compiler
# (--cce-*, -mllvm ..., --npu-arch ...) have no meaning for the CPU build.
function(_npuemu_host_options out)
    set(_keep)
    set(_drop)
    foreach(_o IN LISTS ARGN)
        if(_o MATCHES "^-(D|U|I|O|g|W|f|std=|m64|pthread|include)" OR _o MATCHES "^\\$<")
            list(APPEND _keep "${_o}")
        else()
            list(APPEND _drop "${_o}")
        endif()
    endforeach()
    if(_drop)
        message(STATUS "npu-emu: kernel compile options without meaning for the CPU build are ignored: ${_drop}")
    endif()
    set(${out} "${_keep}" PARENT_SCOPE)
endfunction()

function(ascendc_library target_name target_type)
    string(TOUPPER "${target_type}" _type)
    if(NOT _type MATCHES "^(SHARED|STATIC|OBJECT)$")
        message(FATAL_ERROR "ascendc_library(${target_name} ${target_type} ...): target_type ${target_type} is not supported; expected SHARED, STATIC or OBJECT")
    endif()
    if(NOT ARGN)
        message(FATAL_ERROR "ascendc_library(${target_name} ${target_type}): no kernel source files given")
    endif()
    set(_gen "${CMAKE_BINARY_DIR}/auto_gen/${target_name}")
    set(_inc "${CMAKE_BINARY_DIR}/include/${target_name}")
    file(MAKE_DIRECTORY "${_inc}")
    set(_incs "$<TARGET_PROPERTY:${target_name},INCLUDE_DIRECTORIES>")
    set(_generated)
    set(_n 0)
    foreach(_src IN LISTS ARGN)
        get_filename_component(_abs "${_src}" ABSOLUTE)
        get_filename_component(_stem "${_abs}" NAME_WE)
        get_filename_component(_dir "${_abs}" DIRECTORY)
        set(_out "${_gen}/${_n}")
        # Now, so the headers exist before anything that includes them is compiled ...
        execute_process(
            COMMAND "${NPUEMU_TOOL}" ascendc-stub --out-dir "${_out}" --include-dir "${_inc}"
                    "-I${CMAKE_CURRENT_SOURCE_DIR}" "-I${CMAKE_SOURCE_DIR}" "${_abs}"
            RESULT_VARIABLE _rc
            ERROR_VARIABLE _err)
        if(NOT _rc EQUAL 0)
            message(FATAL_ERROR "ascendc_library(${target_name}): npu-emu ascendc-stub failed for ${_abs}:\n${_err}")
        endif()
        # ... and at build time, when a source changes.
        add_custom_command(
            OUTPUT "${_out}/${_stem}.npuemu.cpp"
            COMMAND "${NPUEMU_TOOL}" ascendc-stub --out-dir "${_out}" --include-dir "${_inc}"
                    "$<$<BOOL:${_incs}>:-I$<JOIN:${_incs},;-I>>" "${_abs}"
            DEPENDS "${_abs}" "${NPUEMU_TOOL}"
            COMMENT "npu-emu ascendc-stub: launch stubs of ${_src}"
            COMMAND_EXPAND_LISTS
            VERBATIM)
        list(APPEND _generated "${_out}/${_stem}.npuemu.cpp")
        set_property(GLOBAL APPEND PROPERTY _NPUEMU_STUBS_${target_name} "${_abs}|${_out}")
        math(EXPR _n "${_n} + 1")
    endforeach()

    add_library(${target_name} ${_type} ${_generated})
    # Include directories added after this call (ascendc_include_directories,
    # target_include_directories) can hold the header of a tiling struct, which decides how
    # aclrtlaunch_<kernel>.h declares that parameter: generate once more at the end of the
    # directory's configuration, with the target's final include directories.
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
        # (EVAL: a deferred call's arguments are expanded when it runs, not now.)
        cmake_language(EVAL CODE
            "cmake_language(DEFER CALL _npuemu_regenerate_stubs [[${target_name}]] [[${_inc}]])")
    endif()
    set_target_properties(${target_name} PROPERTIES
        CXX_STANDARD 17
        CXX_STANDARD_REQUIRED ON
        POSITION_INDEPENDENT_CODE ON
        ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib"
        LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib")
    # The kernel sources' own directories (for their "..." includes), then the Ascend C and
    # ACL headers. The generated headers are for the host: PUBLIC, as in CANN.
    set(_srcdirs)
    foreach(_src IN LISTS ARGN)
        get_filename_component(_abs "${_src}" ABSOLUTE)
        get_filename_component(_dir "${_abs}" DIRECTORY)
        list(APPEND _srcdirs "${_dir}")
    endforeach()
    list(REMOVE_DUPLICATES _srcdirs)
    target_include_directories(${target_name}
        PRIVATE ${_srcdirs}
        PUBLIC "${_inc}" "${NPUEMU_INCLUDE_DIR}" "${NPUEMU_TIKCFW_DIR}")
    target_compile_definitions(${target_name} PRIVATE _GLIBCXX_USE_CXX11_ABI=0 ${NPUEMU_KERNEL_DEFS})
    # Optimised like CANN's device compile (-O3 there); options the project adds come after it
    # (ascendc_compile_options(... -O0 -g) still wins).
    target_compile_options(${target_name} PRIVATE -O2 ${NPUEMU_GM_CHECK_OPTIONS})
    if(NOT _type STREQUAL "OBJECT")
        target_link_directories(${target_name} PUBLIC "${NPUEMU_LIB_DIR}" "${NPUEMU_EMPTY_LIB_DIR}")
    endif()
    target_link_libraries(${target_name}
        PRIVATE Threads::Threads
        PUBLIC ascendcl
        INTERFACE register error_manager profapi ge_common_base ascendalog mmpa dl
        PUBLIC ascend_dump c_sec)
    if(NOT _type STREQUAL "OBJECT")
        include(GNUInstallDirs)
        install(TARGETS ${target_name}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
        install(DIRECTORY "${CMAKE_BINARY_DIR}/include/" DESTINATION include)
    endif()
endfunction()

function(_npuemu_regenerate_stubs target_name inc_dir)
    get_target_property(_dirs ${target_name} INCLUDE_DIRECTORIES)
    set(_flags "-I${CMAKE_CURRENT_SOURCE_DIR}" "-I${CMAKE_SOURCE_DIR}")
    foreach(_d IN LISTS _dirs)
        if(_d AND NOT _d MATCHES "\\$<")
            list(APPEND _flags "-I${_d}")
        endif()
    endforeach()
    get_property(_stubs GLOBAL PROPERTY _NPUEMU_STUBS_${target_name})
    foreach(_s IN LISTS _stubs)
        string(REPLACE "|" ";" _pair "${_s}")
        list(GET _pair 0 _abs)
        list(GET _pair 1 _out)
        execute_process(
            COMMAND "${NPUEMU_TOOL}" ascendc-stub --out-dir "${_out}" --include-dir "${inc_dir}"
                    ${_flags} "${_abs}"
            RESULT_VARIABLE _rc
            ERROR_VARIABLE _err)
        if(NOT _rc EQUAL 0)
            message(FATAL_ERROR "ascendc_library(${target_name}): npu-emu ascendc-stub failed for ${_abs}:\n${_err}")
        endif()
    endforeach()
endfunction()

# ascendc_fatbin_library(target sources...): a kernel binary, loaded at run time by
# aclrtBinaryLoadFromFile / aclrtBinaryLoadFromData and launched by kernel name (aclrtLaunchKernel*).
# CANN writes a device object ${CMAKE_INSTALL_PREFIX}/fatbin/<target>/<target>.o; npu-emu builds a
# shared object of the same name (the kernels compiled for the CPU, with their table of names and
# argument layouts, npuemu/fatbin.h) into ${CMAKE_BINARY_DIR}/fatbin/<target>/ and installs it
# there.
function(ascendc_fatbin_library target_name)
    if(NOT ARGN)
        message(FATAL_ERROR "ascendc_fatbin_library(${target_name}): no kernel source files given")
    endif()
    ascendc_library(${target_name} SHARED ${ARGN})
    set_target_properties(${target_name} PROPERTIES
        PREFIX ""
        SUFFIX ".o"
        LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/fatbin/${target_name}")
    install(FILES "$<TARGET_FILE:${target_name}>" DESTINATION "fatbin/${target_name}")
endfunction()

function(ascendc_compile_definitions target_name target_scope)
    if(ARGN)
        target_compile_definitions(${target_name} PRIVATE ${ARGN})
    endif()
endfunction()

function(ascendc_include_directories target_name target_scope)
    set(_dirs)
    foreach(_d IN LISTS ARGN)
        get_filename_component(_abs "${_d}" ABSOLUTE)
        list(APPEND _dirs "${_abs}")
    endforeach()
    if(_dirs)
        target_include_directories(${target_name} PRIVATE ${_dirs})
    endif()
endfunction()

# Options before -forward-options-to-host-compiler are the kernel compiler's, after it the
# host compiler's (CANN); both end up in the one g++ compile here.
function(ascendc_compile_options target_name target_scope)
    set(_opts)
    foreach(_o IN LISTS ARGN)
        if(NOT _o STREQUAL "-forward-options-to-host-compiler")
            list(APPEND _opts "${_o}")
        endif()
    endforeach()
    _npuemu_host_options(_keep ${_opts})
    if(_keep)
        target_compile_options(${target_name} PRIVATE ${_keep})
    endif()
endfunction()
