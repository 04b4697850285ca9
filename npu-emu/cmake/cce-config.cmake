# npu-emu: find_package(CCE) puts npu-emu's CCE language modules (cce_modules/) on
# CMAKE_MODULE_PATH, for projects that enable the CCE language (`project(x LANGUAGES CCE CXX)`,
# `set_source_files_properties(k.cpp PROPERTIES LANGUAGE CCE)`) without modules of their own.
# Projects that bring their own CMakeDetermineCCECompiler.cmake (as CANN's vendor samples do)
# need nothing from here: they find npu-emu's ccec on PATH or in
# ${ASCEND_HOME_PATH}/<arch>-linux/ccec_compiler/bin.

get_filename_component(_npuemu_cce_prefix "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(_npuemu_cce_modules "${_npuemu_cce_prefix}/compiler/tikcpp/ascendc_kernel_cmake/cce_modules")
if(NOT EXISTS "${_npuemu_cce_modules}/CMakeDetermineCCECompiler.cmake")
    message(FATAL_ERROR "CCE (npu-emu): ${_npuemu_cce_modules} has no CCE language modules; reinstall npu-emu (npu-emu install --prefix DIR)")
endif()
list(APPEND CMAKE_MODULE_PATH "${_npuemu_cce_modules}")
set(CCE_FOUND TRUE)
