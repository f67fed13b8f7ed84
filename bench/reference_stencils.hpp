// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP stencils for the stencil rows (rows_stencils.cpp): what a careful programmer writes
// by hand, with the same border handling as the kiln stencils they are compared with. Arrays are dense and
// row-major; `out` never aliases the input.
#pragma once

namespace ref {

/// out[i][j] = 0.25 * (4 neighbours) for interior elements; the border rows and columns of out are left as
/// they are (Border::skip into an existing output).
void jacobi2d(const double* in, double* out, long rows, long cols, int threads);
/// One explicit heat step u + c * (6 neighbours - 6 u) on an n0 x n1 x n2 grid, Border::nearest.
void heat3d(const double* u, double* out, long n0, long n1, long n2, double c, int threads);
/// out[i] = 0.25 in[i-1] + 0.5 in[i] + 0.25 in[i+1], Border::nearest.
void smooth1d(const double* in, double* out, long n, int threads);
/// The 5x5 correlation sum_{p,q} w[p+2][q+2] * in[i+p][j+q], Border::nearest.
void conv2d_5x5(const double* in, const double* w, double* out, long rows, long cols, int threads);

}  // namespace ref
