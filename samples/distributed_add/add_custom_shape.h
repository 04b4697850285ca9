/* The shape of the AddCustom job, shared by the kernel (add_custom.cpp) and the host (main.cpp):
 * TOTAL_LENGTH fp16 elements split evenly over USE_CORE_NUM AI cores (blockDim). */
#ifndef ADD_CUSTOM_SHAPE_H
#define ADD_CUSTOM_SHAPE_H

#include <cstdint>

constexpr uint32_t TOTAL_LENGTH = 8 * 2048;
constexpr uint32_t USE_CORE_NUM = 8;

#endif
