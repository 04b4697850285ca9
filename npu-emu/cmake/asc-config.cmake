# npu-emu: find_package(ASC) for Ascend C single-source projects (CANN's lib64/cmake/asc-config.cmake).
#
#     find_package(ASC REQUIRED)                 # <prefix>/lib64/cmake is on CMAKE_PREFIX_PATH
#     project(demo LANGUAGES ASC CXX)            # after set_env.sh
#     add_executable(demo add.asc)
#
# Puts the ASC language modules (asc_modules/: CMakeDetermineASCCompiler.cmake, ...) on
# CMAKE_MODULE_PATH and defines ascendc_library / ascendc_fatbin_library for ASC sources
# (asc_modules/FindASC.cmake). The compiler is npu-emu's bisheng driver (<prefix>/bin/bisheng).

if(_NPUEMU_ASC_CONFIG_LOADED)
    return()
endif()

# <prefix>/lib64/cmake -> <prefix>
get_filename_component(_npuemu_asc_prefix "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(_npuemu_asc_modules "${_npuemu_asc_prefix}/compiler/tikcpp/ascendc_kernel_cmake/asc_modules")
if(NOT EXISTS "${_npuemu_asc_modules}/CMakeDetermineASCCompiler.cmake")
    message(FATAL_ERROR "ASC (npu-emu): ${_npuemu_asc_modules} has no ASC language modules; reinstall npu-emu (npu-emu install --prefix DIR)")
endif()
list(APPEND CMAKE_MODULE_PATH "${_npuemu_asc_modules}")
include("${_npuemu_asc_modules}/FindASC.cmake")
set(ASC_FOUND TRUE)
set(_NPUEMU_ASC_CONFIG_LOADED TRUE)
