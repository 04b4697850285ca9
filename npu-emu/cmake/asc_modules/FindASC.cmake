# npu-emu: the Ascend C library functions for ASC-language projects (after find_package(ASC)).
#
#   ascendc_library(target SHARED|STATIC sources...)   kernels (and host code) as a library
#   ascendc_fatbin_library(target sources...)          <target>.o, a kernel binary that
#                                                      aclrtBinaryLoadFromFile loads
#   ascendc_compile_definitions / ascendc_compile_options / ascendc_include_directories
#
# The sources are compiled as ASC (bisheng -x asc): kernels, their `<<<>>>` launches and
# their entries in the binary's kernel table.

get_filename_component(_npuemu_asc_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
if(NOT ASCEND_CANN_PACKAGE_PATH)
    set(ASCEND_CANN_PACKAGE_PATH "${_npuemu_asc_prefix}")
endif()

function(_npuemu_asc_interface target_name)
    target_include_directories(${target_name} INTERFACE
        "${_npuemu_asc_prefix}/include" "${_npuemu_asc_prefix}/compiler/tikcpp/tikcfw")
    target_link_directories(${target_name} INTERFACE "${_npuemu_asc_prefix}/lib64")
    target_link_libraries(${target_name} INTERFACE ascendcl dl)
endfunction()

function(ascendc_library target_name target_type)
    if(NOT target_type MATCHES "^(SHARED|STATIC)$")
        message(FATAL_ERROR "ascendc_library(${target_name} ${target_type} ...): target_type must be SHARED or STATIC")
    endif()
    if(NOT ARGN)
        message(FATAL_ERROR "ascendc_library(${target_name} ${target_type}): no source files given")
    endif()
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE ASC)
    add_library(${target_name} ${target_type} ${ARGN})
    set_target_properties(${target_name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    _npuemu_asc_interface(${target_name})
    include(GNUInstallDirs)
    install(TARGETS ${target_name}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

function(ascendc_fatbin_library target_name)
    if(NOT ARGN)
        message(FATAL_ERROR "ascendc_fatbin_library(${target_name}): no source files given")
    endif()
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE ASC)
    add_library(${target_name} MODULE ${ARGN})
    set_target_properties(${target_name} PROPERTIES PREFIX "" SUFFIX ".o" POSITION_INDEPENDENT_CODE ON)
endfunction()

function(ascendc_compile_definitions target_name target_scope)
    target_compile_definitions(${target_name} ${target_scope} ${ARGN})
endfunction()

# Options before -forward-options-to-host-compiler are the kernel compiler's, after it the host
# compiler's; both go to the one CPU compile (the driver drops the kernel compiler's own).
function(ascendc_compile_options target_name target_scope)
    set(_opts)
    foreach(_o IN LISTS ARGN)
        if(NOT _o STREQUAL "-forward-options-to-host-compiler")
            list(APPEND _opts "${_o}")
        endif()
    endforeach()
    if(_opts)
        target_compile_options(${target_name} ${target_scope} ${_opts})
    endif()
endfunction()

function(ascendc_include_directories target_name target_scope)
    target_include_directories(${target_name} ${target_scope} ${ARGN})
endfunction()
