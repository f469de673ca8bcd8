// BIGSTEP_CUDA_CHECK(call): throws std::runtime_error with the call site and CUDA's message.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#define BIGSTEP_CUDA_CHECK(call)                                                                 \
  do {                                                                                           \
    const cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess)                                                                       \
      throw std::runtime_error(std::string(#call) + " failed at " + __FILE__ + ":" +             \
                               std::to_string(__LINE__) + ": " + cudaGetErrorString(e_));        \
  } while (0)
