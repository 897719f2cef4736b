package qgemm

// Reference computes c[i*ldc+j] = Σ_p (a[i*lda+p] − zpA)·b[p*ldb+j] for
// i < m, j < n, p < k with the textbook triple loop, in int32 as the
// kernels do (exact for the sizes PackB accepts). It is the plain
// definition the packed kernels are tested against; it takes any int8
// weights, including those outside the 7-bit range PackB accepts, and
// does not check its arguments.
func Reference(m, n, k int, a []uint8, lda int, zpA uint8, b []int8, ldb int, c []int32, ldc int) {
	for i := range m {
		for j := range n {
			var s int32
			for p := range k {
				s += (int32(a[i*lda+p]) - int32(zpA)) * int32(b[p*ldb+j])
			}
			c[i*ldc+j] = s
		}
	}
}

// ColSums returns the column sums of B (k×n, row stride ldb), the
// zero-point correction's colsum[j] = Σ_p B[p][j].
func ColSums(k, n int, b []int8, ldb int) []int32 {
	s := make([]int32, n)
	for p := range k {
		for j, v := range b[p*ldb : p*ldb+n] {
			s[j] += int32(v)
		}
	}
	return s
}
