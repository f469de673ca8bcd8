// Batched dense algebra from the CUDA libraries for the LM library path (docs/methods/pbfd.md §6):
// cuBLAS gemmStridedBatched and cuSOLVER potrfBatched / potrsBatched behind one float/double API.
// Matrices are column-major as the libraries expect; a row-major D x D block read column-major is
// its transpose, which the callers account for.
#pragma once
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

#define BIGSTEP_CUBLAS_CHECK(call)                                                                   \
  do {                                                                                               \
    const cublasStatus_t s_ = (call);                                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                                 \
      throw std::runtime_error(std::string(#call) + " failed at " + __FILE__ + ":" +                 \
                               std::to_string(__LINE__) + ": cublas status " + std::to_string(int(s_))); \
  } while (0)
#define BIGSTEP_CUSOLVER_CHECK(call)                                                                 \
  do {                                                                                               \
    const cusolverStatus_t s_ = (call);                                                              \
    if (s_ != CUSOLVER_STATUS_SUCCESS)                                                               \
      throw std::runtime_error(std::string(#call) + " failed at " + __FILE__ + ":" +                 \
                               std::to_string(__LINE__) + ": cusolver status " + std::to_string(int(s_))); \
  } while (0)

namespace bigstep {

/// C_b = op(A_b) op(B_b) for b < batch (alpha = 1, beta = 0), all column-major.
inline void gemm_strided_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                 const double* A, int lda, long long sA, const double* B, int ldb, long long sB,
                                 double* C, int ldc, long long sC, int batch) {
  const double one = 1, zero = 0;
  BIGSTEP_CUBLAS_CHECK(cublasDgemmStridedBatched(h, ta, tb, m, n, k, &one, A, lda, sA, B, ldb, sB, &zero, C, ldc, sC, batch));
}
inline void gemm_strided_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                 const float* A, int lda, long long sA, const float* B, int ldb, long long sB,
                                 float* C, int ldc, long long sC, int batch) {
  const float one = 1, zero = 0;
  BIGSTEP_CUBLAS_CHECK(cublasSgemmStridedBatched(h, ta, tb, m, n, k, &one, A, lda, sA, B, ldb, sB, &zero, C, ldc, sC, batch));
}

/// In-place Cholesky (lower) of batch n x n matrices; info[b] = 0 on success (device array).
inline void potrf_batched(cusolverDnHandle_t h, int n, double** A, int lda, int* info, int batch) {
  BIGSTEP_CUSOLVER_CHECK(cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, info, batch));
}
inline void potrf_batched(cusolverDnHandle_t h, int n, float** A, int lda, int* info, int batch) {
  BIGSTEP_CUSOLVER_CHECK(cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, info, batch));
}

/// Solves A_b x = b_b in place from potrf_batched's factors (one right-hand side each).
inline void potrs_batched(cusolverDnHandle_t h, int n, double** A, int lda, double** B, int ldb, int* info, int batch) {
  BIGSTEP_CUSOLVER_CHECK(cusolverDnDpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, A, lda, B, ldb, info, batch));
}
inline void potrs_batched(cusolverDnHandle_t h, int n, float** A, int lda, float** B, int ldb, int* info, int batch) {
  BIGSTEP_CUSOLVER_CHECK(cusolverDnSpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, A, lda, B, ldb, info, batch));
}

}  // namespace bigstep
