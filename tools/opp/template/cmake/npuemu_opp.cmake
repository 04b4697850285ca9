# npu-emu: build rules of a custom operator project (included by the project's CMakeLists.txt).
#
#   op_host/*.cpp    OpDefs (OP_ADD), tiling and shape functions   -> libcust_opapi.so with the
#                    aclnn API that ${ASCEND_CANN_PACKAGE_PATH}/tools/opbuild/op_build generates
#                    (autogen/aclnn_<op>.h / .cpp)
#   op_kernel/<op>.cpp   the kernel of each operator (<op> = the snake-case name of the OpDef type,
#                    AddCustom -> add_custom), compiled with the op_host tiling header that
#                    registers the operator's tiling struct (REGISTER_TILING_DATA_CLASS) -> a kernel
#                    binary <op>.o (ascendc_fatbin_library)
#   build_out/custom_opp_<os>_<arch>.run   the package: run it to install vendors/<vendor_name>/
#                    into $ASCEND_OPP_PATH (or --install-path=DIR)
if(NOT ASCEND_CANN_PACKAGE_PATH)
    if(DEFINED ENV{ASCEND_HOME_PATH})
        set(ASCEND_CANN_PACKAGE_PATH "$ENV{ASCEND_HOME_PATH}")
    else()
        message(FATAL_ERROR "ASCEND_CANN_PACKAGE_PATH is not set (CMakePresets.json) and ASCEND_HOME_PATH is not in the environment")
    endif()
endif()
set(_cann "${ASCEND_CANN_PACKAGE_PATH}")
set(_opbuild "${_cann}/tools/opbuild/op_build")
if(NOT EXISTS "${_opbuild}")
    message(FATAL_ERROR "ASCEND_CANN_PACKAGE_PATH=${_cann}: ${_opbuild} does not exist (an npu-emu install tree is expected: source <npu-emu>/set_env.sh, and set ASCEND_CANN_PACKAGE_PATH in CMakePresets.json to $ASCEND_HOME_PATH)")
endif()
if(NOT vendor_name)
    set(vendor_name customize)
endif()
if(NOT ASCEND_PYTHON_EXECUTABLE)
    set(ASCEND_PYTHON_EXECUTABLE python3)
endif()
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

file(GLOB _host_srcs "${CMAKE_SOURCE_DIR}/op_host/*.cpp")
if(NOT _host_srcs)
    message(FATAL_ERROR "no op_host/*.cpp in ${CMAKE_SOURCE_DIR}")
endif()
execute_process(COMMAND ${ASCEND_PYTHON_EXECUTABLE} "${_opbuild}" --scan ${_host_srcs}
    OUTPUT_VARIABLE _scan RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "op_build --scan failed: ${_err}")
endif()
string(REPLACE "\n" ";" _scan "${_scan}")
set(_ops)
set(_snakes)
foreach(_line IN LISTS _scan)
    if(_line MATCHES "^([A-Za-z0-9_]+) ([a-z0-9_]+)$")
        list(APPEND _ops "${CMAKE_MATCH_1}")
        list(APPEND _snakes "${CMAKE_MATCH_2}")
    endif()
endforeach()
if(NOT _ops)
    message(FATAL_ERROR "op_host/*.cpp register no operator (OP_ADD(OpType))")
endif()
message(STATUS "custom operators: ${_ops}")

set(_inc "${_cann}/include")
set(_autogen "${CMAKE_BINARY_DIR}/autogen")

# 1. the op_host code alone, which op_build loads to read the OpDefs.
add_library(cust_opmaster SHARED ${_host_srcs})
target_include_directories(cust_opmaster PRIVATE "${CMAKE_SOURCE_DIR}/op_host" "${_inc}")
set(_gen_srcs)
set(_gen_hdrs)
foreach(_s IN LISTS _snakes)
    list(APPEND _gen_srcs "${_autogen}/aclnn_${_s}.cpp")
    list(APPEND _gen_hdrs "${_autogen}/aclnn_${_s}.h")
endforeach()
add_custom_command(OUTPUT ${_gen_srcs} ${_gen_hdrs}
    COMMAND ${ASCEND_PYTHON_EXECUTABLE} "${_opbuild}" "$<TARGET_FILE:cust_opmaster>" "${_autogen}"
    DEPENDS cust_opmaster "${_opbuild}"
    COMMENT "op_build: the aclnn API of ${_ops}")

# 2. libcust_opapi.so: the generated API with the op_host code it calls.
add_library(cust_opapi SHARED ${_gen_srcs} ${_host_srcs})
target_include_directories(cust_opapi PRIVATE "${_autogen}" "${CMAKE_SOURCE_DIR}/op_host" "${_inc}")
target_link_directories(cust_opapi PRIVATE "${_cann}/lib64")
target_link_libraries(cust_opapi PRIVATE ascendcl nnopbase dl)

# 3. one kernel binary per operator.
if(NOT SOC_VERSION)
    set(SOC_VERSION "Ascend910B1")
endif()
include("${_cann}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
file(GLOB _host_hdrs "${CMAKE_SOURCE_DIR}/op_host/*.h")
set(_kernels)
list(LENGTH _ops _n)
math(EXPR _last "${_n} - 1")
foreach(_i RANGE ${_last})
    list(GET _ops ${_i} _op)
    list(GET _snakes ${_i} _s)
    set(_src "${CMAKE_SOURCE_DIR}/op_kernel/${_s}.cpp")
    if(NOT EXISTS "${_src}")
        message(FATAL_ERROR "operator ${_op}: its kernel op_kernel/${_s}.cpp does not exist")
    endif()
    ascendc_fatbin_library(${_s} "${_src}")
    target_include_directories(${_s} PRIVATE "${CMAKE_SOURCE_DIR}/op_kernel" "${CMAKE_SOURCE_DIR}/op_host")
    foreach(_h IN LISTS _host_hdrs)
        file(STRINGS "${_h}" _reg REGEX "REGISTER_TILING_DATA_CLASS[ \t]*\\([ \t]*${_op}[ \t]*[,_]")
        if(_reg)
            target_compile_options(${_s} PRIVATE "SHELL:-include \"${_h}\"")
        endif()
    endforeach()
    list(APPEND _kernels ${_s})
endforeach()

# 4. the package.
execute_process(COMMAND sh -c "grep -i '^id=' /etc/os-release | cut -d= -f2 | tr -d '\"'"
    OUTPUT_VARIABLE _os OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _os)
    set(_os linux)
endif()
set(_run "${CMAKE_BINARY_DIR}/custom_opp_${_os}_${CMAKE_SYSTEM_PROCESSOR}.run")
set(_stage "${CMAKE_BINARY_DIR}/_npuemu_package")
set(_v "${_stage}/packages/vendors/${vendor_name}")
set(_cmds
    COMMAND ${CMAKE_COMMAND} -E rm -rf "${_stage}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${_v}/op_api/include" "${_v}/op_api/lib" "${_v}/bin"
        "${_v}/op_impl/ai_core/tbe/op_tiling/lib/linux/${CMAKE_SYSTEM_PROCESSOR}"
    COMMAND ${CMAKE_COMMAND} -E copy ${_gen_hdrs} "${_v}/op_api/include/"
    COMMAND ${CMAKE_COMMAND} -E copy "$<TARGET_FILE:cust_opapi>" "${_v}/op_api/lib/"
    COMMAND ${CMAKE_COMMAND} -E copy "$<TARGET_FILE:cust_opmaster>"
        "${_v}/op_impl/ai_core/tbe/op_tiling/lib/linux/${CMAKE_SYSTEM_PROCESSOR}/libcust_opmaster_rt2.0.so")
foreach(_s IN LISTS _kernels)
    list(APPEND _cmds
        COMMAND ${CMAKE_COMMAND} -E make_directory "${_v}/op_impl/ai_core/tbe/kernel/ascend910b/${_s}"
        COMMAND ${CMAKE_COMMAND} -E copy "$<TARGET_FILE:${_s}>" "${_v}/op_impl/ai_core/tbe/kernel/ascend910b/${_s}/${_s}.o")
endforeach()
add_custom_command(OUTPUT "${_run}"
    ${_cmds}
    COMMAND sh "${CMAKE_SOURCE_DIR}/cmake/util/npuemu_makerun.sh" "${_stage}" "${vendor_name}" "${_run}"
    DEPENDS cust_opapi cust_opmaster ${_kernels} "${CMAKE_SOURCE_DIR}/cmake/util/npuemu_makerun.sh"
    COMMENT "packaging ${_run}")
add_custom_target(npuemu_opp_package ALL DEPENDS "${_run}")
