# npu-emu: the bisheng driver runs g++; CMake's own C++ checks cover it.
set(CMAKE_ASC_COMPILER_WORKS 1 CACHE INTERNAL "")
