# npu-emu: the ASC language (Ascend C sources with host and kernel code, *.asc) for CMake.
# Finds the compiler driver bisheng of the npu-emu install this file belongs to (or on PATH).

# <prefix>/compiler/tikcpp/ascendc_kernel_cmake/asc_modules -> <prefix>
get_filename_component(_npuemu_asc_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
if(NOT CMAKE_ASC_COMPILER)
    find_program(CMAKE_ASC_COMPILER NAMES bisheng
        HINTS "${_npuemu_asc_prefix}/bin" "$ENV{ASCEND_HOME_PATH}/bin"
        DOC "ASC compiler (npu-emu's bisheng driver)")
endif()
mark_as_advanced(CMAKE_ASC_COMPILER)
if(NOT CMAKE_ASC_COMPILER OR NOT EXISTS "${CMAKE_ASC_COMPILER}")
    message(FATAL_ERROR "ASC: the compiler driver bisheng is not in ${_npuemu_asc_prefix}/bin nor on PATH; source <npu-emu prefix>/set_env.sh first")
endif()
message(STATUS "CMAKE_ASC_COMPILER: ${CMAKE_ASC_COMPILER}")

if(NOT CMAKE_ASC_SOURCE_FILE_EXTENSIONS)
    set(CMAKE_ASC_SOURCE_FILE_EXTENSIONS asc)
endif()
set(CMAKE_ASC_COMPILER_ENV_VAR "ASC")
if(NOT CMAKE_ASC_STANDARD_DEFAULT)
    set(CMAKE_ASC_STANDARD_DEFAULT 17)
endif()

configure_file("${CMAKE_CURRENT_LIST_DIR}/CMakeASCCompiler.cmake.in"
    "${CMAKE_PLATFORM_INFO_DIR}/CMakeASCCompiler.cmake" @ONLY)
