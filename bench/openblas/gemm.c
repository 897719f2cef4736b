/* gemm.c times OpenBLAS's cblas_sgemm (and cblas_dgemm) on the shapes that
 * internal/gemm's BenchmarkSgemm times, with the same transposes, row-major,
 * beta 0, for comparison with Plumb's Go GEMM in one run (bench/gemm.sh).
 * Not part of the Go build. Output: one line per shape,
 *   OpenBLAS/<s|d>gemm/<name> <GFLOP/s>
 * and first a line naming the kernel OpenBLAS picked at run time. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct shape {
	const char *name;
	int ta, tb, m, n, k;
};

/* Keep in step with benchShapes in internal/gemm/bench_test.go. */
static const struct shape shapes[] = {
	{"1024x1024x1024", 0, 0, 1024, 1024, 1024},
	{"64x784x128", 0, 0, 64, 128, 784},
	{"784x128_k64_TN", 1, 0, 784, 128, 64},
	{"64x784_k128_NT", 0, 1, 64, 784, 128},
	{"32x256x1024", 0, 0, 32, 1024, 256},
	{"32x1024x256", 0, 0, 32, 256, 1024},
	{"1x784x128", 0, 0, 1, 128, 784},
};

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* fill sets v to values in [-1, 1) from a fixed-seed LCG. */
static void fill(void *v, size_t n, int dbl) {
	unsigned long long s = 12345;
	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		double x = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
		if (dbl)
			((double *)v)[i] = x;
		else
			((float *)v)[i] = (float)x;
	}
}

/* run calls one GEMM, single or double precision. */
static void run(const struct shape *s, int dbl, void *a, void *b, void *c) {
	int lda = s->ta ? s->m : s->k, ldb = s->tb ? s->k : s->n;
	enum CBLAS_TRANSPOSE ta = s->ta ? CblasTrans : CblasNoTrans;
	enum CBLAS_TRANSPOSE tb = s->tb ? CblasTrans : CblasNoTrans;
	if (dbl)
		cblas_dgemm(CblasRowMajor, ta, tb, s->m, s->n, s->k, 1, a, lda, b, ldb, 0, c, s->n);
	else
		cblas_sgemm(CblasRowMajor, ta, tb, s->m, s->n, s->k, 1, a, lda, b, ldb, 0, c, s->n);
}

int main(int argc, char **argv) {
	/* Minimum seconds per shape, as go test's -benchtime. */
	double minTime = argc > 1 ? atof(argv[1]) : 1.0;
	printf("# OpenBLAS %s; core %s; threads %d\n", openblas_get_config(), openblas_get_corename(),
	       openblas_get_num_threads());
	for (int dbl = 0; dbl < 2; dbl++) {
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			const struct shape *s = &shapes[i];
			size_t sz = dbl ? sizeof(double) : sizeof(float);
			void *a = malloc((size_t)s->m * s->k * sz), *b = malloc((size_t)s->k * s->n * sz);
			void *c = malloc((size_t)s->m * s->n * sz);
			fill(a, (size_t)s->m * s->k, dbl);
			fill(b, (size_t)s->k * s->n, dbl);
			run(s, dbl, a, b, c); /* warm-up: threads, pages, caches */
			long iters = 0;
			double t0 = now(), t;
			do {
				run(s, dbl, a, b, c);
				iters++;
				t = now() - t0;
			} while (t < minTime);
			printf("OpenBLAS/%cgemm/%s %.2f\n", dbl ? 'd' : 's', s->name,
			       2.0 * s->m * s->n * s->k * iters / t / 1e9);
			free(a);
			free(b);
			free(c);
		}
	}
	return 0;
}
