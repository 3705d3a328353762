/*
 * rng.h --- e2fragimg's deterministic random numbers.
 *
 * Every choice a workload makes (sizes, which recording to delete, which
 * writer runs next) comes from one of these generators, seeded from
 * --seed, so the same seed always builds the same image.  xoshiro256**
 * seeded through splitmix64: fast, well distributed, and the same on
 * every platform (no rand(), no libc state).
 */
#ifndef IMG_RNG_H
#define IMG_RNG_H

#include <math.h>
#include <stdint.h>

struct img_rng {
	uint64_t s[4];
};

/* A 64-bit mixing function (splitmix64's finalizer): distinct in, distinct out. */
static inline uint64_t rng_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Seed a generator from SEED and a STREAM number, so phases draw apart. */
static inline void rng_seed(struct img_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = rng_mix64(seed) ^ rng_mix64(stream + 0x5851f42d4c957f2dULL);
	int i;

	for (i = 0; i < 4; i++) {
		x = rng_mix64(x + (uint64_t)i);
		r->s[i] = x ? x : 1;
	}
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct img_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint64_t rng_below(struct img_rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	/* Lemire's multiply-shift: no modulo bias worth speaking of here. */
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [lo, hi] (inclusive). */
static inline uint64_t rng_range(struct img_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* Uniform double in (0, 1). */
static inline double rng_unit(struct img_rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* A standard normal deviate (Box-Muller; one of the pair is dropped). */
static inline double rng_normal(struct img_rng *r)
{
	double u1 = rng_unit(r), u2 = rng_unit(r);

	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif /* IMG_RNG_H */
