# npu-emu: find_package(tikicpulib) for the CPU-debug build of Ascend C kernels (RUN_MODE
# cpu of the vendor KernelLaunch samples), in place of CANN's
# tools/tikicpulib/lib/cmake/tikicpulib-config.cmake.
#
#     set(CMAKE_PREFIX_PATH ${ASCEND_CANN_PACKAGE_PATH}/tools/tikicpulib/lib/cmake)
#     find_package(tikicpulib REQUIRED)
#     add_library(ascendc_kernels_cpu SHARED add_custom.cpp)
#     target_link_libraries(ascendc_kernels_cpu PRIVATE tikicpulib::${SOC_VERSION})
#
# tikicpulib::<SOC> exists for every SoC name CANN knows (and, with a warning, for any other
# value of SOC_VERSION). It carries what CANN's carries that matters on the CPU: the compile
# definitions (__CCE_KT_TEST__=1, ASCENDC_CPU_DEBUG=1, ASCENDC_DEBUG=1,
# _GLIBCXX_USE_CXX11_ABI=0 and the SoC series' __CCE_AICORE__ / __DAV_*__ / __NPU_ARCH__), -std=c++17, the
# include directories (compiler/tikcpp/tikcfw with tikicpulib.h and kernel_operator.h, and
# include/) and the library directory lib64. ICPU_RUN_KF runs blocks on threads (-pthread).

if(TARGET tikicpulib_npuemu_c220)
    return()
endif()

# <prefix>/tools/tikicpulib/lib/cmake/tikicpulib -> <prefix>
get_filename_component(_npuemu_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../../.." ABSOLUTE)
set(tikicpulib_FOUND TRUE)
set(tikicpulib_INCLUDE_DIRS "${_npuemu_prefix}/compiler/tikcpp/tikcfw;${_npuemu_prefix}/include")

if(NOT EXISTS "${_npuemu_prefix}/compiler/tikcpp/tikcfw/tikicpulib.h")
    message(FATAL_ERROR "tikicpulib (npu-emu): ${_npuemu_prefix}/compiler/tikcpp/tikcfw/tikicpulib.h does not exist; reinstall npu-emu (npu-emu install --prefix DIR)")
endif()

# SoC series as CANN groups them, and the definitions of each series.
set(_npuemu_soc_c100 ascend910 Ascend910 Ascend910A Ascend910B Ascend910PremiumA Ascend910ProA Ascend910ProB)
set(_npuemu_soc_m200 ascend610 Ascend610 ascend310p Ascend310P Ascend310P1 Ascend310P3 Ascend310P5 Ascend310P7)
set(_npuemu_soc_c220 ascend910B1 Ascend910B1 Ascend910B2 Ascend910B2C Ascend910B3 Ascend910B4 Ascend910B4-1
    Ascend910_9391 Ascend910_9381 Ascend910_9392 Ascend910_9382 Ascend910_9372 Ascend910_9362)
set(_npuemu_soc_m300 ascend310B1 Ascend310B1 Ascend310B2 Ascend310B3 Ascend310B4)
set(_npuemu_soc_m310 ascend610Lite Ascend610Lite)
set(_npuemu_def_c100 __CCE_AICORE__=100 __DAV_C100__ __NPU_ARCH__=1001)
set(_npuemu_def_m200 __CCE_AICORE__=200 __DAV_M200__ __NPU_ARCH__=2002)
set(_npuemu_def_c220 __CCE_AICORE__=220 __DAV_C220__ __NPU_ARCH__=2201)
set(_npuemu_def_m300 __CCE_AICORE__=300 __DAV_M300__ __NPU_ARCH__=3002)
set(_npuemu_def_m310 __CCE_AICORE__=310 __DAV_M310__)

# CANN libraries the vendor samples link in RUN_MODE cpu (-ltiling_api -lregister -lplatform
# -lascendalog -lc_sec) that npu-emu does not ship: empty archives in the build tree, on the
# targets' library path (see ascendc.cmake). ascendcl itself is real: -lascendcl from lib64.
set(_npuemu_empty "${CMAKE_BINARY_DIR}/npuemu_empty_libs")
foreach(_l IN ITEMS tiling_api register platform ascendalog error_manager profapi
                    ge_common_base mmpa runtime ascend_dump c_sec runtime_camodel npu_drv)
    if(NOT EXISTS "${_npuemu_empty}/lib${_l}.a")
        file(WRITE "${_npuemu_empty}/lib${_l}.a" "!<arch>\n")
    endif()
endforeach()

foreach(_series IN ITEMS c100 m200 c220 m300 m310)
    set(_t tikicpulib_npuemu_${_series})
    add_library(${_t} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${_t} PROPERTIES
        INTERFACE_COMPILE_DEFINITIONS "${_npuemu_def_${_series}};_GLIBCXX_USE_CXX11_ABI=0;__CCE_KT_TEST__=1;ASCENDC_CPU_DEBUG=1;ASCENDC_DEBUG=1"
        INTERFACE_COMPILE_OPTIONS "-std=c++17;-pthread"
        INTERFACE_INCLUDE_DIRECTORIES "${_npuemu_prefix}/compiler/tikcpp/tikcfw;${_npuemu_prefix}/include"
        INTERFACE_LINK_DIRECTORIES "${_npuemu_prefix}/lib64;${_npuemu_empty}"
        INTERFACE_LINK_OPTIONS "-pthread"
        # the cube's products (Mmad, Matmul) are computed in libascendcl (npuemu_gemm_f32)
        INTERFACE_LINK_LIBRARIES "ascendcl")
    foreach(_soc IN LISTS _npuemu_soc_${_series})
        if(NOT TARGET tikicpulib::${_soc})
            add_library(tikicpulib::${_soc} ALIAS ${_t})
        endif()
    endforeach()
endforeach()

# Any other SoC name a project passes (SOC_VERSION): the Ascend910B (C220) series, said once.
if(SOC_VERSION AND NOT TARGET tikicpulib::${SOC_VERSION})
    message(WARNING "tikicpulib (npu-emu): SOC_VERSION ${SOC_VERSION} is not a SoC name CANN's tikicpulib knows; tikicpulib::${SOC_VERSION} uses the Ascend910B1 (__CCE_AICORE__=220) settings")
    add_library(tikicpulib::${SOC_VERSION} ALIAS tikicpulib_npuemu_c220)
endif()

