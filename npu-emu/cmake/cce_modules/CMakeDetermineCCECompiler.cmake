# npu-emu: the CCE language (Ascend C kernel sources compiled with ccec -xcce) for CMake.
get_filename_component(_npuemu_cce_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
if(NOT CMAKE_CCE_COMPILER)
    find_program(CMAKE_CCE_COMPILER NAMES ccec
        HINTS "${_npuemu_cce_prefix}/bin" "$ENV{ASCEND_HOME_PATH}/bin"
        DOC "CCE compiler (npu-emu's ccec driver)")
endif()
mark_as_advanced(CMAKE_CCE_COMPILER)
if(NOT CMAKE_CCE_COMPILER OR NOT EXISTS "${CMAKE_CCE_COMPILER}")
    message(FATAL_ERROR "CCE: the compiler driver ccec is not in ${_npuemu_cce_prefix}/bin nor on PATH; source <npu-emu prefix>/set_env.sh first")
endif()
if(NOT CMAKE_CCE_SOURCE_FILE_EXTENSIONS)
    set(CMAKE_CCE_SOURCE_FILE_EXTENSIONS cce;cpp)
endif()
set(CMAKE_CCE_COMPILER_ENV_VAR "CCEC")
configure_file("${CMAKE_CURRENT_LIST_DIR}/CMakeCCECompiler.cmake.in"
    "${CMAKE_PLATFORM_INFO_DIR}/CMakeCCECompiler.cmake" @ONLY)
