find_program(CMAKE_CCE_COMPILER
    NAMES ccec
    HINTS "${ASCEND_INSTALL_PATH}/${CMAKE_SYSTEM_PROCESSOR}-linux/ccec_compiler/bin"
    PATHS $ENV{PATH}
    DOC "CCE compiler")
mark_as_advanced(CMAKE_CCE_COMPILER)
message(STATUS "CMAKE_CCE_COMPILER: ${CMAKE_CCE_COMPILER}")
set(CMAKE_CCE_SOURCE_FILE_EXTENSIONS cce;cpp)
set(CMAKE_CCE_COMPILER_ENV_VAR "CCE")
if(ASCEND_PRODUCT_TYPE STREQUAL "ascend910b")
    if(ASCEND_CORE_TYPE STREQUAL "AiCore")
        set(_CCE_ARCH_FLAG "--cce-aicore-arch=dav-c220-cube")
    else()
        set(_CCE_ARCH_FLAG "--cce-aicore-arch=dav-c220-vec")
    endif()
endif()
set(_CCE_DEVICE_FLAGS "--cce-auto-sync -mllvm -cce-aicore-stack-size=0x8000 -mllvm -cce-aicore-function-stack-size=0x8000 -mllvm -cce-aicore-record-overflow=true ${_CCE_ARCH_FLAG}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/CMakeCCECompiler.cmake.in
    ${CMAKE_PLATFORM_INFO_DIR}/CMakeCCECompiler.cmake @ONLY)
