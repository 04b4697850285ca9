# npu-emu: the ccec driver runs g++; CMake's own C++ checks cover it.
set(CMAKE_CCE_COMPILER_WORKS 1 CACHE INTERNAL "")
